package csiproxyadmission

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/internal/e2e"
)

const (
	fixture   = "../../fixtures/csiproxy/admission-policy.yaml"
	allowedSA = "csi-node"
	otherSA   = "workload"
)

// fixtureObjects reads the policy, binding and ConfigMap of the fixture.
func fixtureObjects() (*admv1.ValidatingAdmissionPolicy, *admv1.ValidatingAdmissionPolicyBinding, *corev1.ConfigMap) {
	b, err := os.ReadFile(fixture)
	Expect(err).NotTo(HaveOccurred())
	var (
		p  admv1.ValidatingAdmissionPolicy
		pb admv1.ValidatingAdmissionPolicyBinding
		cm corev1.ConfigMap
	)
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		var meta metav1.TypeMeta
		Expect(yaml.Unmarshal(doc, &meta)).To(Succeed())
		switch meta.Kind {
		case "ValidatingAdmissionPolicy":
			Expect(yaml.UnmarshalStrict(doc, &p)).To(Succeed())
		case "ValidatingAdmissionPolicyBinding":
			Expect(yaml.UnmarshalStrict(doc, &pb)).To(Succeed())
		case "ConfigMap":
			Expect(yaml.UnmarshalStrict(doc, &cm)).To(Succeed())
		}
	}
	Expect(p.Name).NotTo(BeEmpty(), "policy in %s", fixture)
	Expect(pb.Name).NotTo(BeEmpty(), "binding in %s", fixture)
	Expect(cm.Name).NotTo(BeEmpty(), "ConfigMap in %s", fixture)
	return &p, &pb, &cm
}

// shape is one pod of the table, its case ID and whether the policy must
// admit it.
type shape struct {
	id    string
	name  string
	admit bool
	pod   func() *corev1.Pod
}

// namespace is the run's own namespace (a fresh name per run: a cluster
// may still be finalizing an earlier run's).
var namespace = fmt.Sprintf("fenceproof-csiproxy-adm-%d", time.Now().Unix()%1000000)

const pipe = `\\.\pipe\csi-proxy-disk-v1`

func basePod(sa string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "adm-", Namespace: namespace},
		Spec: corev1.PodSpec{
			ServiceAccountName: sa,
			// never scheduled on a Linux kind node; the pods are dry-run anyway
			NodeSelector: map[string]string{"kubernetes.io/os": "windows"},
			Containers:   []corev1.Container{{Name: "plugin", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

func withPipe(p *corev1.Pod, volume, path string, containers ...int) *corev1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path}}})
	for _, i := range containers {
		c := &p.Spec.Containers[i]
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volume, MountPath: path})
	}
	return p
}

func privileged(p *corev1.Pod, i int) *corev1.Pod {
	t := true
	p.Spec.Containers[i].SecurityContext = &corev1.SecurityContext{Privileged: &t}
	return p
}

func hostProcess(p *corev1.Pod) *corev1.Pod {
	t, user := true, `NT AUTHORITY\SYSTEM`
	p.Spec.HostNetwork = true
	p.Spec.SecurityContext = &corev1.PodSecurityContext{WindowsOptions: &corev1.WindowsSecurityContextOptions{HostProcess: &t, RunAsUserName: &user}}
	return p
}

var shapes = []shape{
	{"CSIPROXY-ADM-001", "no hostPath at all", true, func() *corev1.Pod { return basePod(otherSA) }},
	{"CSIPROXY-ADM-002", "unrelated hostPath, unprivileged", true, func() *corev1.Pod { return withPipe(basePod(otherSA), "logs", `C:\var\log`, 0) }},
	{"CSIPROXY-ADM-003", "pipe, unprivileged container", false, func() *corev1.Pod { return withPipe(basePod(allowedSA), "pipe", pipe, 0) }},
	{"CSIPROXY-ADM-004", "pipe, privileged container, allowed service account", true, func() *corev1.Pod { return privileged(withPipe(basePod(allowedSA), "pipe", pipe, 0), 0) }},
	{"CSIPROXY-ADM-005", "pipe, privileged container, other service account", false, func() *corev1.Pod { return privileged(withPipe(basePod(otherSA), "pipe", pipe, 0), 0) }},
	{"CSIPROXY-ADM-006", "pipe, privileged container, default service account", false, func() *corev1.Pod { return privileged(withPipe(basePod(""), "pipe", pipe, 0), 0) }},
	{"CSIPROXY-ADM-007", "pipe, HostProcess pod, allowed service account", true, func() *corev1.Pod { return hostProcess(withPipe(basePod(allowedSA), "pipe", pipe, 0)) }},
	{"CSIPROXY-ADM-008", "pipe in upper case, unprivileged", false, func() *corev1.Pod {
		return withPipe(basePod(allowedSA), "pipe", `\\.\PIPE\CSI-PROXY-DISK-V1`, 0)
	}},
	{"CSIPROXY-ADM-009", "pipe with forward slashes, unprivileged", false, func() *corev1.Pod {
		return withPipe(basePod(allowedSA), "pipe", `//./pipe/csi-proxy-volume-v1`, 0)
	}},
	{"CSIPROXY-ADM-010", `pipe through \\?\, unprivileged`, false, func() *corev1.Pod {
		return withPipe(basePod(allowedSA), "pipe", `\\?\pipe\csi-proxy-filesystem-v1`, 0)
	}},
	{"CSIPROXY-ADM-011", "the whole pipe namespace, unprivileged", false, func() *corev1.Pod { return withPipe(basePod(allowedSA), "pipes", `\\.\pipe\`, 0) }},
	{"CSIPROXY-ADM-012", "pipe in an unprivileged init container, privileged main container", false, func() *corev1.Pod {
		p := privileged(withPipe(basePod(allowedSA), "pipe", pipe, 0), 0)
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "registry.k8s.io/pause:3.10",
			VolumeMounts: []corev1.VolumeMount{{Name: "pipe", MountPath: pipe}}}}
		return p
	}},
	{"CSIPROXY-ADM-013", "two volumes: privileged container mounts the pipe, unprivileged sidecar only the other", true, func() *corev1.Pod {
		p := basePod(allowedSA)
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "registrar", Image: "registry.k8s.io/pause:3.10"})
		p = withPipe(p, "registration", `C:\var\lib\kubelet\plugins_registry`, 1)
		return privileged(withPipe(p, "pipe", pipe, 0), 0)
	}},
	{"CSIPROXY-ADM-014", "two volumes: unprivileged sidecar mounts the second, a pipe", false, func() *corev1.Pod {
		p := basePod(allowedSA)
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "registrar", Image: "registry.k8s.io/pause:3.10"})
		p = privileged(withPipe(p, "registration", `C:\var\lib\kubelet\plugins_registry`, 0), 0)
		return withPipe(p, "pipe", `\\.\pipe\csi-proxy-smb-v1`, 1)
	}},
	{"CSIPROXY-ADM-015", "pipe declared, mounted by no container, allowed service account", true, func() *corev1.Pod { return withPipe(basePod(allowedSA), "pipe", pipe) }},
	{"CSIPROXY-ADM-016", "pipe declared, mounted by no container, other service account", false, func() *corev1.Pod { return withPipe(basePod(otherSA), "pipe", pipe) }},
}

// admissionCases is the suite's case table: one case per shape, then the
// ephemeral container. IDs are stable (reports and CI history refer to
// them) and never reused; TestCaseTable checks the table against the specs.
var admissionCases = e2e.Cases{Suite: "csiproxyadmission", Prefix: "CSIPROXY-ADM", List: append(shapeCases(),
	e2e.Case{ID: "CSIPROXY-ADM-017", Area: "ephemeral-container", Cluster: e2e.Shared,
		Title: "rejects an unprivileged ephemeral container mounting the pipe, admits a privileged one"})}

func shapeCases() []e2e.Case {
	var out []e2e.Case
	for _, sh := range shapes {
		out = append(out, e2e.Case{ID: sh.id, Area: "pod-shape", Cluster: e2e.Shared, Title: sh.title()})
	}
	return out
}

// title is what the shape's case proves: "admits: ..." or "rejects: ...".
func (sh shape) title() string {
	return map[bool]string{true: "admits", false: "rejects"}[sh.admit] + ": " + sh.name
}

func dryRun(ctx context.Context, p *corev1.Pod) error {
	_, err := cs.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

var _ = Describe("csi-proxy pipe admission policy", Ordered, ContinueOnFailure, func() {
	BeforeAll(func(ctx SpecContext) {
		p, pb, cm := fixtureObjects()
		// Per-run names. On a bare kube-apiserver v1.32.4 the first run after
		// the API server starts passes; a later run in the same API server
		// lifetime never finds its parameters ("no params found"), also
		// when the policy is kept and only updated: the ConfigMap parameter
		// informer appears stuck after the first binding and ConfigMap are
		// deleted. Restarting kube-apiserver clears it.
		p.Name, pb.Name, cm.Name = p.Name+"-"+namespace, pb.Name+"-"+namespace, cm.Name+"-"+namespace
		pb.Spec.PolicyName, pb.Spec.ParamRef.Name = p.Name, cm.Name
		cm.Data["serviceAccounts"] = "kube-system/csi-node-win, " + namespace + "/" + allowedSA
		// The fixture's binding is cluster-wide; here it is narrowed to this
		// run's namespace, so that a shared cluster's other pods never meet
		// it (with parameterNotFoundAction Deny, a binding whose ConfigMap
		// the API server has not seen yet denies every pod it covers).
		pb.Spec.MatchResources = &admv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"fenceproof.io/csiproxy-admission": namespace}}}
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{"fenceproof.io/csiproxy-admission": namespace}}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, sa := range []string{allowedSA, otherSA, "default"} {
			_, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
			Expect(err).To(Or(Succeed(), WithTransform(apierrors.IsAlreadyExists, BeTrue())))
		}
		adm := cs.AdmissionregistrationV1()
		_, err = cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = adm.ValidatingAdmissionPolicies().Create(ctx, p, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		_, err = adm.ValidatingAdmissionPolicyBindings().Create(ctx, pb, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_ = adm.ValidatingAdmissionPolicyBindings().Delete(ctx, pb.Name, metav1.DeleteOptions{})
			_ = adm.ValidatingAdmissionPolicies().Delete(ctx, p.Name, metav1.DeleteOptions{})
			_ = cs.CoreV1().ConfigMaps(cm.Namespace).Delete(ctx, cm.Name, metav1.DeleteOptions{})
			_ = cs.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{})
		})
		// The API server compiled every expression at creation. Where a
		// controller manager runs (kind), the policy's type check must also
		// come back without warnings; a bare API server never fills it in.
		var checked *admv1.TypeChecking
		Eventually(func() *admv1.TypeChecking {
			got, err := adm.ValidatingAdmissionPolicies().Get(ctx, p.Name, metav1.GetOptions{})
			if err == nil {
				checked = got.Status.TypeChecking
			}
			return checked
		}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(Or(BeNil(), Not(BeNil())))
		if checked == nil {
			logf("policy %s has no type-checking status (no controller manager?): relying on the admission results", p.Name)
		} else {
			Expect(checked.ExpressionWarnings).To(BeEmpty(), "type-checking warnings of %s", p.Name)
		}
		// In effect once a plain pod is admitted and a pipe pod refused by
		// the policy's own validation (not for want of its parameters).
		Eventually(func(g Gomega) {
			g.Expect(dryRun(ctx, basePod(otherSA))).To(Succeed())
			err := dryRun(ctx, withPipe(basePod(allowedSA), "pipe", pipe, 0))
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring("mount a csi-proxy named pipe"))
		}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(),
			"the policy never took effect; 'no params found' here means the API server's parameter informer is stuck (restarting kube-apiserver clears it)")
	})

	for _, sh := range shapes {
		sh := sh
		admissionCases.It(sh.id, func(ctx SpecContext) {
			err := dryRun(ctx, sh.pod())
			if sh.admit {
				Expect(err).NotTo(HaveOccurred())
				return
			}
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy 'csi-proxy-pipes-"), "refused by the policy, not by something else")
		})
	}

	admissionCases.It("CSIPROXY-ADM-017", func(ctx SpecContext) {
		pod, err := cs.CoreV1().Pods(namespace).Create(ctx, privileged(withPipe(basePod(allowedSA), "pipe", pipe, 0), 0), metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			zero := int64(0)
			_ = cs.CoreV1().Pods(namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		})
		// The pod is real, so the kubelet updates it meanwhile: each attempt
		// starts from a fresh read and a conflict is retried.
		ephemeral := func(priv bool) error {
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := cs.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				p := cur.DeepCopy()
				ec := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Name: fmt.Sprintf("debug-%v", priv), Image: "registry.k8s.io/pause:3.10",
					VolumeMounts: []corev1.VolumeMount{{Name: "pipe", MountPath: pipe}},
				}}
				if priv {
					ec.SecurityContext = &corev1.SecurityContext{Privileged: &priv}
				}
				p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, ec)
				_, err = cs.CoreV1().Pods(namespace).UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			})
		}
		err = ephemeral(false)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("ValidatingAdmissionPolicy 'csi-proxy-pipes-"))
		Expect(ephemeral(true)).To(Succeed())
	})
})
