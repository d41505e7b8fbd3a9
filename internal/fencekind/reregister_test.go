package fencekind

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
