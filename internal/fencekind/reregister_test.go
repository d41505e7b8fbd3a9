package fencekind

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

func driverPod(name string, readySince time.Duration, deleting bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: StorageNamespace, Labels: labels(DriverName)},
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

func TestReadyDriverPodOnlyAfterTheGracePeriod(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pods   []*corev1.Pod
		notPod string
		want   string
	}{
		{"ready long enough", []*corev1.Pod{driverPod("new", time.Minute, false)}, "old", "new"},
		{"ready too recently", []*corev1.Pod{driverPod("new", 5*time.Second, false)}, "old", ""},
		{"the pod being replaced", []*corev1.Pod{driverPod("old", time.Minute, false)}, "old", ""},
		{"a pod being deleted", []*corev1.Pod{driverPod("new", time.Minute, true)}, "old", ""},
		{"no pod", nil, "old", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset()
			for _, p := range tc.pods {
				if _, err := cs.CoreV1().Pods(StorageNamespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if got := (Cluster{CS: cs}).readyDriverPod(context.Background(), tc.notPod, reregisterAfter); got != tc.want {
				t.Errorf("readyDriverPod = %q, want %q", got, tc.want)
			}
		})
	}
}

// csiAddonsNode is the driver's CSIAddonsNode in a state, naming endpoint.
func csiAddonsNode(state, endpoint string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "csiaddons.openshift.io/v1alpha1", "kind": "CSIAddonsNode",
		"metadata": map[string]any{"name": "driver-node", "namespace": StorageNamespace},
		"spec":     map[string]any{"driver": map[string]any{"endpoint": endpoint}},
		"status":   map[string]any{"state": state},
	}}
	return u
}

func stalledCluster(t *testing.T, nodes ...runtime.Object) (Cluster, *fake.Clientset) {
	t.Helper()
	old := reregisterAfter
	reregisterAfter = 0
	t.Cleanup(func() { reregisterAfter = old })
	cs := fake.NewSimpleClientset(driverPod("new", time.Minute, false))
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{CSIAddonsNodeGVR: "CSIAddonsNodeList"}, nodes...)
	return Cluster{CS: cs, Dyn: dyn}, cs
}

// Regression: csi-addons v0.14.0 left the CSIAddonsNode Retrying the
// replaced pod's endpoint for minutes; WaitConnected annotates it so the
// controller reconciles the current endpoint.
func TestWaitConnectedAnnotatesAStalledCSIAddonsNode(t *testing.T) {
	c, cs := stalledCluster(t, csiAddonsNode("Retrying", "pod://new.fenceproof-fence:9070"))
	if err := c.WaitConnected(context.Background(), "old", 2500*time.Millisecond); err == nil {
		t.Fatal("WaitConnected succeeded without a Connected CSIAddonsNode")
	}
	n, err := c.Dyn.Resource(CSIAddonsNodeGVR).Namespace(StorageNamespace).Get(context.Background(), "driver-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.GetAnnotations()["fenceproof.io/refresh"] == "" {
		t.Errorf("the stalled CSIAddonsNode was not annotated: %v", n.GetAnnotations())
	}
	if _, err := cs.CoreV1().Pods(StorageNamespace).Get(context.Background(), "new", metav1.GetOptions{}); err != nil {
		t.Errorf("the driver pod was deleted although its CSIAddonsNode exists: %v", err)
	}
}

// Regression: csi-addons v0.14.0 deleted the CSIAddonsNode after the new
// sidecar had registered into it; WaitConnected restarts the driver pod
// once so that its replacement registers.
func TestWaitConnectedRestartsTheDriverPodOnceWhenItsCSIAddonsNodeIsGone(t *testing.T) {
	c, cs := stalledCluster(t)
	if err := c.WaitConnected(context.Background(), "old", 2500*time.Millisecond); err == nil {
		t.Fatal("WaitConnected succeeded without a CSIAddonsNode")
	}
	if _, err := cs.CoreV1().Pods(StorageNamespace).Get(context.Background(), "new", metav1.GetOptions{}); err == nil {
		t.Error("the driver pod without a CSIAddonsNode was not deleted")
	}
	deletes := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("%d pod deletions, want exactly 1", deletes)
	}
}
