package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestDeleteNamespacesDeletesAllBeforeWaiting(t *testing.T) {
	ns := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	cs := fake.NewSimpleClientset(ns("a"), ns("b"), ns("keep"))
	if err := DeleteNamespaces(context.Background(), cs, 5*time.Second, "a", "missing", "b"); err != nil {
		t.Fatalf("DeleteNamespaces: %v", err)
	}
	l, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Name != "keep" {
		t.Errorf("left %v, want only keep", l.Items)
	}
	var verbs []string
	for _, a := range cs.Actions() {
		verbs = append(verbs, a.GetVerb())
	}
	if len(verbs) < 3 || verbs[0] != "delete" || verbs[1] != "delete" || verbs[2] != "delete" {
		t.Errorf("actions %v: the three deletions must come before any wait", verbs)
	}
}
