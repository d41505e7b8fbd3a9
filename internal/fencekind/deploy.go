package fencekind

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"

	"github.com/fenceproof/fenceproof/fencing/networkfence"
	"github.com/fenceproof/fenceproof/internal/e2e"
)

// UpstreamFiles are the files of the csi-addons module's deploy/controller
// directory the world applies as they are: every CRD (NetworkFence,
// NetworkFenceClass, CSIAddonsNode, ...) and the controller's RBAC.
var UpstreamFiles = []string{"crds.yaml", "rbac.yaml"}

// Cluster is the API access the world needs.
type Cluster struct {
	CS   kubernetes.Interface
	Dyn  dynamic.Interface
	Res  *resources.Resources
	Log  *slog.Logger
	REST *rest.Config // for Exec (the Ceph audit); nil without Ceph
}

// InstallUpstream applies the csi-addons CRDs and RBAC from dir (written by
// `make cluster-image` from the module; see fixtures/cluster/build-image.sh),
// leaving objects that already exist as they are, and waits until the
// NetworkFence API answers.
func (c Cluster) InstallUpstream(ctx context.Context, dir string) error {
	// rbac.yaml puts the controller's ServiceAccount and Role in this
	// namespace, which upstream's setup-controller.yaml would create.
	if err := create(ctx, "namespace "+ControllerNamespace, c.CS.CoreV1().Namespaces().Create,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ControllerNamespace}}); err != nil {
		return err
	}
	for _, f := range UpstreamFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("csi-addons %s: %w (run `make cluster-image`, which copies it from the kubernetes-csi-addons module)", f, err)
		}
		if err := decoder.DecodeEachFile(ctx, os.DirFS(dir), f, decoder.CreateIgnoreAlreadyExists(c.Res)); err != nil {
			return fmt.Errorf("apply csi-addons %s: %w", f, err)
		}
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Dyn.Resource(NetworkFenceGVR).List(ctx, metav1.ListOptions{Limit: 1})
		_, err2 := c.Dyn.Resource(NetworkFenceClassGVR).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && err2 == nil, nil
	})
}

func create[T any](ctx context.Context, what string, f func(context.Context, T, metav1.CreateOptions) (T, error), obj T) error {
	if _, err := f(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s: %w", what, err)
	}
	return nil
}

// Install deploys the controller (in ControllerNamespace, which rbac.yaml
// expects), the storage side (refstore, its idle client, the driver) and
// the suite's NetworkFenceClass, and waits until the driver's CSIAddonsNode
// is Connected. secret is the value of the driver's required secret.
func (c Cluster) Install(ctx context.Context, w World, secret string) error {
	for _, ns := range []string{ControllerNamespace, StorageNamespace} {
		if err := create(ctx, "namespace "+ns, c.CS.CoreV1().Namespaces().Create,
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	if err := create(ctx, "controller", c.CS.AppsV1().Deployments(ControllerNamespace).Create, ControllerDeployment(w)); err != nil {
		return err
	}
	sa, role, binding := SidecarRBAC(StorageNamespace, SidecarSA)
	if err := create(ctx, "sidecar service account", c.CS.CoreV1().ServiceAccounts(StorageNamespace).Create, sa); err != nil {
		return err
	}
	if err := create(ctx, "sidecar role", c.CS.RbacV1().ClusterRoles().Create, role); err != nil {
		return err
	}
	if err := create(ctx, "sidecar binding", c.CS.RbacV1().ClusterRoleBindings().Create, binding); err != nil {
		return err
	}
	for _, s := range Secrets(secret) {
		if err := create(ctx, "secret "+s.Name, c.CS.CoreV1().Secrets(StorageNamespace).Create, s); err != nil {
			return err
		}
	}
	if err := c.installStorage(ctx, w); err != nil {
		return err
	}
	// Before the driver: see IdleClientPod.
	server, err := c.WriterTarget(ctx, w)
	if err != nil {
		return err
	}
	if err := c.PrepareNamespace(ctx, w, StorageNamespace); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	idle := IdleClientPod(w, server)
	if err := create(ctx, "idle client", c.CS.CoreV1().Pods(StorageNamespace).Create, idle); err != nil {
		return err
	}
	if _, err := e2e.WaitPodsRunning(ctx, c.CS, 3*time.Minute, idle); err != nil {
		return err
	}
	if err := create(ctx, "driver", c.CS.AppsV1().StatefulSets(StorageNamespace).Create, DriverStatefulSet(w)); err != nil {
		return err
	}
	if _, err := (Fences{Client: c.Dyn}).Create(ctx, NetworkFenceClassGVR, Class(ClassName, CSIAddonsSecret, StorageNamespace)); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := c.WaitDeployment(ctx, ControllerNamespace, ControllerName, 3*time.Minute); err != nil {
		return err
	}
	if err := c.WaitStatefulSet(ctx, StorageNamespace, DriverName, 3*time.Minute); err != nil {
		return err
	}
	return c.WaitConnected(ctx, "", 3*time.Minute)
}

// RedeployDriver rolls the driver StatefulSet out with faults (its
// --fault arguments replaced; none: the faithful driver) and waits until
// the new pod is the controller's Connected endpoint.
func (c Cluster) RedeployDriver(ctx context.Context, faults []string) error {
	pods, err := c.DriverPods(ctx)
	if err != nil {
		return err
	}
	s, err := c.CS.AppsV1().StatefulSets(StorageNamespace).Get(ctx, DriverName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	d := &s.Spec.Template.Spec.Containers[0]
	d.Command = slices.DeleteFunc(d.Command, func(a string) bool { return strings.HasPrefix(a, "--fault=") })
	for _, f := range faults {
		d.Command = append(d.Command, "--fault="+f)
	}
	if _, err := c.CS.AppsV1().StatefulSets(StorageNamespace).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return err
	}
	var old types.UID
	if len(pods) > 0 {
		old = pods[0].UID
	}
	if err := c.WaitStatefulSet(ctx, StorageNamespace, DriverName, 3*time.Minute); err != nil {
		return err
	}
	return c.WaitConnected(ctx, old, 4*time.Minute)
}

// DriverFaults are the --fault arguments of the deployed driver.
func (c Cluster) DriverFaults(ctx context.Context) ([]string, error) {
	s, err := c.CS.AppsV1().StatefulSets(StorageNamespace).Get(ctx, DriverName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range s.Spec.Template.Spec.Containers[0].Command {
		if f, ok := strings.CutPrefix(a, "--fault="); ok {
			out = append(out, f)
		}
	}
	return out, nil
}

// installStorage deploys refstore, or Ceph, and waits until it serves.
func (c Cluster) installStorage(ctx context.Context, w World) error {
	if w.Storage == StorageCeph {
		return c.installCeph(ctx, w)
	}
	if err := create(ctx, "refstore service", c.CS.CoreV1().Services(StorageNamespace).Create, RefstoreService()); err != nil {
		return err
	}
	if err := create(ctx, "refstore", c.CS.AppsV1().Deployments(StorageNamespace).Create, RefstoreDeployment(w)); err != nil {
		return err
	}
	return c.WaitDeployment(ctx, StorageNamespace, RefstoreName, 3*time.Minute)
}

// DeployDir is where `make cluster-image` copies csi-addons' CRDs and RBAC
// from its module (crds.yaml, rbac.yaml).
func DeployDir() string {
	return filepath.Join(e2e.CacheDir(), "out", "csi-addons", "deploy")
}

// WaitDeployment waits until every replica of a Deployment is updated and available.
func (c Cluster) WaitDeployment(ctx context.Context, ns, name string, timeout time.Duration) error {
	var d *appsv1.Deployment
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		d, err = c.CS.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil {
			return false, nil
		}
		s := d.Status
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == *d.Spec.Replicas &&
			s.AvailableReplicas == *d.Spec.Replicas && s.Replicas == *d.Spec.Replicas, nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s/%s not available after %s: %s", ns, name, timeout, c.podsState(ctx, ns))
	}
	return nil
}

// WaitStatefulSet waits until every replica of a StatefulSet runs its
// current template and is ready.
func (c Cluster) WaitStatefulSet(ctx context.Context, ns, name string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		s, err := c.CS.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || s.Spec.Replicas == nil {
			return false, nil
		}
		st, n := s.Status, *s.Spec.Replicas
		return st.ObservedGeneration >= s.Generation && st.CurrentRevision == st.UpdateRevision &&
			st.UpdatedReplicas == n && st.ReadyReplicas == n && st.Replicas == n, nil
	})
	if err != nil {
		return fmt.Errorf("statefulset %s/%s not ready after %s: %s", ns, name, timeout, c.podsState(ctx, ns))
	}
	return nil
}

// CreatedByAnnotation is where the csi-addons sidecar records, on the
// CSIAddonsNode it registers, the UID of its pod.
const CreatedByAnnotation = "sidecar.csiaddons.openshift.io/createdByPodUID"

// WaitConnected waits until a ready driver pod other than the one with UID
// oldUID ("" at install) has registered its CSIAddonsNode (the sidecar
// writes its pod UID there), the controller reached that sidecar over TLS
// with its token (Connected), and the pod holds the driver's Lease (the
// controller routes to the holder).
//
// csi-addons v0.14.0 can still stall after a pod replacement: the
// controller counts connection failures across endpoints and deletes the
// CSIAddonsNode at the fourth, and a sidecar whose registration meets an
// object being deleted tries again only minutes later. Once the pod has
// been ready for reregisterAfter, WaitConnected acts as an operator would,
// and logs it: it annotates the pod's CSIAddonsNode if it is not Connected
// (the controller reconciles on an annotation change), at most every
// reregisterAfter, and it deletes the pod once if it has registered no
// CSIAddonsNode, so that its replacement registers at start. (A driver
// that reports no clients is never seen Connected at all: IdleClientPod.)
func (c Cluster) WaitConnected(ctx context.Context, oldUID types.UID, timeout time.Duration) error {
	f := Fences{Client: c.Dyn}
	var last map[string]string
	restarted, nudged := false, time.Time{}
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		p, readyFor := c.readyDriverPod(ctx, oldUID)
		l, err := c.Dyn.Resource(CSIAddonsNodeGVR).Namespace(StorageNamespace).List(ctx, metav1.ListOptions{})
		if p == nil || err != nil {
			return false, nil
		}
		last = networkfence.DescribeCSIAddonsNodes(l.Items)
		registered, connected := false, false
		for _, n := range l.Items {
			ep, _, _ := nestedString(n.Object, "spec", "driver", "endpoint")
			if n.GetDeletionTimestamp() != nil || n.GetAnnotations()[CreatedByAnnotation] != string(p.UID) || !containsPod(ep, p.Name) {
				continue
			}
			state, _, _ := nestedString(n.Object, "status", "state")
			registered, connected = true, connected || state == "Connected"
		}
		switch {
		case connected:
			return c.leaseHolder(ctx) == p.Name, nil
		case readyFor < reregisterAfter:
		case registered && time.Since(nudged) >= reregisterAfter:
			nudged = time.Now()
			c.logger().Warn("csi-addons v0.14.0 has not connected the driver's ready pod; annotating its CSIAddonsNode so the controller reconciles it",
				"pod", p.Name, "state", last)
			_ = f.RefreshCSIAddonsNodes(ctx, StorageNamespace)
		case !registered && !restarted:
			restarted = true
			c.logger().Warn("csi-addons v0.14.0: the driver's ready pod has registered no CSIAddonsNode; deleting the pod once so that its replacement registers at start",
				"pod", p.Name, "ready_for", readyFor.Round(time.Second), "state", last)
			_ = c.CS.CoreV1().Pods(StorageNamespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
			oldUID = p.UID
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("no Connected CSIAddonsNode for the driver after %s: %v; pods: %s", timeout, last, c.podsState(ctx, StorageNamespace))
	}
	return nil
}

func (c Cluster) logger() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}

// reregisterAfter is how long a driver pod must have been ready before
// WaitConnected nudges the controller or restarts the pod (a variable so
// tests can shorten it).
var reregisterAfter = 30 * time.Second

// readyDriverPod returns the driver pod, other than the one with UID
// oldUID and not being deleted, whose containers are all ready, and how
// long it has been ready; nil if there is none.
func (c Cluster) readyDriverPod(ctx context.Context, oldUID types.UID) (*corev1.Pod, time.Duration) {
	pods, err := c.DriverPods(ctx)
	if err != nil {
		return nil, 0
	}
	for i := range pods {
		p := &pods[i]
		if p.UID == oldUID || p.DeletionTimestamp != nil {
			continue
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return p, time.Since(cond.LastTransitionTime.Time)
			}
		}
	}
	return nil, 0
}

// LeaseName is the Lease the sidecar holds and the controller routes by
// (sidecar/main.go: util.NormalizeLeaseName(driver) + "-csi-addons").
const LeaseName = "fenceproof-reference-driver-csi-addons"

func (c Cluster) leaseHolder(ctx context.Context) string {
	l, err := c.CS.CoordinationV1().Leases(StorageNamespace).Get(ctx, LeaseName, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// LeaseHolder returns the pod holding the driver's Lease ("" if none).
func (c Cluster) LeaseHolder(ctx context.Context) string { return c.leaseHolder(ctx) }

func (c Cluster) podsState(ctx context.Context, ns string) string {
	pods, err := c.CS.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	out := ""
	for _, p := range pods.Items {
		out += fmt.Sprintf("[%s on %s: %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		for _, cs := range p.Status.ContainerStatuses {
			out += fmt.Sprintf(" %s ready=%v restarts=%d", cs.Name, cs.Ready, cs.RestartCount)
			if cs.State.Waiting != nil {
				out += " waiting:" + cs.State.Waiting.Reason
			}
			if cs.LastTerminationState.Terminated != nil {
				out += fmt.Sprintf(" last-exit=%d:%s", cs.LastTerminationState.Terminated.ExitCode, cs.LastTerminationState.Terminated.Message)
			}
		}
		out += "] "
	}
	return out
}

// Uninstall removes what Install created except the CRDs (cluster-wide; an
// existing cluster may use them): every NetworkFence of the suite (their
// finalizers stripped once the controller is gone), the class, both
// namespaces and the sidecar's cluster RBAC.
func (c Cluster) Uninstall(ctx context.Context) error {
	f := Fences{Client: c.Dyn}
	l, err := c.Dyn.Resource(NetworkFenceGVR).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=fenceproof"})
	if err == nil {
		for _, n := range l.Items {
			_ = c.Dyn.Resource(NetworkFenceGVR).Delete(ctx, n.GetName(), metav1.DeleteOptions{})
			_ = f.RemoveFinalizers(ctx, NetworkFenceGVR, n.GetName())
		}
	}
	_ = c.Dyn.Resource(NetworkFenceClassGVR).Delete(ctx, ClassName, metav1.DeleteOptions{})
	_ = f.RemoveFinalizers(ctx, NetworkFenceClassGVR, ClassName)
	_ = c.CS.RbacV1().ClusterRoleBindings().Delete(ctx, SidecarSA, metav1.DeleteOptions{})
	_ = c.CS.RbacV1().ClusterRoles().Delete(ctx, SidecarSA, metav1.DeleteOptions{})
	c.RemoveCSIAddonsNodes(ctx, StorageNamespace)
	return e2e.DeleteNamespaces(ctx, c.CS, 5*time.Minute, StorageNamespace, ControllerNamespace)
}

// RemoveCSIAddonsNodes deletes the CSIAddonsNodes in namespace and strips the
// controller's finalizer from them, so that the namespace can go even when
// the controller went first (or belongs to another world, whose controller
// reconciles every namespace's CSIAddonsNodes).
func (c Cluster) RemoveCSIAddonsNodes(ctx context.Context, namespace string) {
	nodes, err := c.Dyn.Resource(CSIAddonsNodeGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, n := range nodes.Items {
		_ = c.Dyn.Resource(CSIAddonsNodeGVR).Namespace(namespace).Delete(ctx, n.GetName(), metav1.DeleteOptions{})
		_, _ = c.Dyn.Resource(CSIAddonsNodeGVR).Namespace(namespace).Patch(ctx, n.GetName(), "application/merge-patch+json",
			[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	}
}
