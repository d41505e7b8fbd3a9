package fencekind

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
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

// Class is a NetworkFenceClass for the driver whose parameters name the
// secret (csiaddons.openshift.io/networkfence-secret-name/-namespace) and
// carry the driver's required parameter.
func Class(name, secretName, secretNamespace string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "csiaddons.openshift.io/v1alpha1",
		"kind":       "NetworkFenceClass",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"provisioner": DriverIdentity,
			"parameters": map[string]any{
				"csiaddons.openshift.io/networkfence-secret-name":      secretName,
				"csiaddons.openshift.io/networkfence-secret-namespace": secretNamespace,
				RequiredParam: "fenceproof",
			},
		},
	}}
}

// Fence is a NetworkFence through class for cidrs in state (Fenced or Unfenced).
func Fence(name, class, state string, cidrs []string) *unstructured.Unstructured {
	cs := make([]any, len(cidrs))
	for i, c := range cidrs {
		cs[i] = c
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "csiaddons.openshift.io/v1alpha1",
		"kind":       "NetworkFence",
		"metadata":   map[string]any{"name": name, "labels": map[string]any{"app.kubernetes.io/part-of": "fenceproof"}},
		"spec":       map[string]any{"networkFenceClassName": class, "fenceState": state, "cidrs": cs},
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
	res, _, _ := unstructured.NestedString(u.Object, "status", "result")
	msg, _, _ := unstructured.NestedString(u.Object, "status", "message")
	return FenceStatus{Result: res, Message: msg, Finalizers: u.GetFinalizers(), Exists: true}, nil
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
	l, err := f.Client.Resource(CSIAddonsNodeGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(l.Items) == 0 {
		return fmt.Errorf("no CSIAddonsNode in %s", namespace)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"fenceproof.io/refresh":%q}}}`, time.Now().Format(time.RFC3339Nano))
	for _, n := range l.Items {
		if _, err := f.Client.Resource(CSIAddonsNodeGVR).Namespace(namespace).Patch(ctx, n.GetName(), "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
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
	return describeCSIAddonsNodes(l.Items), nil
}

// describeCSIAddonsNodes is the state, endpoint and message of each node.
func describeCSIAddonsNodes(nodes []unstructured.Unstructured) map[string]string {
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
