package fencekind

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fenceproof/fenceproof/fencing/networkfence"
)

// The csi-addons resources and what the suite uses of them
// (fencing/networkfence).
var (
	NetworkFenceGVR      = networkfence.NetworkFenceGVR
	NetworkFenceClassGVR = networkfence.NetworkFenceClassGVR
	CSIAddonsNodeGVR     = networkfence.CSIAddonsNodeGVR
	Fence                = networkfence.Fence
)

// Fence states, results and messages (fencing/networkfence).
const (
	Fenced           = networkfence.Fenced
	Unfenced         = networkfence.Unfenced
	Succeeded        = networkfence.Succeeded
	Failed           = networkfence.Failed
	Finalizer        = networkfence.Finalizer
	FenceOKMessage   = networkfence.FenceOKMessage
	UnfenceOKMessage = networkfence.UnfenceOKMessage
	ClassAnnotation  = networkfence.ClassAnnotation
)

// Fences drives NetworkFence CRs; FenceStatus is what one reports;
// ClientDetail one client a CSIAddonsNode reports.
type (
	Fences       = networkfence.Fences
	FenceStatus  = networkfence.FenceStatus
	ClientDetail = networkfence.ClientDetail
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
