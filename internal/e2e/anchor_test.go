package e2e

import (
	"context"
	"os"
	"testing"

	admv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/e2e-framework/klient/decoder"
)

// The anchor binding must name a policy whose paramKind is ConfigMap, or
// kube-apiserver still drops the ConfigMap parameter informer
// (kubernetes/kubernetes#130887), and it must match no namespace.
func TestParamAnchorKeepsTheConfigMapParamKindBound(t *testing.T) {
	p, err := findRepoPaths()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p.anchor)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := decoder.DecodeAll(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var policy *admv1.ValidatingAdmissionPolicy
	var binding *admv1.ValidatingAdmissionPolicyBinding
	for _, o := range objs {
		switch o := o.(type) {
		case *admv1.ValidatingAdmissionPolicy:
			policy = o
		case *admv1.ValidatingAdmissionPolicyBinding:
			binding = o
		}
	}
	if policy == nil || binding == nil {
		t.Fatalf("want a policy and a binding, got %d objects", len(objs))
	}
	if k := policy.Spec.ParamKind; k == nil || k.APIVersion != "v1" || k.Kind != "ConfigMap" {
		t.Errorf("paramKind = %+v, want v1 ConfigMap", k)
	}
	if binding.Spec.PolicyName != policy.Name || binding.Spec.ParamRef == nil {
		t.Errorf("binding %+v does not bind the policy with a paramRef", binding.Spec)
	}
	if sel := binding.Spec.MatchResources; sel == nil || sel.NamespaceSelector == nil || len(sel.NamespaceSelector.MatchLabels) == 0 {
		t.Error("the binding must match no namespace (a label nobody sets)")
	}
}
