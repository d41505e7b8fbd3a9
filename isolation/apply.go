package isolation

import (
	"context"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// Apply makes the cluster hold exactly the generated policies of app: it
// creates missing ones, updates changed ones in place and deletes the app's
// policies that are no longer generated. Module pods are never touched, so a
// selector change takes effect without redeploying the data plane.
func Apply(ctx context.Context, cs kubernetes.Interface, app Application) ([]networkingv1.NetworkPolicy, error) {
	want, err := Generate(app)
	if err != nil {
		return nil, err
	}
	api := cs.NetworkingV1().NetworkPolicies(app.Chain.Namespace)
	owned := labels.Set{LabelApplication: app.Name, LabelApplicationNamespace: app.Namespace}
	have, err := api.List(ctx, metav1.ListOptions{LabelSelector: owned.String()})
	if err != nil {
		return nil, fmt.Errorf("list policies of %s: %w", app.Name, err)
	}
	existing := map[string]networkingv1.NetworkPolicy{}
	for _, p := range have.Items {
		existing[p.Name] = p
	}
	for _, p := range want {
		cur, ok := existing[p.Name]
		delete(existing, p.Name)
		if !ok {
			if _, err := api.Create(ctx, &p, metav1.CreateOptions{}); err != nil {
				return nil, fmt.Errorf("create %s: %w", p.Name, err)
			}
			continue
		}
		cur.Labels, cur.Spec = p.Labels, p.Spec
		if _, err := api.Update(ctx, &cur, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("update %s: %w", p.Name, err)
		}
	}
	for name := range existing {
		if err := api.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("delete stale %s: %w", name, err)
		}
	}
	return want, nil
}
