package isolation

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
