package isolation

// The policy model: it predicts whether Kubernetes NetworkPolicies (v1)
// allow a connection: pod selectors, namespace selectors, ipBlock with
// except, numbered and named ports, endPort ranges, protocols and policy
// types.
//
// Traffic from A to B is allowed when A's egress allows it and B's ingress
// allows it, or when A and B are the same pod. A direction is allowed when
// no policy of that type selects the pod, or when at least one rule of a
// policy selecting it matches the peer and the port. Peers outside the
// cluster (no namespace) are never selected by a policy and match only
// ipBlock peers.

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Peer is a pod or an address outside the cluster.
type Peer struct {
	// Namespace of the pod; empty for an address outside the cluster.
	Namespace string
	// Name of the pod, for messages.
	Name string
	// Labels of the pod.
	Labels map[string]string
	// IP of the pod or the external address.
	IP netip.Addr
	// Ports are the pod's named container ports, used to resolve named
	// ports in policies.
	Ports []NamedPort
}

// NamedPort is a named container port.
type NamedPort struct {
	Name     string
	Port     int32
	Protocol corev1.Protocol
}

// Model evaluates a fixed set of policies against peers. It adds
// NamespaceNameLabel to every namespace it knows, as the API server does.
type Model struct {
	namespaces map[string]labels.Set
	policies   []policy
	profile    Profile
}

type policy struct {
	name      string
	namespace string
	selector  labels.Selector
	ingress   *[]rule
	egress    *[]rule
}

// rule is one ingress or egress rule; nil peers or nil ports mean all.
type rule struct {
	peers []peerRule
	ports []portMatch
}

type peerRule struct {
	pods       labels.Selector
	namespaces labels.Selector
	ipBlock    *ipBlock
}

type ipBlock struct {
	cidr   netip.Prefix
	except []netip.Prefix
}

type portMatch struct {
	protocol corev1.Protocol
	any      bool
	from, to int32
	name     string
}

// NewModel compiles policies under the Upstream profile; namespaces maps every
// namespace the endpoints live in to its labels. Malformed policies (bad
// selector, CIDR, port range) are errors rather than guesses.
func NewModel(namespaces map[string]map[string]string, policies []networkingv1.NetworkPolicy) (*Model, error) {
	m := &Model{namespaces: map[string]labels.Set{}, profile: Upstream}
	for ns, l := range namespaces {
		s := labels.Set{}
		for k, v := range l {
			s[k] = v
		}
		s[NamespaceNameLabel] = ns
		m.namespaces[ns] = s
	}
	for _, np := range policies {
		p, err := compile(np)
		if err != nil {
			return nil, fmt.Errorf("policy %s/%s: %w", np.Namespace, np.Name, err)
		}
		m.policies = append(m.policies, p)
	}
	return m, nil
}

func compile(np networkingv1.NetworkPolicy) (policy, error) {
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		return policy{}, fmt.Errorf("podSelector: %w", err)
	}
	p := policy{name: np.Name, namespace: np.Namespace, selector: sel}
	ingressType, egressType := policyTypes(np.Spec)
	if ingressType {
		rules := []rule{}
		for i, r := range np.Spec.Ingress {
			c, err := compileRule(r.From, r.Ports)
			if err != nil {
				return policy{}, fmt.Errorf("ingress[%d]: %w", i, err)
			}
			rules = append(rules, c)
		}
		p.ingress = &rules
	}
	if egressType {
		rules := []rule{}
		for i, r := range np.Spec.Egress {
			c, err := compileRule(r.To, r.Ports)
			if err != nil {
				return policy{}, fmt.Errorf("egress[%d]: %w", i, err)
			}
			rules = append(rules, c)
		}
		p.egress = &rules
	}
	return p, nil
}

// policyTypes applies the API default: Ingress always, Egress when the
// policy has egress rules, unless policyTypes says otherwise.
func policyTypes(s networkingv1.NetworkPolicySpec) (ingress, egress bool) {
	if len(s.PolicyTypes) == 0 {
		return true, len(s.Egress) > 0
	}
	for _, t := range s.PolicyTypes {
		switch t {
		case networkingv1.PolicyTypeIngress:
			ingress = true
		case networkingv1.PolicyTypeEgress:
			egress = true
		}
	}
	return ingress, egress
}

func compileRule(peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) (rule, error) {
	var r rule
	for i, p := range peers {
		c, err := compilePeer(p)
		if err != nil {
			return rule{}, fmt.Errorf("peer[%d]: %w", i, err)
		}
		r.peers = append(r.peers, c)
	}
	for i, p := range ports {
		c, err := compilePort(p)
		if err != nil {
			return rule{}, fmt.Errorf("ports[%d]: %w", i, err)
		}
		r.ports = append(r.ports, c)
	}
	return r, nil
}

func compilePeer(p networkingv1.NetworkPolicyPeer) (peerRule, error) {
	if p.IPBlock != nil {
		if p.PodSelector != nil || p.NamespaceSelector != nil {
			return peerRule{}, fmt.Errorf("ipBlock cannot be combined with selectors")
		}
		cidr, err := netip.ParsePrefix(p.IPBlock.CIDR)
		if err != nil {
			return peerRule{}, fmt.Errorf("ipBlock cidr: %w", err)
		}
		b := &ipBlock{cidr: cidr.Masked()}
		for _, e := range p.IPBlock.Except {
			x, err := netip.ParsePrefix(e)
			if err != nil {
				return peerRule{}, fmt.Errorf("ipBlock except: %w", err)
			}
			b.except = append(b.except, x.Masked())
		}
		return peerRule{ipBlock: b}, nil
	}
	if p.PodSelector == nil && p.NamespaceSelector == nil {
		return peerRule{}, fmt.Errorf("empty peer: set podSelector, namespaceSelector or ipBlock")
	}
	var c peerRule
	var err error
	if p.PodSelector != nil {
		if c.pods, err = metav1.LabelSelectorAsSelector(p.PodSelector); err != nil {
			return peerRule{}, fmt.Errorf("podSelector: %w", err)
		}
	}
	if p.NamespaceSelector != nil {
		if c.namespaces, err = metav1.LabelSelectorAsSelector(p.NamespaceSelector); err != nil {
			return peerRule{}, fmt.Errorf("namespaceSelector: %w", err)
		}
	}
	return c, nil
}

func compilePort(p networkingv1.NetworkPolicyPort) (portMatch, error) {
	c := portMatch{protocol: corev1.ProtocolTCP}
	if p.Protocol != nil {
		c.protocol = *p.Protocol
	}
	switch {
	case p.Port == nil:
		if p.EndPort != nil {
			return portMatch{}, fmt.Errorf("endPort without port")
		}
		c.any = true
	case p.Port.Type == intstr.String:
		if p.EndPort != nil {
			return portMatch{}, fmt.Errorf("endPort with named port %q", p.Port.StrVal)
		}
		c.name = p.Port.StrVal
	default:
		c.from, c.to = p.Port.IntVal, p.Port.IntVal
		if p.EndPort != nil {
			if *p.EndPort < c.from {
				return portMatch{}, fmt.Errorf("endPort %d below port %d", *p.EndPort, c.from)
			}
			c.to = *p.EndPort
		}
	}
	return c, nil
}

// Allowed reports whether a connection from src to dst on port/protocol is
// allowed by both src's egress and dst's ingress. A pod always reaches
// itself: loopback follows no policy, as the upstream netpol e2e tests
// expect (Reachability.AllowLoopback) and network plugins behave.
func (m *Model) Allowed(src, dst Peer, port int32, proto corev1.Protocol) bool {
	if src.Namespace != "" && src.Namespace == dst.Namespace && src.Name == dst.Name {
		return true
	}
	return m.EgressAllowed(src, dst, port, proto) && m.IngressAllowed(src, dst, port, proto)
}

// IngressAllowed reports whether dst's ingress policies admit the
// connection.
func (m *Model) IngressAllowed(src, dst Peer, port int32, proto corev1.Protocol) bool {
	return m.direction(dst, src, dst, port, proto, func(p policy) *[]rule { return p.ingress })
}

// EgressAllowed reports whether src's egress policies let the connection
// out.
func (m *Model) EgressAllowed(src, dst Peer, port int32, proto corev1.Protocol) bool {
	return m.direction(src, dst, dst, port, proto, func(p policy) *[]rule { return p.egress })
}

// direction evaluates the policies of one type selecting subject against
// the other end (peer); ports resolve against the destination.
func (m *Model) direction(subject, other, dst Peer, port int32, proto corev1.Protocol, rules func(policy) *[]rule) bool {
	if subject.Namespace == "" {
		return true
	}
	selected := false
	for _, p := range m.policies {
		rs := rules(p)
		if rs == nil || p.namespace != subject.Namespace || !p.selector.Matches(labels.Set(subject.Labels)) {
			continue
		}
		selected = true
		for _, r := range *rs {
			if m.ruleMatches(p.namespace, r, other, dst, port, proto) {
				return true
			}
		}
	}
	return !selected
}

func (m *Model) ruleMatches(policyNS string, r rule, other, dst Peer, port int32, proto corev1.Protocol) bool {
	portOK := len(r.ports) == 0
	for _, pm := range r.ports {
		if pm.matches(dst, port, proto) {
			portOK = true
			break
		}
	}
	if !portOK {
		return false
	}
	if r.peers == nil {
		return true
	}
	for _, p := range r.peers {
		if m.peerMatches(policyNS, p, other) {
			return true
		}
	}
	return false
}

func (m *Model) peerMatches(policyNS string, p peerRule, e Peer) bool {
	if p.ipBlock != nil {
		if e.Namespace != "" && !m.profile.IPBlockMatchesPods {
			return false
		}
		if !e.IP.IsValid() || !p.ipBlock.cidr.Contains(e.IP) {
			return false
		}
		for _, x := range p.ipBlock.except {
			if x.Contains(e.IP) {
				return false
			}
		}
		return true
	}
	if e.Namespace == "" {
		return false
	}
	if p.namespaces == nil {
		if e.Namespace != policyNS {
			return false
		}
	} else if !p.namespaces.Matches(m.namespaceLabels(e.Namespace)) {
		return false
	}
	return p.pods == nil || p.pods.Matches(labels.Set(e.Labels))
}

func (m *Model) namespaceLabels(ns string) labels.Set {
	if l, ok := m.namespaces[ns]; ok {
		return l
	}
	return labels.Set{NamespaceNameLabel: ns}
}

func (pm portMatch) matches(dst Peer, port int32, proto corev1.Protocol) bool {
	if pm.protocol != proto {
		return false
	}
	switch {
	case pm.any:
		return true
	case pm.name != "":
		for _, np := range dst.Ports {
			if np.Name == pm.name && np.Port == port && np.protocol() == proto {
				return true
			}
		}
		return false
	default:
		return pm.from <= port && port <= pm.to
	}
}

func (np NamedPort) protocol() corev1.Protocol {
	if np.Protocol == "" {
		return corev1.ProtocolTCP
	}
	return np.Protocol
}
