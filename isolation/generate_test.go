package isolation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func sel(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func chain() Chain {
	return Chain{
		Namespace: "mods",
		Modules: []Module{
			{Name: "m0", PodSelector: map[string]string{"module": "m0"}, Ports: []Port{{Port: 80}}},
			{Name: "m1", PodSelector: map[string]string{"module": "m1"}, Ports: []Port{{Port: 80}, {Port: 81, Protocol: corev1.ProtocolUDP}}},
			{Name: "m2", PodSelector: map[string]string{"module": "m2"}, Ports: []Port{{Port: 80}},
				Egress: []EgressTarget{{Name: "dataset", CIDR: "10.1.0.0/16", Except: []string{"10.1.2.0/24"}, Ports: []Port{{Port: 443}}}}},
		},
	}
}

func app(s Selector) Application {
	return Application{Name: "nb", Namespace: "apps", Selector: s, Chain: chain()}
}

func port(p int32, proto corev1.Protocol) networkingv1.NetworkPolicyPort {
	n := intstr.FromInt32(p)
	return networkingv1.NetworkPolicyPort{Port: &n, Protocol: &proto}
}

func TestGenerateChain(t *testing.T) {
	loc := WorkloadLocation{WorkloadPodSelector: sel("app", "nb")}
	pols, err := Generate(app(Selector{WorkloadLocations: []WorkloadLocation{loc}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(pols) != 3 {
		t.Fatalf("got %d policies, want one per module (3)", len(pols))
	}
	dns := networkingv1.NetworkPolicyEgressRule{
		To:    []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel(NamespaceNameLabel, "kube-system"), PodSelector: sel("k8s-app", "kube-dns")}},
		Ports: []networkingv1.NetworkPolicyPort{port(53, corev1.ProtocolUDP), port(53, corev1.ProtocolTCP)},
	}
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	want := []struct {
		name    string
		sel     string
		from    []networkingv1.NetworkPolicyPeer
		inPorts []networkingv1.NetworkPolicyPort
		egress  []networkingv1.NetworkPolicyEgressRule
	}{
		{"fenceproof-nb-m0", "m0",
			[]networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "nb")}},
			[]networkingv1.NetworkPolicyPort{port(80, tcp)},
			[]networkingv1.NetworkPolicyEgressRule{
				{To: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("module", "m1")}}, Ports: []networkingv1.NetworkPolicyPort{port(80, tcp), port(81, udp)}},
				dns}},
		{"fenceproof-nb-m1", "m1",
			[]networkingv1.NetworkPolicyPeer{{PodSelector: sel("module", "m0")}},
			[]networkingv1.NetworkPolicyPort{port(80, tcp), port(81, udp)},
			[]networkingv1.NetworkPolicyEgressRule{
				{To: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("module", "m2")}}, Ports: []networkingv1.NetworkPolicyPort{port(80, tcp)}},
				dns}},
		{"fenceproof-nb-m2", "m2",
			[]networkingv1.NetworkPolicyPeer{{PodSelector: sel("module", "m1")}},
			[]networkingv1.NetworkPolicyPort{port(80, tcp)},
			[]networkingv1.NetworkPolicyEgressRule{
				{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.1.0.0/16", Except: []string{"10.1.2.0/24"}}}}, Ports: []networkingv1.NetworkPolicyPort{port(443, tcp)}},
				dns}},
	}
	for i, w := range want {
		p := pols[i]
		if p.Name != w.name || p.Namespace != "mods" {
			t.Errorf("policy %d is %s/%s, want mods/%s", i, p.Namespace, p.Name, w.name)
		}
		if p.Labels[LabelApplication] != "nb" || p.Labels[LabelModule] != w.sel || p.Labels[LabelApplicationNamespace] != "apps" {
			t.Errorf("%s: labels %v", w.name, p.Labels)
		}
		if d := cmp.Diff(*sel("module", w.sel), p.Spec.PodSelector); d != "" {
			t.Errorf("%s: podSelector (-want +got):\n%s", w.name, d)
		}
		if d := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, p.Spec.PolicyTypes); d != "" {
			t.Errorf("%s: policyTypes (-want +got):\n%s", w.name, d)
		}
		wantIngress := []networkingv1.NetworkPolicyIngressRule{{From: w.from, Ports: w.inPorts}}
		if d := cmp.Diff(wantIngress, p.Spec.Ingress); d != "" {
			t.Errorf("%s: ingress (-want +got):\n%s", w.name, d)
		}
		if d := cmp.Diff(w.egress, p.Spec.Egress); d != "" {
			t.Errorf("%s: egress (-want +got):\n%s", w.name, d)
		}
	}
}

func TestLegacyEquivalentToLocation(t *testing.T) {
	legacy, err := Generate(app(Selector{WorkloadSelector: sel("app", "nb")}))
	if err != nil {
		t.Fatal(err)
	}
	located, err := Generate(app(Selector{WorkloadLocations: []WorkloadLocation{{
		WorkloadPodSelector: sel("app", "nb"),
		NamespaceSelector:   sel(NamespaceNameLabel, "apps"),
	}}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(legacy) == 0 {
		t.Fatal("legacy selector produced no policies")
	}
	if d := cmp.Diff(located, legacy); d != "" {
		t.Errorf("legacy workloadSelector differs from its equivalent location (-location +legacy):\n%s", d)
	}
}

func TestWorkloadPeers(t *testing.T) {
	ipb := &networkingv1.IPBlock{CIDR: "192.0.2.0/24", Except: []string{"192.0.2.128/25"}}
	tests := []struct {
		name string
		sel  Selector
		want []networkingv1.NetworkPolicyPeer
	}{
		{"none", Selector{}, nil},
		{"pod only: entry namespace", Selector{WorkloadLocations: []WorkloadLocation{{WorkloadPodSelector: sel("app", "nb")}}},
			[]networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "nb")}}},
		{"namespace only: whole namespace", Selector{WorkloadLocations: []WorkloadLocation{{NamespaceSelector: sel("team", "a")}}},
			[]networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("team", "a")}}},
		{"pod AND namespace in one peer", Selector{WorkloadLocations: []WorkloadLocation{{WorkloadPodSelector: sel("app", "nb"), NamespaceSelector: sel("team", "a")}}},
			[]networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "nb"), NamespaceSelector: sel("team", "a")}}},
		{"empty selectors select all", Selector{WorkloadLocations: []WorkloadLocation{{WorkloadPodSelector: &metav1.LabelSelector{}}}},
			[]networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}},
		{"ipBlock", Selector{WorkloadLocations: []WorkloadLocation{{IPBlock: ipb}}},
			[]networkingv1.NetworkPolicyPeer{{IPBlock: ipb}}},
		{"entries OR in order, legacy last", Selector{
			WorkloadSelector:  sel("app", "old"),
			WorkloadLocations: []WorkloadLocation{{IPBlock: ipb}, {NamespaceSelector: sel("team", "a")}}},
			[]networkingv1.NetworkPolicyPeer{{IPBlock: ipb}, {NamespaceSelector: sel("team", "a")},
				{PodSelector: sel("app", "old"), NamespaceSelector: sel(NamespaceNameLabel, "apps")}}},
		{"legacy equal to a location is not duplicated", Selector{
			WorkloadSelector:  sel("app", "nb"),
			WorkloadLocations: []WorkloadLocation{{WorkloadPodSelector: sel("app", "nb"), NamespaceSelector: sel(NamespaceNameLabel, "apps")}}},
			[]networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "nb"), NamespaceSelector: sel(NamespaceNameLabel, "apps")}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WorkloadPeers(app(tc.sel))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestNoLocationsNoPolicies(t *testing.T) {
	for _, s := range []Selector{{}, {WorkloadLocations: []WorkloadLocation{}}} {
		pols, err := Generate(app(s))
		if err != nil || pols != nil {
			t.Errorf("Generate(%+v) = %v, %v; want no policies and no error", s, pols, err)
		}
	}
}

func TestGenerateRejectsInvalidInput(t *testing.T) {
	loc := func(l WorkloadLocation) func(*Application) {
		return func(a *Application) { a.Selector.WorkloadLocations = []WorkloadLocation{l} }
	}
	ipb := func(cidr string, except ...string) func(*Application) {
		return loc(WorkloadLocation{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}})
	}
	tests := []struct {
		name   string
		mutate func(*Application)
		errHas string
	}{
		{"ipBlock with pod selector", loc(WorkloadLocation{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, WorkloadPodSelector: sel("a", "b")}), "cannot be combined"},
		{"ipBlock with namespace selector", loc(WorkloadLocation{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, NamespaceSelector: sel("a", "b")}), "cannot be combined"},
		{"malformed cidr", ipb("10.0.0.0/33"), "malformed cidr"},
		{"not a cidr", ipb("10.0.0.1"), "malformed cidr"},
		{"host bits", ipb("10.0.0.1/8"), "host bits"},
		{"except outside cidr", ipb("10.0.0.0/16", "10.1.0.0/24"), "not strictly inside"},
		{"except equal to cidr", ipb("10.0.0.0/16", "10.0.0.0/16"), "not strictly inside"},
		{"except wider than cidr", ipb("10.0.0.0/16", "10.0.0.0/8"), "not strictly inside"},
		{"except other family", ipb("10.0.0.0/16", "2001:db8::/64"), "not strictly inside"},
		{"malformed except", ipb("10.0.0.0/16", "10.0.0.0/99"), "malformed except"},
		{"empty location", loc(WorkloadLocation{}), "empty location"},
		{"bad selector operator", loc(WorkloadLocation{WorkloadPodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}}), "workloadPodSelector"},
		{"bad legacy selector", func(a *Application) {
			a.Selector.WorkloadSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: metav1.LabelSelectorOpIn}}}
		}, "workloadSelector"},
		{"no modules", func(a *Application) { a.Chain.Modules = nil }, "entry module"},
		{"empty module selector", func(a *Application) { a.Chain.Modules[1].PodSelector = nil }, "empty podSelector"},
		{"overlapping module selectors", func(a *Application) { a.Chain.Modules[2].PodSelector = map[string]string{"module": "m0", "x": "y"} }, "overlap"},
		{"duplicate module", func(a *Application) { a.Chain.Modules[2].Name = "m0" }, "duplicate"},
		{"module without ports", func(a *Application) { a.Chain.Modules[0].Ports = nil }, "at least one port"},
		{"port out of range", func(a *Application) { a.Chain.Modules[0].Ports = []Port{{Port: 70000}} }, "out of range"},
		{"unknown protocol", func(a *Application) { a.Chain.Modules[0].Ports = []Port{{Port: 80, Protocol: "ICMP"}} }, "unknown protocol"},
		{"bad dataset cidr", func(a *Application) { a.Chain.Modules[2].Egress[0].CIDR = "10.1.0.0" }, "egress[0]"},
		{"dataset without ports", func(a *Application) { a.Chain.Modules[2].Egress[0].Ports = nil }, "egress[0].ports"},
		{"bad namespace", func(a *Application) { a.Namespace = "Apps" }, "namespace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := app(Selector{WorkloadSelector: sel("app", "nb")})
			tc.mutate(&a)
			pols, err := Generate(a)
			if err == nil {
				t.Fatalf("no error, got %d policies", len(pols))
			}
			if !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %q does not mention %q", err, tc.errHas)
			}
			if pols != nil {
				t.Errorf("policies returned with an error: %v", pols)
			}
		})
	}
}

func TestGenerateDoesNotAliasInput(t *testing.T) {
	a := app(Selector{WorkloadLocations: []WorkloadLocation{{WorkloadPodSelector: sel("app", "nb")}}})
	pols, err := Generate(a)
	if err != nil {
		t.Fatal(err)
	}
	a.Selector.WorkloadLocations[0].WorkloadPodSelector.MatchLabels["app"] = "changed"
	a.Chain.Modules[0].PodSelector["module"] = "changed"
	if got := pols[0].Spec.Ingress[0].From[0].PodSelector.MatchLabels["app"]; got != "nb" {
		t.Errorf("policy follows a later change of the input: app=%s", got)
	}
	if got := pols[0].Spec.PodSelector.MatchLabels["module"]; got != "m0" {
		t.Errorf("policy follows a later change of the input: module=%s", got)
	}
}
