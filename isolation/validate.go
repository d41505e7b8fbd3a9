package isolation

// Validation of the application spec: Generate refuses what would give a
// policy wider than the spec asks for.

import (
	"errors"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

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
