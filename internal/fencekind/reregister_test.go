package fencekind

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

// driverPod is the StatefulSet's pod: every instance has the same name.
func driverPod(uid types.UID, readySince time.Duration, deleting bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: DriverName + "-0", UID: uid, Namespace: StorageNamespace, Labels: labels(DriverName)},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
			Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(time.Now().Add(-readySince)),
		}}},
	}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

func TestReadyDriverPodIsTheReplacement(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want types.UID
	}{
		{"the replacement", driverPod("new", time.Minute, false), "new"},
		{"the pod being replaced, same name", driverPod("old", time.Minute, false), ""},
		{"a pod being deleted", driverPod("new", time.Minute, true), ""},
		{"no pod", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset()
			if tc.pod != nil {
				if _, err := cs.CoreV1().Pods(StorageNamespace).Create(context.Background(), tc.pod, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var got types.UID
			if p, _ := (Cluster{CS: cs}).readyDriverPod(context.Background(), "old"); p != nil {
				got = p.UID
			}
			if got != tc.want {
				t.Errorf("readyDriverPod = %q, want %q (\"\" = none)", got, tc.want)
			}
		})
	}
}

// csiAddonsNode is the driver's CSIAddonsNode in a state, registered by the
// pod with UID createdBy.
func csiAddonsNode(state string, createdBy types.UID) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "csiaddons.openshift.io/v1alpha1", "kind": "CSIAddonsNode",
		"metadata": map[string]any{"name": "driver-node", "namespace": StorageNamespace,
			"annotations": map[string]any{CreatedByAnnotation: string(createdBy)}},
		"spec":   map[string]any{"driver": map[string]any{"endpoint": "pod://" + DriverName + "-0." + StorageNamespace + ":9070"}},
		"status": map[string]any{"state": state},
	}}
}

// replacedCluster has the replacement driver pod "new", ready for a
// minute, and the given CSIAddonsNodes; WaitConnected acts at once.
func replacedCluster(t *testing.T, nodes ...runtime.Object) (Cluster, *fake.Clientset) {
	t.Helper()
	old := reregisterAfter
	reregisterAfter = 0
	t.Cleanup(func() { reregisterAfter = old })
	cs := fake.NewSimpleClientset(driverPod("new", time.Minute, false))
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{CSIAddonsNodeGVR: "CSIAddonsNodeList"}, nodes...)
	return Cluster{CS: cs, Dyn: dyn}, cs
}

func podDeletes(cs *fake.Clientset) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			n++
		}
	}
	return n
}

// The replacement pod has the old one's name: a CSIAddonsNode that still
// says Connected from the old pod's registration is not the new pod's.
func TestWaitConnectedIgnoresTheOldPodsConnectedRegistration(t *testing.T) {
	c, cs := replacedCluster(t, csiAddonsNode("Connected", "old"))
	if _, err := cs.CoordinationV1().Leases(StorageNamespace).Create(context.Background(), leaseHeldBy(DriverName+"-0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitConnected(context.Background(), "old", 1500*time.Millisecond); err == nil {
		t.Fatal("WaitConnected took the old pod's Connected CSIAddonsNode for the replacement's")
	}
}

// Regression: csi-addons v0.14.0 left the CSIAddonsNode Retrying for
// minutes; WaitConnected annotates it so the controller reconciles it.
func TestWaitConnectedAnnotatesAStalledCSIAddonsNode(t *testing.T) {
	c, cs := replacedCluster(t, csiAddonsNode("Retrying", "new"))
	if err := c.WaitConnected(context.Background(), "old", 1500*time.Millisecond); err == nil {
		t.Fatal("WaitConnected succeeded without a Connected CSIAddonsNode")
	}
	n, err := c.Dyn.Resource(CSIAddonsNodeGVR).Namespace(StorageNamespace).Get(context.Background(), "driver-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.GetAnnotations()["fenceproof.io/refresh"] == "" {
		t.Errorf("the stalled CSIAddonsNode was not annotated: %v", n.GetAnnotations())
	}
	if d := podDeletes(cs); d != 0 {
		t.Errorf("%d pod deletions although the pod registered its CSIAddonsNode", d)
	}
}

// Regression: csi-addons v0.14.0 deleted the CSIAddonsNode the new sidecar
// had registered into, and the sidecar registered again only minutes later;
// WaitConnected restarts the driver pod exactly once, whether the object is
// gone or still the old pod's.
func TestWaitConnectedRestartsAnUnregisteredDriverPodOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []runtime.Object
	}{
		{"no CSIAddonsNode", nil},
		{"only the old pod's CSIAddonsNode", []runtime.Object{csiAddonsNode("Retrying", "old")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, cs := replacedCluster(t, tc.nodes...)
			if err := c.WaitConnected(context.Background(), "old", 2500*time.Millisecond); err == nil {
				t.Fatal("WaitConnected succeeded without the new pod's CSIAddonsNode")
			}
			if _, err := cs.CoreV1().Pods(StorageNamespace).Get(context.Background(), DriverName+"-0", metav1.GetOptions{}); err == nil {
				t.Error("the unregistered driver pod was not deleted")
			}
			if d := podDeletes(cs); d != 1 {
				t.Errorf("%d pod deletions, want exactly 1", d)
			}
		})
	}
}

func TestWaitConnectedReturnsOnceTheReplacementIsConnectedAndLeads(t *testing.T) {
	c, cs := replacedCluster(t, csiAddonsNode("Connected", "new"))
	holder := DriverName + "-0"
	if _, err := cs.CoordinationV1().Leases(StorageNamespace).Create(context.Background(), leaseHeldBy(holder), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitConnected(context.Background(), "old", 5*time.Second); err != nil {
		t.Fatalf("WaitConnected: %v", err)
	}
	if d := podDeletes(cs); d != 0 {
		t.Errorf("%d pod deletions of a Connected driver", d)
	}
}

func leaseHeldBy(holder string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: LeaseName, Namespace: StorageNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}
}
