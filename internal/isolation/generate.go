package isolation

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Generate returns the NetworkPolicies that isolate app's data plane, one per
// module, in chain order. An application with no workload locations and no
// legacy workloadSelector gets no policies (nil, nil), as the design says.
// Invalid input is an error; Generate never returns a policy wider than the
// input asks for.
func Generate(app Application) ([]networkingv1.NetworkPolicy, error) {
	if err := validateApp(app); err != nil {
		return nil, err
	}
	sources, err := WorkloadPeers(app)
	if err != nil {
		return nil, err
	}
	if len(sources) == 0 {
		return nil, nil
	}
	dns := DefaultDNS()
	if app.Chain.DNS != nil {
		dns = *app.Chain.DNS
	}
	mods := app.Chain.Modules
	policies := make([]networkingv1.NetworkPolicy, 0, len(mods))
	for i, m := range mods {
		from := sources
		if i > 0 {
			from = []networkingv1.NetworkPolicyPeer{{PodSelector: matchLabels(mods[i-1].PodSelector)}}
		}
		var egress []networkingv1.NetworkPolicyEgressRule
		if i+1 < len(mods) {
			next := mods[i+1]
			egress = append(egress, networkingv1.NetworkPolicyEgressRule{
				To:    []networkingv1.NetworkPolicyPeer{{PodSelector: matchLabels(next.PodSelector)}},
				Ports: policyPorts(next.Ports),
			})
		}
		for _, t := range m.Egress {
			egress = append(egress, networkingv1.NetworkPolicyEgressRule{
				To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: t.CIDR, Except: slices.Clone(t.Except)}}},
				Ports: policyPorts(t.Ports),
			})
		}
		egress = append(egress, dnsRule(dns))
		policies = append(policies, networkingv1.NetworkPolicy{
			TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      PolicyName(app.Name, m.Name),
				Namespace: app.Chain.Namespace,
				Labels: map[string]string{
					LabelApplication:          app.Name,
					LabelApplicationNamespace: app.Namespace,
					LabelModule:               m.Name,
				},
			},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: *matchLabels(m.PodSelector),
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
				Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: from, Ports: policyPorts(m.Ports)}},
				Egress:      egress,
			},
		})
	}
	return policies, nil
}

// PolicyName is the name of the policy that isolates one module of an
// application.
func PolicyName(app, module string) string {
	return "fenceproof-" + app + "-" + module
}

// WorkloadPeers converts the workload locations, then the legacy
// workloadSelector, into the peers of the entry module's ingress rule,
// dropping exact duplicates. It returns an error for an invalid location.
func WorkloadPeers(app Application) ([]networkingv1.NetworkPolicyPeer, error) {
	var peers []networkingv1.NetworkPolicyPeer
	add := func(p networkingv1.NetworkPolicyPeer) {
		for _, q := range peers {
			if equality.Semantic.DeepEqual(p, q) {
				return
			}
		}
		peers = append(peers, p)
	}
	for i, loc := range app.Selector.WorkloadLocations {
		p, err := locationPeer(loc)
		if err != nil {
			return nil, fmt.Errorf("selector.workloadLocations[%d]: %w", i, err)
		}
		add(p)
	}
	if ws := app.Selector.WorkloadSelector; ws != nil {
		if err := validateSelector(ws); err != nil {
			return nil, fmt.Errorf("selector.workloadSelector: %w", err)
		}
		add(LegacyLocation(app.Namespace, ws).peer())
	}
	return peers, nil
}

// LegacyLocation is the workload location the deprecated workloadSelector of
// an application in namespace ns stands for.
func LegacyLocation(ns string, workloadSelector *metav1.LabelSelector) WorkloadLocation {
	return WorkloadLocation{
		WorkloadPodSelector: workloadSelector.DeepCopy(),
		NamespaceSelector:   &metav1.LabelSelector{MatchLabels: map[string]string{NamespaceNameLabel: ns}},
	}
}

func (loc WorkloadLocation) peer() networkingv1.NetworkPolicyPeer {
	return networkingv1.NetworkPolicyPeer{
		PodSelector:       loc.WorkloadPodSelector.DeepCopy(),
		NamespaceSelector: loc.NamespaceSelector.DeepCopy(),
		IPBlock:           loc.IPBlock.DeepCopy(),
	}
}

func locationPeer(loc WorkloadLocation) (networkingv1.NetworkPolicyPeer, error) {
	hasSelector := loc.WorkloadPodSelector != nil || loc.NamespaceSelector != nil
	switch {
	case loc.IPBlock != nil && hasSelector:
		return networkingv1.NetworkPolicyPeer{}, errors.New("ipBlock cannot be combined with workloadPodSelector or namespaceSelector in one location; use two locations")
	case loc.IPBlock != nil:
		if err := ValidateIPBlock(loc.IPBlock.CIDR, loc.IPBlock.Except); err != nil {
			return networkingv1.NetworkPolicyPeer{}, fmt.Errorf("ipBlock: %w", err)
		}
	case !hasSelector:
		return networkingv1.NetworkPolicyPeer{}, errors.New("empty location: set workloadPodSelector, namespaceSelector or ipBlock")
	}
	if err := validateSelector(loc.WorkloadPodSelector); err != nil {
		return networkingv1.NetworkPolicyPeer{}, fmt.Errorf("workloadPodSelector: %w", err)
	}
	if err := validateSelector(loc.NamespaceSelector); err != nil {
		return networkingv1.NetworkPolicyPeer{}, fmt.Errorf("namespaceSelector: %w", err)
	}
	return loc.peer(), nil
}

// ValidateIPBlock checks that cidr is a canonical prefix (no host bits set)
// and that every except entry is a canonical prefix strictly inside it.
func ValidateIPBlock(cidr string, except []string) error {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return fmt.Errorf("malformed cidr %q: %w", cidr, err)
	}
	if p != p.Masked() {
		return fmt.Errorf("cidr %q has host bits set (did you mean %s?)", cidr, p.Masked())
	}
	for _, e := range except {
		q, err := netip.ParsePrefix(e)
		if err != nil {
			return fmt.Errorf("malformed except %q: %w", e, err)
		}
		if q != q.Masked() {
			return fmt.Errorf("except %q has host bits set (did you mean %s?)", e, q.Masked())
		}
		if q.Addr().Is4() != p.Addr().Is4() || q.Bits() <= p.Bits() || !p.Contains(q.Addr()) {
			return fmt.Errorf("except %q is not strictly inside cidr %q", e, cidr)
		}
	}
	return nil
}

func validateSelector(s *metav1.LabelSelector) error {
	if s == nil {
		return nil
	}
	_, err := metav1.LabelSelectorAsSelector(s)
	return err
}

func validateApp(app Application) error {
	for what, v := range map[string]string{"name": app.Name, "namespace": app.Namespace, "chain.namespace": app.Chain.Namespace} {
		if errs := validation.IsDNS1123Label(v); len(errs) > 0 {
			return fmt.Errorf("application %s %q: %v", what, v, errs)
		}
	}
	mods := app.Chain.Modules
	if len(mods) == 0 {
		return errors.New("chain.modules: at least the entry module is required")
	}
	for i, m := range mods {
		if errs := validation.IsDNS1123Label(m.Name); len(errs) > 0 {
			return fmt.Errorf("chain.modules[%d].name %q: %v", i, m.Name, errs)
		}
		if len(m.PodSelector) == 0 {
			return fmt.Errorf("chain.modules[%d] (%s): empty podSelector would select every pod in %s", i, m.Name, app.Chain.Namespace)
		}
		if err := validatePorts(m.Ports); err != nil {
			return fmt.Errorf("chain.modules[%d] (%s).ports: %w", i, m.Name, err)
		}
		for j, t := range m.Egress {
			if err := ValidateIPBlock(t.CIDR, t.Except); err != nil {
				return fmt.Errorf("chain.modules[%d] (%s).egress[%d]: %w", i, m.Name, j, err)
			}
			if err := validatePorts(t.Ports); err != nil {
				return fmt.Errorf("chain.modules[%d] (%s).egress[%d].ports: %w", i, m.Name, j, err)
			}
		}
		for j, o := range mods[:i] {
			if o.Name == m.Name {
				return fmt.Errorf("chain.modules[%d]: duplicate module name %q", i, m.Name)
			}
			if subset(o.PodSelector, m.PodSelector) || subset(m.PodSelector, o.PodSelector) {
				return fmt.Errorf("chain.modules[%d] (%s) and [%d] (%s): podSelectors overlap, a pod could be both modules", j, o.Name, i, m.Name)
			}
		}
	}
	if d := app.Chain.DNS; d != nil {
		if d.Namespace == "" || len(d.PodSelector) == 0 || d.Port < 1 || d.Port > 65535 {
			return errors.New("chain.dns: namespace, podSelector and port (1-65535) are required")
		}
	}
	return nil
}

func validatePorts(ports []Port) error {
	if len(ports) == 0 {
		return errors.New("at least one port is required (no ports would mean every port)")
	}
	for _, p := range ports {
		if p.Port < 1 || p.Port > 65535 {
			return fmt.Errorf("port %d out of range 1-65535", p.Port)
		}
		switch p.Protocol {
		case "", corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			return fmt.Errorf("port %d: unknown protocol %q", p.Port, p.Protocol)
		}
	}
	return nil
}

// subset reports whether every label of a is in b: a selector a then
// selects every pod b selects.
func subset(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func matchLabels(l map[string]string) *metav1.LabelSelector {
	m := make(map[string]string, len(l))
	for k, v := range l {
		m[k] = v
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func policyPorts(ports []Port) []networkingv1.NetworkPolicyPort {
	out := make([]networkingv1.NetworkPolicyPort, 0, len(ports))
	for _, p := range ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		port := intstr.FromInt32(p.Port)
		out = append(out, networkingv1.NetworkPolicyPort{Protocol: &proto, Port: &port})
	}
	return out
}

func dnsRule(d DNS) networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: matchLabels(map[string]string{NamespaceNameLabel: d.Namespace}),
			PodSelector:       matchLabels(d.PodSelector),
		}},
		Ports: policyPorts([]Port{{Port: d.Port, Protocol: corev1.ProtocolUDP}, {Port: d.Port, Protocol: corev1.ProtocolTCP}}),
	}
}
