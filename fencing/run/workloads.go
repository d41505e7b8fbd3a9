package run

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// The writer's log directory: a hostPath per node and run, so that a
// writer's log outlives its pod (the rehearsal's stale writer is deleted
// while its node is cut off) and the run's agent on the node serves it.
const (
	hostLogRoot   = "/var/log/fenceproof" // on the node; one directory per run below
	writerLogDir  = "/var/log/fenceproof-writer"
	logVolumeName = "fenceproof-log"
)

// writerSpec is one writer: a one-replica StatefulSet named by its id.
type writerSpec struct {
	id    string
	nodes []string // where it may run (its first node first)
	sts   *appsv1.StatefulSet
}

// template is the user's pod template, or the storage kind's default:
// a pod template and the claims of its volumes (a StatefulSet's
// volumeClaimTemplates).
type template struct {
	pod    corev1.PodTemplateSpec
	claims []corev1.PersistentVolumeClaim
}

// loadTemplate reads a YAML file holding a Pod, a PodTemplate or a
// StatefulSet.
func loadTemplate(path string) (template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return template{}, err
	}
	var kind struct{ Kind string }
	if err := yaml.Unmarshal(b, &kind); err != nil {
		return template{}, fmt.Errorf("%s: %w", path, err)
	}
	var t template
	switch kind.Kind {
	case "Pod":
		var p corev1.Pod
		err = yaml.UnmarshalStrict(b, &p)
		t.pod = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: p.Labels, Annotations: p.Annotations}, Spec: p.Spec}
	case "PodTemplate":
		var p corev1.PodTemplate
		err = yaml.UnmarshalStrict(b, &p)
		t.pod = p.Template
	case "StatefulSet":
		var s appsv1.StatefulSet
		err = yaml.UnmarshalStrict(b, &s)
		t.pod, t.claims = s.Spec.Template, s.Spec.VolumeClaimTemplates
	default:
		return t, fmt.Errorf("%s: kind %q: want a Pod, a PodTemplate or a StatefulSet", path, kind.Kind)
	}
	if err != nil {
		return t, fmt.Errorf("%s: %w", path, err)
	}
	if len(t.pod.Spec.Containers) == 0 {
		return t, fmt.Errorf("%s: no container", path)
	}
	return t, nil
}

// defaultTemplate is the storage kind's writer, which the run's image
// carries. resolved holds what the run looked up: the refstore address,
// the Ceph mon addresses, the name of the keyring Secret it copied.
func (r *runner) defaultTemplate(resolved map[string]string) template {
	c := corev1.Container{Name: "writer", Image: r.cfg.Image, ImagePullPolicy: corev1.PullIfNotPresent}
	var t template
	switch r.cfg.Storage {
	case StoragePath:
		c.Command = []string{"/usr/local/bin/fenceproof", "path-writer", "--dir=/data"}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(r.cfg.VolumeSize)}},
		}}
		if r.cfg.StorageClass != "" {
			claim.Spec.StorageClassName = &r.cfg.StorageClass
		}
		t.claims = []corev1.PersistentVolumeClaim{claim}
	case StorageLibrados:
		c.Image = r.cfg.LibradosImage
		c.Command = []string{"/usr/local/bin/fenceproof", "ceph-writer", "--mon-host=" + resolved["mon_host"],
			"--user=" + r.cfg.CephUser, "--keyring=/etc/fenceproof-ceph/keyring", "--pool=" + r.cfg.CephPool}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "ceph-keyring", MountPath: "/etc/fenceproof-ceph", ReadOnly: true}}
		t.pod.Spec.Volumes = []corev1.Volume{{Name: "ceph-keyring", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: resolved["keyring_secret"], Items: []corev1.KeyToPath{{Key: resolved["keyring_key"], Path: "keyring"}}}}}}
	case StorageRefstore:
		c.Command = []string{"/usr/local/bin/fenceproof", "writer", "--server=" + resolved["refstore"]}
	}
	t.pod.Spec.Containers = []corev1.Container{c}
	t.pod.Spec.TerminationGracePeriodSeconds = ptr(int64(5))
	return t
}

// writerStatefulSet is writer id from template t, allowed on nodes: the
// contract's environment, the log directory, the run's labels, and
// OnDelete updates (the rehearsal widens the node affinity of a running
// writer without restarting it; its replacement gets the new one).
func (r *runner) writerStatefulSet(t template, id string, nodes []string) *appsv1.StatefulSet {
	labels := map[string]string{LabelRun: r.name, LabelWriter: id, LabelRole: "writer", partOf: "fenceproof"}
	pod := *t.pod.DeepCopy()
	pod.Labels = merge(pod.Labels, labels)
	r.contractEnv(&pod.Spec, id, contract.ModeWrite)
	setNodes(&pod.Spec, nodes)
	claims := make([]corev1.PersistentVolumeClaim, len(t.claims))
	for i, c := range t.claims {
		claims[i] = *c.DeepCopy()
		claims[i].Labels = merge(claims[i].Labels, map[string]string{LabelRun: r.name, partOf: "fenceproof"})
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: r.cfg.Namespace, Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			Replicas:             ptr(int32(1)),
			ServiceName:          id,
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{LabelRun: r.name, LabelWriter: id}},
			Template:             pod,
			VolumeClaimTemplates: claims,
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			PodManagementPolicy:  appsv1.ParallelPodManagement,
		},
	}
}

// readerPod reads writer w's records back on node: its pod template in
// read mode, with its claims as plain volumes (the writer is stopped).
func (r *runner) readerPod(w *writerSpec, node string) *corev1.Pod {
	spec := *w.sts.Spec.Template.Spec.DeepCopy()
	for _, c := range w.sts.Spec.VolumeClaimTemplates {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: c.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name + "-" + w.id + "-0"}}})
	}
	spec.RestartPolicy = corev1.RestartPolicyNever
	i := writerContainer(&spec)
	spec.Containers[i].Env = setEnv(spec.Containers[i].Env, corev1.EnvVar{Name: contract.EnvMode, Value: contract.ModeRead},
		corev1.EnvVar{Name: contract.EnvRead, Value: w.id})
	spec.Containers[i].LivenessProbe, spec.Containers[i].ReadinessProbe, spec.Containers[i].StartupProbe = nil, nil, nil
	spec.Affinity = nil
	spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: w.id + "-read", Namespace: r.cfg.Namespace,
			Labels: map[string]string{LabelRun: r.name, LabelWriter: w.id, LabelRole: "reader", partOf: "fenceproof"}},
		Spec: spec,
	}
}

// contractEnv gives the writer container the contract's environment and
// the log directory.
func (r *runner) contractEnv(spec *corev1.PodSpec, id, mode string) {
	i := writerContainer(spec)
	c := &spec.Containers[i]
	c.Env = setEnv(c.Env,
		corev1.EnvVar{Name: contract.EnvWriter, Value: id},
		corev1.EnvVar{Name: contract.EnvNode, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		corev1.EnvVar{Name: contract.EnvMode, Value: mode},
		corev1.EnvVar{Name: contract.EnvLogDir, Value: writerLogDir},
		corev1.EnvVar{Name: contract.EnvInterval, Value: r.cfg.Interval.String()})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: logVolumeName, MountPath: writerLogDir})
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: logVolumeName, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
		Path: hostLogRoot + "/" + r.name, Type: ptr(corev1.HostPathDirectoryOrCreate)}}})
}

// writerContainer is the index of the container named "writer", else 0.
func writerContainer(spec *corev1.PodSpec) int {
	for i, c := range spec.Containers {
		if c.Name == "writer" {
			return i
		}
	}
	return 0
}

// setEnv sets vars in env, replacing those of the same name.
func setEnv(env []corev1.EnvVar, vars ...corev1.EnvVar) []corev1.EnvVar {
	out := make([]corev1.EnvVar, 0, len(env)+len(vars))
	for _, e := range env {
		keep := true
		for _, v := range vars {
			keep = keep && e.Name != v.Name
		}
		if keep {
			out = append(out, e)
		}
	}
	return append(out, vars...)
}

// setNodes restricts a pod to nodes: a required node affinity term (ANDed
// with each of the template's own terms).
func setNodes(spec *corev1.PodSpec, nodes []string) {
	req := corev1.NodeSelectorRequirement{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: nodes}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || len(na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}
	}
	terms := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for i := range terms {
		exprs := terms[i].MatchExpressions[:0:0]
		for _, e := range terms[i].MatchExpressions {
			if e.Key != req.Key {
				exprs = append(exprs, e)
			}
		}
		terms[i].MatchExpressions = append(exprs, req)
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// agentPort is where `fenceproof fencing agent` listens.
const agentPort = 8479

// agentPod is the run's agent on node: its clock and the writers' log
// copies (fencing/clock.Agent). It tolerates every taint: it must stay on
// a node that is cut off and declared out of service.
func (r *runner) agentPod(node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: r.name + "-agent-" + shortHash(node), Namespace: r.cfg.Namespace,
			Labels: map[string]string{LabelRun: r.name, LabelRole: "agent", partOf: "fenceproof"}},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{"kubernetes.io/hostname": node},
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: ptr(int64(1)),
			Containers: []corev1.Container{{
				Name: "agent", Image: r.cfg.Image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"/usr/local/bin/fenceproof", "fencing", "agent", "--listen=:" + strconv.Itoa(agentPort), "--root=/logs"},
				Env:     []corev1.EnvVar{{Name: contract.EnvNode, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}},
				Ports:   []corev1.ContainerPort{{Name: "agent", ContainerPort: agentPort}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/time", Port: intstr.FromInt32(agentPort)}},
					PeriodSeconds: 1},
				VolumeMounts: []corev1.VolumeMount{{Name: "logs", MountPath: "/logs"}},
			}},
			Volumes: []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: hostLogRoot, Type: ptr(corev1.HostPathDirectoryOrCreate)}}}},
		},
	}
}

// shortHash names a node in an object name (node names may be long).
func shortHash(s string) string {
	h := contract.Checksum([]byte(s))
	return strings.ToLower(strconv.FormatUint(uint64(h), 36))
}

// waitPod waits until pod is Running (or, with done, Succeeded or Failed).
func (r *runner) waitPod(ctx context.Context, name string, timeout time.Duration, done bool) (*corev1.Pod, error) {
	var p *corev1.Pod
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		var err error
		p, err = r.cs.CoreV1().Pods(r.cfg.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			switch ph := p.Status.Phase; {
			case done && (ph == corev1.PodSucceeded || ph == corev1.PodFailed):
				return p, nil
			case !done && ph == corev1.PodRunning && p.Status.PodIP != "":
				return p, nil
			}
		}
		select {
		case <-ctx.Done():
			return p, fmt.Errorf("pod %s/%s: not %s after %s: %s", r.cfg.Namespace, name, map[bool]string{true: "finished", false: "running"}[done], timeout, podState(p))
		case <-time.After(time.Second):
		}
	}
}

// podState says why a pod is not running, for error messages.
func podState(p *corev1.Pod) string {
	if p == nil {
		return "not found"
	}
	s := fmt.Sprintf("phase %s on %q", p.Status.Phase, p.Spec.NodeName)
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			s += fmt.Sprintf("; %s: %s", c.Type, c.Message)
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Waiting != nil {
			s += fmt.Sprintf("; %s waiting: %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
		}
		if c.State.Terminated != nil {
			s += fmt.Sprintf("; %s terminated: exit %d %s", c.Name, c.State.Terminated.ExitCode, c.State.Terminated.Message)
		}
	}
	return s
}
