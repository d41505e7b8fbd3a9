package image

import (
	"context"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// The world of the in-cluster cases: two reference drivers, each a pod with
// the csi-addons sidecar on a worker, serving its CSI-Addons socket in the
// kubelet plugin directory named after the driver, as a vendor's node plugin
// does. deploy/sanity-job/example targets the faithful one.
const (
	namespace = "fenceproof-image-e2e"
	sidecarSA = "fenceproof-image-e2e-sidecar"
	// socketName is the socket in the plugin directory (the example's
	// sanity.yaml: unix:///csi/csi-addons.sock).
	socketName = "csi-addons.sock"
	paramKey   = "clusterID"
)

// referenceDriver is one deployed driver: its id (its pod is driver-<id>,
// its CSI-Addons name and plugin directory <id>.reference.fenceproof.io), its
// node, its faults and the secret and parameter it requires.
type referenceDriver struct {
	id, node    string
	faults      []string
	secretKey   string // the key of its one required secret (userKey)
	secretValue string
	param       string // the value of clusterID it requires
}

func (d referenceDriver) name() string      { return d.id + ".reference.fenceproof.io" }
func (d referenceDriver) podName() string   { return "driver-" + d.id }
func (d referenceDriver) pluginDir() string { return "/var/lib/kubelet/plugins/" + d.name() }

// secretsYAML is the driver's (and the suite's) secrets file.
func (d referenceDriver) secretsYAML() string {
	return fmt.Sprintf("%s: %q\n", d.secretKey, d.secretValue)
}

// daemonSet is the driver as a vendor's node plugin: a DaemonSet, here on
// its one node. (The sidecar wants the pod to have an owner: it names and
// owns its CSIAddonsNode after it.)
func (d referenceDriver) daemonSet() *appsv1.DaemonSet {
	l := map[string]string{"app.kubernetes.io/name": d.podName()}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: d.podName(), Namespace: namespace, Labels: l},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: d.podSpec()},
		},
	}
}

func (d referenceDriver) podSpec() corev1.PodSpec {
	args := []string{"/usr/local/bin/fenceproof", "driver",
		"--endpoint=unix:///csi/" + socketName,
		"--backend=memory",
		"--state=/var/lib/fenceproof/fences.db",
		"--secrets-file=/etc/fenceproof/secrets.yaml",
		"--require-param=" + paramKey + "=" + d.param,
		"--name=" + d.name(),
		"--log-format=json"}
	for _, f := range d.faults {
		args = append(args, "--fault="+f)
	}
	dirType := corev1.HostPathDirectoryOrCreate
	return corev1.PodSpec{
		NodeSelector:                  map[string]string{"kubernetes.io/hostname": d.node},
		ServiceAccountName:            sidecarSA,
		TerminationGracePeriodSeconds: ptr(int64(5)),
		Containers: []corev1.Container{
			{
				Name:            "driver",
				Image:           *flagDriver,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         args,
				VolumeMounts: []corev1.VolumeMount{
					{Name: "plugin-dir", MountPath: "/csi"},
					{Name: "state", MountPath: "/var/lib/fenceproof"},
					{Name: "secrets", MountPath: "/etc/fenceproof", ReadOnly: true},
				},
			},
			fencekind.SidecarContainer(*flagSidecar, "plugin-dir", "/csi/"+socketName),
		},
		Volumes: []corev1.Volume{
			{Name: "plugin-dir", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: d.pluginDir(), Type: &dirType}}},
			{Name: "state", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "secrets", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: d.podName(), DefaultMode: ptr(int32(0o400))}}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// deployDrivers installs the csi-addons CRDs (the sidecar registers a
// CSIAddonsNode), the sidecar's RBAC and the drivers' pods, and waits until
// each sidecar has registered its driver: it reached the driver through
// the socket in the plugin directory.
func deployDrivers(ctx context.Context, ds ...referenceDriver) error {
	res, err := resources.New(cluster.Config.Client().RESTConfig())
	if err != nil {
		return err
	}
	if err := decoder.DecodeEachFile(ctx, os.DirFS(*flagDeploy), "crds.yaml", decoder.CreateIgnoreAlreadyExists(res)); err != nil {
		return fmt.Errorf("csi-addons CRDs from %s: %w (make cluster-image copies them)", *flagDeploy, err)
	}
	if err := removeDrivers(ctx); err != nil {
		return err
	}
	if err := e2e.CreateNamespace(ctx, k.CS, namespace, map[string]string{"app.kubernetes.io/part-of": "fenceproof"}); err != nil {
		return err
	}
	sa, role, binding := fencekind.SidecarRBAC(namespace, sidecarSA)
	if _, err := k.CS.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := k.CS.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := k.CS.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, d := range ds {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: d.podName(), Namespace: namespace},
			StringData: map[string]string{"secrets.yaml": d.secretsYAML()}}
		if _, err := k.CS.CoreV1().Secrets(namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := k.CS.AppsV1().DaemonSets(namespace).Create(ctx, d.daemonSet(), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, d := range ds {
		p, err := runningPod(ctx, d)
		if err != nil {
			return err
		}
		if err := waitRegistered(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// runningPod waits until the driver's DaemonSet runs its pod on its node.
func runningPod(ctx context.Context, d referenceDriver) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := k.CS.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + d.podName()})
		if err != nil || len(l.Items) != 1 || l.Items[0].Status.Phase != corev1.PodRunning {
			return false, nil
		}
		pod = &l.Items[0]
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the pod of DaemonSet %s does not run on %s after 3 minutes", d.podName(), d.node)
	}
	return pod, nil
}

// waitRegistered waits for the CSIAddonsNode the pod's sidecar registers
// (it records the pod's UID on it).
func waitRegistered(ctx context.Context, p *corev1.Pod) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := k.Dyn.Resource(fencekind.CSIAddonsNodeGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, n := range l.Items {
			if n.GetAnnotations()[fencekind.CreatedByAnnotation] == string(p.UID) {
				logf("the csi-addons sidecar of %s registered CSIAddonsNode %s", p.Name, n.GetName())
				return true, nil
			}
		}
		last = fmt.Sprintf("%d CSIAddonsNodes, none of pod %s", len(l.Items), p.Name)
		return false, nil
	})
	if err != nil {
		b, _ := k.PodLogs(ctx, namespace, p.Name, "csi-addons", false)
		return fmt.Errorf("the sidecar of %s registered no CSIAddonsNode (%s); its log:\n%s", p.Name, last, b)
	}
	return nil
}

// removeDrivers deletes what deployDrivers created (also an earlier run's).
func removeDrivers(ctx context.Context) error {
	k.RemoveCSIAddonsNodes(ctx, namespace)
	for _, err := range []error{
		k.CS.RbacV1().ClusterRoleBindings().Delete(ctx, sidecarSA, metav1.DeleteOptions{}),
		k.CS.RbacV1().ClusterRoles().Delete(ctx, sidecarSA, metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return e2e.DeleteNamespace(ctx, k.CS, namespace, 3*time.Minute)
}
