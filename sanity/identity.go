package sanity

import (
	"context"
	"fmt"

	"github.com/csi-addons/spec/lib/go/identity"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func describeIdentity(s *State) {
	Describe("Identity", func() {
		s.it("IDENT-001", func(ctx context.Context) {
			r, err := s.getIdentity(ctx)
			expectOK(err, "GetIdentity")
			Expect(r.GetName()).NotTo(BeEmpty(), "GetIdentity: name is empty")
			Expect(r.GetVendorVersion()).NotTo(BeEmpty(), "GetIdentity: vendor_version is empty")
		})

		s.it("IDENT-002", func(ctx context.Context) {
			r, err := s.probe(ctx)
			expectOK(err, "Probe")
			if r.GetReady() != nil {
				Expect(r.GetReady().GetValue()).To(BeTrue(), "Probe: ready is false")
			}
		})

		s.it("IDENT-003", func(ctx context.Context) {
			caps, err := s.getCapabilities(ctx)
			expectOK(err, "GetCapabilities")
			Expect(capNames(caps)).To(ContainElement("NETWORK_FENCE"), "GetCapabilities: NETWORK_FENCE is not advertised")
		})

		s.it("IDENT-004", func(ctx context.Context) {
			if !s.hasCap(identity.Capability_NetworkFence_GET_CLIENTS_TO_FENCE) {
				notSupported("not applicable: the driver does not advertise GET_CLIENTS_TO_FENCE")
			}
			_, err := s.clients(ctx)
			Expect(codeName(err)).NotTo(Equal("Unimplemented"), "GetFenceClients answered UNIMPLEMENTED although GET_CLIENTS_TO_FENCE is advertised")
		})

		s.it("IDENT-005", func(ctx context.Context) {
			if s.hasCap(identity.Capability_NetworkFence_GET_CLIENTS_TO_FENCE) {
				notSupported("not applicable: the driver advertises GET_CLIENTS_TO_FENCE")
			}
			_, err := s.clients(ctx)
			expectCode(err, "GetFenceClients without the capability", "Unimplemented")
		})

		s.it("IDENT-006", func(ctx context.Context) {
			note("capabilities: %v", capNames(s.Caps))
			note("identity: name=%q vendor_version=%q manifest=%v", s.Identity.GetName(), s.Identity.GetVendorVersion(), s.Identity.GetManifest())
		})
	})
}

// capNames spells capabilities by their names in the spec (NETWORK_FENCE,
// CONTROLLER_SERVICE, ...), read through protobuf reflection so that kinds
// this suite does not know (reclaim space, replication) are named the same
// way, as kind.TYPE.
func capNames(caps []*identity.Capability) []string {
	var out []string
	for _, c := range caps {
		switch t := c.GetType().(type) {
		case *identity.Capability_Service_:
			out = append(out, t.Service.GetType().String())
		case *identity.Capability_NetworkFence_:
			out = append(out, t.NetworkFence.GetType().String())
		default:
			out = append(out, reflectCapName(c))
		}
	}
	return out
}

func reflectCapName(c *identity.Capability) string {
	name := "UNKNOWN"
	c.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		inner := v.Message()
		tf := inner.Descriptor().Fields().ByName("type")
		if tf == nil || tf.Kind() != protoreflect.EnumKind {
			name = string(fd.Name())
			return false
		}
		ev := tf.Enum().Values().ByNumber(inner.Get(tf).Enum())
		name = string(fd.Name()) + "."
		if ev != nil {
			name += string(ev.Name())
		} else {
			name += fmt.Sprint(inner.Get(tf).Enum())
		}
		return false
	})
	return name
}
