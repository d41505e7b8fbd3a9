// Package networkfence drives csi-addons' NetworkFence objects (v1alpha1)
// through the dynamic client, so that the project's go.mod does not take
// csi-addons' Kubernetes versions: create a fence, wait for its result,
// lift it, and read what the CSIAddonsNodes report of a class's clients.
// The fencing suite (internal/fencekind) and `fenceproof fencing` use it.
package networkfence

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// The csi-addons resources, used through the dynamic client so that the
// project's go.mod does not take csi-addons' Kubernetes versions.
var (
	NetworkFenceGVR      = schema.GroupVersionResource{Group: "csiaddons.openshift.io", Version: "v1alpha1", Resource: "networkfences"}
	NetworkFenceClassGVR = schema.GroupVersionResource{Group: "csiaddons.openshift.io", Version: "v1alpha1", Resource: "networkfenceclasses"}
	CSIAddonsNodeGVR     = schema.GroupVersionResource{Group: "csiaddons.openshift.io", Version: "v1alpha1", Resource: "csiaddonsnodes"}
)

// Fence states and results of a NetworkFence (csi-addons v1alpha1).
const (
	Fenced    = "Fenced"
	Unfenced  = "Unfenced"
	Succeeded = "Succeeded"
	Failed    = "Failed"
	// Finalizer is what the controller adds to a NetworkFence it processed
	// (internal/controller/csiaddons/networkfence_controller.go).
	Finalizer = "csiaddons.openshift.io/network-fence"
	// The status messages of a successful fence and unfence (api/csiaddons/v1alpha1/networkfence_types.go).
	FenceOKMessage   = "fencing operation successful"
	UnfenceOKMessage = "unfencing operation successful"
)

// Fence is a NetworkFence through class for cidrs in state (Fenced or Unfenced).
func Fence(name, class, state string, cidrs []string) *unstructured.Unstructured {
	return FenceVia(name, Via{Class: class}, state, cidrs)
}

// Via says how a NetworkFence reaches its driver: through a
// NetworkFenceClass (which names the secret and carries the parameters),
// or by the driver's name with a secret and parameters of its own.
type Via struct {
	Class                       string
	Driver                      string
	SecretName, SecretNamespace string
	Parameters                  map[string]string
}

// FenceVia is a NetworkFence for cidrs in state (Fenced or Unfenced),
// labelled app.kubernetes.io/part-of=fenceproof.
func FenceVia(name string, via Via, state string, cidrs []string) *unstructured.Unstructured {
	cs := make([]any, len(cidrs))
	for i, c := range cidrs {
		cs[i] = c
	}
	spec := map[string]any{"fenceState": state, "cidrs": cs}
	if via.Class != "" {
		spec["networkFenceClassName"] = via.Class
	} else {
		spec["driver"] = via.Driver
		spec["secret"] = map[string]any{"name": via.SecretName, "namespace": via.SecretNamespace}
		if len(via.Parameters) > 0 {
			params := map[string]any{}
			for k, v := range via.Parameters {
				params[k] = v
			}
			spec["parameters"] = params
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "csiaddons.openshift.io/v1alpha1",
		"kind":       "NetworkFence",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{"app.kubernetes.io/part-of": "fenceproof"}},
		"spec":       spec,
	}}
}

// FenceStatus is what a NetworkFence reports.
type FenceStatus struct {
	Result, Message string
	Finalizers      []string
	Exists          bool
}

// Fences drives NetworkFence CRs.
type Fences struct{ Client dynamic.Interface }

// Create creates a NetworkFence (or NetworkFenceClass) object and returns
// the server's creation time as the client saw it.
func (f Fences) Create(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (time.Time, error) {
	t := time.Now()
	_, err := f.Client.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return t, fmt.Errorf("create %s %s: %w", gvr.Resource, obj.GetName(), err)
	}
	return t, nil
}

// Status reads a NetworkFence's status.
func (f Fences) Status(ctx context.Context, name string) (FenceStatus, error) {
	u, err := f.Client.Resource(NetworkFenceGVR).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return FenceStatus{}, nil
	}
	if err != nil {
		return FenceStatus{}, err
	}
	return statusOf(u), nil
}

func statusOf(u *unstructured.Unstructured) FenceStatus {
	res, _, _ := unstructured.NestedString(u.Object, "status", "result")
	msg, _, _ := unstructured.NestedString(u.Object, "status", "message")
	return FenceStatus{Result: res, Message: msg, Finalizers: u.GetFinalizers(), Exists: true}
}

// WaitResult waits until the NetworkFence reports result and returns the
// time it was first seen so (polled every 100 ms) and the status.
func (f Fences) WaitResult(ctx context.Context, name, result string, timeout time.Duration) (time.Time, FenceStatus, error) {
	var st FenceStatus
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var err error
		st, err = f.Status(ctx, name)
		return err == nil && st.Result == result, nil
	})
	if err != nil {
		return time.Time{}, st, fmt.Errorf("NetworkFence %s: no result %s after %s (last: result %q, message %q)", name, result, timeout, st.Result, st.Message)
	}
	return time.Now(), st, nil
}

// SetState changes a NetworkFence's fenceState (a spec change: the
// controller reconciles it).
func (f Fences) SetState(ctx context.Context, name, state string) error {
	patch := fmt.Sprintf(`{"spec":{"fenceState":%q}}`, state)
	_, err := f.Client.Resource(NetworkFenceGVR).Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{})
	return err
}

// Delete deletes an object and waits until it is gone.
func (f Fences) Delete(ctx context.Context, gvr schema.GroupVersionResource, name string, timeout time.Duration) error {
	err := f.Client.Resource(gvr).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := f.Client.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// RemoveFinalizers strips an object's finalizers (cleanup of a CR whose
// controller is gone); a missing object is not an error.
func (f Fences) RemoveFinalizers(ctx context.Context, gvr schema.GroupVersionResource, name string) error {
	_, err := f.Client.Resource(gvr).Patch(ctx, name, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// ClientDetail is one client a CSIAddonsNode reports for a class
// (status.networkFenceClientStatus[].ClientDetails[]).
type ClientDetail struct {
	ID    string
	CIDRs []string
}

// FenceClients returns the clients the CSIAddonsNodes of the driver report
// for class, from their status (filled by the controller with GetFenceClients).
func (f Fences) FenceClients(ctx context.Context, namespace, class string) ([]ClientDetail, error) {
	l, err := f.Client.Resource(CSIAddonsNodeGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []ClientDetail
	for _, n := range l.Items {
		sts, _, _ := unstructured.NestedSlice(n.Object, "status", "networkFenceClientStatus")
		for _, s := range sts {
			m, _ := s.(map[string]any)
			if m["networkFenceClassName"] != class {
				continue
			}
			details, _ := m["ClientDetails"].([]any)
			for _, d := range details {
				dm, _ := d.(map[string]any)
				id, _ := dm["id"].(string)
				cidrs, _, _ := unstructured.NestedStringSlice(dm, "cidrs")
				out = append(out, ClientDetail{ID: id, CIDRs: cidrs})
			}
		}
	}
	return out, nil
}

// RefreshCSIAddonsNodes sets an annotation on every CSIAddonsNode in
// namespace. The v0.14.0 controller refreshes a node's status (and calls
// GetFenceClients) only on a generation or annotation change, or once an
// hour (internal/controller/csiaddons/csiaddonsnode_controller.go:
// SetupWithManager and baseRequeueAfter), so an operator who wants the
// current clients has to poke it like this.
func (f Fences) RefreshCSIAddonsNodes(ctx context.Context, namespace string) error {
	return f.refresh(ctx, namespace, func(unstructured.Unstructured) bool { return true })
}

// RefreshDriverNodes is RefreshCSIAddonsNodes for the CSIAddonsNodes of
// driver, in every namespace.
func (f Fences) RefreshDriverNodes(ctx context.Context, driver string) error {
	return f.refresh(ctx, "", func(n unstructured.Unstructured) bool {
		d, _, _ := unstructured.NestedString(n.Object, "spec", "driver", "name")
		return d == driver
	})
}

func (f Fences) refresh(ctx context.Context, namespace string, which func(unstructured.Unstructured) bool) error {
	l, err := f.Client.Resource(CSIAddonsNodeGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	l.Items = slices.DeleteFunc(l.Items, func(n unstructured.Unstructured) bool { return !which(n) })
	if len(l.Items) == 0 {
		return fmt.Errorf("no CSIAddonsNode in %q", namespace)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"fenceproof.io/refresh":%q}}}`, time.Now().Format(time.RFC3339Nano))
	for _, n := range l.Items {
		if _, err := f.Client.Resource(CSIAddonsNodeGVR).Namespace(n.GetNamespace()).Patch(ctx, n.GetName(), "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// CSIAddonsNodeState returns the state and message of the CSIAddonsNodes
// in namespace (for diagnostics and the readiness wait).
func (f Fences) CSIAddonsNodeState(ctx context.Context, namespace string) (map[string]string, error) {
	l, err := f.Client.Resource(CSIAddonsNodeGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return DescribeCSIAddonsNodes(l.Items), nil
}

// DescribeCSIAddonsNodes is the state, endpoint and message of each node.
func DescribeCSIAddonsNodes(nodes []unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, n := range nodes {
		state, _, _ := unstructured.NestedString(n.Object, "status", "state")
		msg, _, _ := unstructured.NestedString(n.Object, "status", "message")
		ep, _, _ := unstructured.NestedString(n.Object, "spec", "driver", "endpoint")
		out[n.GetName()] = fmt.Sprintf("state=%s endpoint=%s message=%q", state, ep, msg)
	}
	return out
}

// ClassAnnotation lists, on a CSIAddonsNode, the NetworkFenceClasses whose
// clients the controller asks for (networkfenceclass_controller.go).
const ClassAnnotation = "csiaddons.openshift.io/networkfenceclass-names"

// ClassOnNodes reports whether a CSIAddonsNode in namespace still lists class
// in ClassAnnotation. While a class whose GetFenceClients fails is listed,
// v0.14.0 cannot put a new connection to the driver in its pool.
func (f Fences) ClassOnNodes(ctx context.Context, namespace, class string) (bool, error) {
	l, err := f.Client.Resource(CSIAddonsNodeGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, err
	}
	for _, n := range l.Items {
		var classes []string
		if v := n.GetAnnotations()[ClassAnnotation]; v != "" {
			if err := json.Unmarshal([]byte(v), &classes); err != nil {
				return false, fmt.Errorf("CSIAddonsNode %s: annotation %s: %w", n.GetName(), ClassAnnotation, err)
			}
		}
		if slices.Contains(classes, class) {
			return true, nil
		}
	}
	return false, nil
}

// Watch waits until the NetworkFence's status satisfies done and returns
// the time this process learnt it (a watch event's arrival: never before
// the controller wrote the status) and the status. It watches the object
// and polls it every 250 ms besides (a watch can break), so a result is
// seen at most that late even then.
func (f Fences) Watch(ctx context.Context, name string, done func(FenceStatus) bool, timeout time.Duration) (time.Time, FenceStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var st FenceStatus
	check := func() (bool, error) {
		var err error
		st, err = f.Status(ctx, name)
		return err == nil && done(st), err
	}
	if ok, _ := check(); ok {
		return time.Now(), st, nil
	}
	w, err := f.Client.Resource(NetworkFenceGVR).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	var events <-chan watch.Event
	if err == nil {
		defer w.Stop()
		events = w.ResultChan()
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, st, fmt.Errorf("NetworkFence %s: not done after %s (last: result %q, message %q)", name, timeout, st.Result, st.Message)
		case ev, open := <-events:
			if !open {
				events = nil // broken: polling alone from here
				continue
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type != watch.Deleted {
				if s := statusOf(u); done(s) {
					return time.Now(), s, nil
				}
			}
		case <-tick.C:
			if ok, _ := check(); ok {
				return time.Now(), st, nil
			}
		}
	}
}

// NodeCIDRs are a node's pod CIDRs and InternalIPs as CIDRs (/32 or
// /128): what an operator fences to cut the node off from storage.
func NodeCIDRs(n *corev1.Node) ([]string, error) {
	var out []string
	out = append(out, n.Spec.PodCIDRs...)
	if len(n.Spec.PodCIDRs) == 0 && n.Spec.PodCIDR != "" {
		out = append(out, n.Spec.PodCIDR)
	}
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		if strings.Contains(a.Address, ":") {
			out = append(out, a.Address+"/128")
		} else {
			out = append(out, a.Address+"/32")
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("node %s has neither a pod CIDR nor an InternalIP", n.Name)
	}
	return out, nil
}

// DriverNodes describes the CSIAddonsNodes of driver in every namespace
// (namespace/name, state, endpoint): where its csi-addons sidecars run.
func DriverNodes(ctx context.Context, dyn dynamic.Interface, driver string) ([]string, error) {
	l, err := dyn.Resource(CSIAddonsNodeGVR).Namespace("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range l.Items {
		if d, _, _ := unstructured.NestedString(n.Object, "spec", "driver", "name"); d != driver {
			continue
		}
		state, _, _ := unstructured.NestedString(n.Object, "status", "state")
		ep, _, _ := unstructured.NestedString(n.Object, "spec", "driver", "endpoint")
		out = append(out, fmt.Sprintf("%s/%s %s (%s)", n.GetNamespace(), n.GetName(), state, ep))
	}
	slices.Sort(out)
	return out, nil
}
