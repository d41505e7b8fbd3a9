package isolation

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	tcp = corev1.ProtocolTCP
	udp = corev1.ProtocolUDP
)

var namespaces = map[string]map[string]string{"x": {}, "y": {"team": "a"}}

func pod(ns, name, ip string, ports ...NamedPort) Peer {
	return Peer{Namespace: ns, Name: name, Labels: map[string]string{"pod": name}, IP: netip.MustParseAddr(ip), Ports: ports}
}

var (
	xa  = pod("x", "a", "10.0.0.5", NamedPort{Name: "http", Port: 8080})
	xb  = pod("x", "b", "10.0.0.200")
	ya  = pod("y", "a", "10.0.1.5")
	yb  = pod("y", "b", "10.0.1.6")
	ext = Peer{Name: "ext", IP: netip.MustParseAddr("192.0.2.10")}
	in  = Peer{Name: "in-cidr", IP: netip.MustParseAddr("10.0.0.9")}
)

func ports(specs ...any) []networkingv1.NetworkPolicyPort {
	var out []networkingv1.NetworkPolicyPort
	for i := 0; i+1 < len(specs); i += 2 {
		proto := specs[i+1].(corev1.Protocol)
		var p intstr.IntOrString
		switch v := specs[i].(type) {
		case int:
			p = intstr.FromInt32(int32(v))
		case string:
			p = intstr.FromString(v)
		}
		out = append(out, networkingv1.NetworkPolicyPort{Port: &p, Protocol: &proto})
	}
	return out
}

func ingress(ns string, podSel *metav1.LabelSelector, rules ...networkingv1.NetworkPolicyIngressRule) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "in", Namespace: ns},
		Spec:       networkingv1.NetworkPolicySpec{PodSelector: *podSel, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, Ingress: rules},
	}
}

func egress(ns string, podSel *metav1.LabelSelector, rules ...networkingv1.NetworkPolicyEgressRule) networkingv1.NetworkPolicy {
	return networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "out", Namespace: ns},
		Spec:       networkingv1.NetworkPolicySpec{PodSelector: *podSel, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, Egress: rules},
	}
}

func from(peers ...networkingv1.NetworkPolicyPeer) networkingv1.NetworkPolicyIngressRule {
	return networkingv1.NetworkPolicyIngressRule{From: peers}
}

type probe struct {
	src, dst Peer
	port     int32
	proto    corev1.Protocol
	want     bool
}

func TestAllowed(t *testing.T) {
	endPort := int32(8080)
	tests := []struct {
		name     string
		policies []networkingv1.NetworkPolicy
		probes   []probe
	}{
		{"no policy allows everything", nil, []probe{
			{xa, xb, 80, tcp, true}, {ext, xa, 80, udp, true}, {xa, ext, 80, tcp, true}}},
		{"deny-all ingress leaves egress alone", []networkingv1.NetworkPolicy{ingress("x", sel())}, []probe{
			{xb, xa, 80, tcp, false}, {ya, xa, 80, tcp, false}, {ext, xb, 80, tcp, false}, {xa, ya, 80, tcp, true}}},
		{"a pod always reaches itself", []networkingv1.NetworkPolicy{ingress("x", sel()), egress("x", sel())}, []probe{
			{xa, xa, 80, tcp, true}, {xa, xa, 80, udp, true}, {xa, xb, 80, tcp, false}, {xb, xb, 81, tcp, true}}},
		{"pod selector alone means the policy's namespace", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), from(networkingv1.NetworkPolicyPeer{PodSelector: sel("pod", "b")}))}, []probe{
			{xb, xa, 80, tcp, true}, {yb, xa, 80, tcp, false}, {ya, xa, 80, tcp, false}, {ya, xb, 80, tcp, true}}},
		{"namespace selector alone admits the whole namespace", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), from(networkingv1.NetworkPolicyPeer{NamespaceSelector: sel("team", "a")}))}, []probe{
			{ya, xa, 80, tcp, true}, {yb, xa, 80, tcp, true}, {xb, xa, 80, tcp, false}}},
		{"namespace name label is implicit", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), from(networkingv1.NetworkPolicyPeer{NamespaceSelector: sel(NamespaceNameLabel, "y")}))}, []probe{
			{ya, xa, 80, tcp, true}, {xb, xa, 80, tcp, false}}},
		{"pod AND namespace in one peer", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), from(networkingv1.NetworkPolicyPeer{PodSelector: sel("pod", "b"), NamespaceSelector: sel("team", "a")}))}, []probe{
			{yb, xa, 80, tcp, true}, {ya, xa, 80, tcp, false}, {xb, xa, 80, tcp, false}}},
		{"two peers OR", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), from(networkingv1.NetworkPolicyPeer{PodSelector: sel("pod", "b")}, networkingv1.NetworkPolicyPeer{NamespaceSelector: sel("team", "a")}))}, []probe{
			{yb, xa, 80, tcp, true}, {ya, xa, 80, tcp, true}, {xb, xa, 80, tcp, true}, {ext, xa, 80, tcp, false}}},
		{"ipBlock with except, pods matched by IP", []networkingv1.NetworkPolicy{ingress("y", sel(), from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/24", Except: []string{"10.0.0.128/25"}}}))}, []probe{
			{xa, ya, 80, tcp, true}, {xb, ya, 80, tcp, false}, {in, ya, 80, tcp, true}, {ext, ya, 80, tcp, false}, {yb, ya, 80, tcp, false}}},
		{"ports: TCP only, protocol defaults to TCP", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: &[]intstr.IntOrString{intstr.FromInt32(80)}[0]}}})}, []probe{
			{xb, xa, 80, tcp, true}, {xb, xa, 80, udp, false}, {xb, xa, 81, tcp, false}, {ext, xa, 80, tcp, true}}},
		{"protocol without port admits every port of it", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &[]corev1.Protocol{udp}[0]}}})}, []probe{
			{xb, xa, 5353, udp, true}, {xb, xa, 80, tcp, false}}},
		{"endPort range", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: &[]intstr.IntOrString{intstr.FromInt32(8000)}[0], EndPort: &endPort}}})}, []probe{
			{xb, xa, 8000, tcp, true}, {xb, xa, 8080, tcp, true}, {xb, xa, 8081, tcp, false}, {xb, xa, 7999, tcp, false}, {xb, xa, 8040, udp, false}}},
		{"named port resolves on the destination", []networkingv1.NetworkPolicy{ingress("x", sel(), networkingv1.NetworkPolicyIngressRule{Ports: ports("http", tcp)})}, []probe{
			{ya, xa, 8080, tcp, true}, {ya, xa, 80, tcp, false}, {ya, xa, 8080, udp, false}, {ya, xb, 8080, tcp, false}}},
		{"named port with another protocol", []networkingv1.NetworkPolicy{ingress("x", sel(), networkingv1.NetworkPolicyIngressRule{Ports: ports("http", udp)})}, []probe{
			{ya, xa, 8080, tcp, false}, {ya, xa, 8080, udp, false}}},
		{"empty from admits all sources", []networkingv1.NetworkPolicy{ingress("x", sel("pod", "a"), networkingv1.NetworkPolicyIngressRule{})}, []probe{
			{ya, xa, 80, tcp, true}, {ext, xa, 80, udp, true}}},
		{"policies are additive", []networkingv1.NetworkPolicy{
			ingress("x", sel("pod", "a"), from(networkingv1.NetworkPolicyPeer{PodSelector: sel("pod", "b")})),
			ingress("x", sel("pod", "a"), from(networkingv1.NetworkPolicyPeer{NamespaceSelector: sel("team", "a"), PodSelector: sel("pod", "a")}))}, []probe{
			{xb, xa, 80, tcp, true}, {ya, xa, 80, tcp, true}, {yb, xa, 80, tcp, false}}},
		{"a policy in another namespace has no effect", []networkingv1.NetworkPolicy{ingress("y", sel("pod", "a"))}, []probe{
			{xb, xa, 80, tcp, true}, {xa, ya, 80, tcp, false}}},
		{"egress to a namespace on one port", []networkingv1.NetworkPolicy{egress("x", sel("pod", "a"), networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("team", "a")}}, Ports: ports(53, udp)})}, []probe{
			{xa, ya, 53, udp, true}, {xa, ya, 53, tcp, false}, {xa, xb, 53, udp, false}, {xa, ext, 53, udp, false}, {xb, xa, 80, tcp, true}, {ya, xa, 80, tcp, true}}},
		{"egress to an ipBlock reaches external addresses", []networkingv1.NetworkPolicy{egress("x", sel("pod", "a"), networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"}}}})}, []probe{
			{xa, ext, 443, tcp, true}, {xa, ya, 443, tcp, false}}},
		{"egress named port resolves on the destination", []networkingv1.NetworkPolicy{egress("y", sel(), networkingv1.NetworkPolicyEgressRule{Ports: ports("http", tcp)})}, []probe{
			{ya, xa, 8080, tcp, true}, {ya, xb, 8080, tcp, false}, {ya, ext, 8080, tcp, false}}},
		{"egress and ingress must both allow", []networkingv1.NetworkPolicy{
			egress("x", sel("pod", "a"), networkingv1.NetworkPolicyEgressRule{}),
			ingress("y", sel("pod", "a"), from(networkingv1.NetworkPolicyPeer{PodSelector: sel("pod", "b")}))}, []probe{
			{xa, ya, 80, tcp, false}, {yb, ya, 80, tcp, true}, {xa, yb, 80, tcp, true}}},
		{"policyTypes default: egress rules make it an egress policy", []networkingv1.NetworkPolicy{{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "x"},
			Spec: networkingv1.NetworkPolicySpec{PodSelector: *sel("pod", "a"),
				Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("pod", "b")}}}}}}}, []probe{
			{xa, xb, 80, tcp, true}, {xa, ya, 80, tcp, false}, {xb, xa, 80, tcp, false}}},
		{"egress-only policy leaves ingress open", []networkingv1.NetworkPolicy{egress("x", sel("pod", "a"))}, []probe{
			{ya, xa, 80, tcp, true}, {xa, ya, 80, tcp, false}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewModel(namespaces, tc.policies)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.probes {
				if got := m.Allowed(p.src, p.dst, p.port, p.proto); got != p.want {
					t.Errorf("%s/%s -> %s/%s %s/%d: allowed=%v, want %v", p.src.Namespace, p.src.Name, p.dst.Namespace, p.dst.Name, p.proto, p.port, got, p.want)
				}
			}
		})
	}
}

func TestNewRejectsMalformedPolicies(t *testing.T) {
	low := int32(10)
	p80 := intstr.FromInt32(80)
	named := intstr.FromString("http")
	tests := []struct {
		name   string
		policy networkingv1.NetworkPolicy
		errHas string
	}{
		{"bad cidr", ingress("x", sel(), from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/40"}})), "cidr"},
		{"bad except", ingress("x", sel(), from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"x"}}})), "except"},
		{"ipBlock with selector", ingress("x", sel(), from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, PodSelector: sel()})), "combined"},
		{"empty peer", ingress("x", sel(), from(networkingv1.NetworkPolicyPeer{})), "empty peer"},
		{"endPort below port", ingress("x", sel(), networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: &p80, EndPort: &low}}}), "endPort"},
		{"endPort with named port", ingress("x", sel(), networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: &named, EndPort: &low}}}), "named port"},
		{"endPort without port", ingress("x", sel(), networkingv1.NetworkPolicyIngressRule{Ports: []networkingv1.NetworkPolicyPort{{EndPort: &low}}}), "without port"},
		{"bad pod selector", ingress("x", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}), "podSelector"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewModel(namespaces, []networkingv1.NetworkPolicy{tc.policy})
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("error %v, want one mentioning %q", err, tc.errHas)
			}
		})
	}
}

func TestCiliumProfileIPBlockMatchesOnlyExternalPeers(t *testing.T) {
	pols := []networkingv1.NetworkPolicy{
		ingress("y", sel(), from(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}})),
		egress("x", sel("pod", "a"), networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}}}}),
	}
	up, err := NewModel(namespaces, pols)
	if err != nil {
		t.Fatal(err)
	}
	ci := up.WithProfile(Cilium)
	tests := []struct {
		src, dst     Peer
		upstream, ci bool
	}{
		{xb, ya, true, false},
		{in, ya, true, true},
		{xa, xb, true, false},
		{xa, ext, true, true},
	}
	for _, tc := range tests {
		if got := up.Allowed(tc.src, tc.dst, 80, tcp); got != tc.upstream {
			t.Errorf("upstream %s -> %s: %v", tc.src.Name, tc.dst.Name, got)
		}
		if got := ci.Allowed(tc.src, tc.dst, 80, tcp); got != tc.ci {
			t.Errorf("cilium %s -> %s: %v", tc.src.Name, tc.dst.Name, got)
		}
	}
	if p, err := ProfileByName("cilium"); err != nil || p != Cilium {
		t.Errorf("ProfileByName(cilium) = %v, %v", p, err)
	}
	if _, err := ProfileByName("flannel"); err == nil {
		t.Error("unknown profile accepted")
	}
}
