package isolation

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func names(t *testing.T, cs *fake.Clientset) []string {
	t.Helper()
	l, err := cs.NetworkingV1().NetworkPolicies("mods").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, p := range l.Items {
		n = append(n, p.Name)
	}
	sort.Strings(n)
	return n
}

func TestApplyCreatesUpdatesAndPrunes(t *testing.T) {
	ctx := context.Background()
	foreign := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: "mods"}}
	cs := fake.NewClientset(foreign)

	a := app(Selector{WorkloadSelector: sel("app", "nb")})
	if _, err := Apply(ctx, cs, a); err != nil {
		t.Fatal(err)
	}
	want := []string{"fenceproof-nb-m0", "fenceproof-nb-m1", "fenceproof-nb-m2", "someone-elses"}
	if d := cmp.Diff(want, names(t, cs)); d != "" {
		t.Fatalf("after create (-want +got):\n%s", d)
	}

	a.Selector = Selector{WorkloadLocations: []WorkloadLocation{{NamespaceSelector: sel("team", "a")}}}
	if _, err := Apply(ctx, cs, a); err != nil {
		t.Fatal(err)
	}
	p, err := cs.NetworkingV1().NetworkPolicies("mods").Get(ctx, "fenceproof-nb-m0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("team", "a")}}, p.Spec.Ingress[0].From); d != "" {
		t.Errorf("entry policy not updated (-want +got):\n%s", d)
	}

	a.Chain.Modules = a.Chain.Modules[:2]
	if _, err := Apply(ctx, cs, a); err != nil {
		t.Fatal(err)
	}
	want = []string{"fenceproof-nb-m0", "fenceproof-nb-m1", "someone-elses"}
	if d := cmp.Diff(want, names(t, cs)); d != "" {
		t.Errorf("stale policy not pruned (-want +got):\n%s", d)
	}

	a.Selector = Selector{}
	if _, err := Apply(ctx, cs, a); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"someone-elses"}, names(t, cs)); d != "" {
		t.Errorf("empty selector must leave no policy of the app (-want +got):\n%s", d)
	}
}

func TestApplyInvalidChangesNothing(t *testing.T) {
	cs := fake.NewClientset()
	a := app(Selector{WorkloadLocations: []WorkloadLocation{{IPBlock: &networkingv1.IPBlock{CIDR: "bogus"}}}})
	if _, err := Apply(context.Background(), cs, a); err == nil {
		t.Fatal("invalid spec applied")
	}
	if n := names(t, cs); len(n) != 0 {
		t.Errorf("policies created from an invalid spec: %v", n)
	}
}

func TestParseStrict(t *testing.T) {
	good := []byte(`
name: nb
namespace: apps
selector:
  workloadLocations:
  - workloadPodSelector: {matchLabels: {app: nb}}
    namespaceSelector: {matchLabels: {team: a}}
  - ipBlock: {cidr: 192.0.2.0/24, except: [192.0.2.8/29]}
chain:
  namespace: mods
  modules:
  - name: m0
    podSelector: {module: m0}
    ports: [{port: 80, protocol: TCP}]
`)
	a, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Selector.WorkloadLocations) != 2 || a.Selector.WorkloadLocations[1].IPBlock.Except[0] != "192.0.2.8/29" {
		t.Errorf("parsed %+v", a)
	}
	if _, err := Parse([]byte("name: nb\nselector:\n  workloadSelectr: {}\n")); err == nil {
		t.Error("a misspelt field was accepted")
	}
}
