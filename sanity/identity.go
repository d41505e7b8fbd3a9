package sanity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/csi-addons/spec/lib/go/identity"
	. "github.com/onsi/ginkgo/v2"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func describeIdentity(s *State) {
	Describe("Identity", func() {
		s.it("IDENT-001", func(ctx context.Context) {
			r, err := s.getIdentity(ctx)
			expectOK(err, "GetIdentity")
			check(r.GetName() != "", "GetIdentity: name is empty")
			check(r.GetVendorVersion() != "", "GetIdentity: vendor_version is empty")
		})

		s.it("IDENT-002", func(ctx context.Context) {
			r, err := s.probe(ctx)
			expectOK(err, "Probe")
			check(r.GetReady() == nil || r.GetReady().GetValue(), "Probe: ready is false")
		})

		s.it("IDENT-003", func(ctx context.Context) {
			caps, err := s.getCapabilities(ctx)
			expectOK(err, "GetCapabilities")
			check(slices.Contains(capNames(caps), "NETWORK_FENCE"), "GetCapabilities: NETWORK_FENCE is not advertised (advertised: %s)", strings.Join(capNames(caps), ", "))
		})

		s.it("IDENT-004", func(ctx context.Context) {
			s.needCaps()
			if !s.hasCap(identity.Capability_NetworkFence_GET_CLIENTS_TO_FENCE) {
				notSupported("not applicable: the driver does not advertise GET_CLIENTS_TO_FENCE")
			}
			_, err := s.clients(ctx)
			settleCut(err)
			check(codeName(err) != "Unimplemented", "GetFenceClients answered UNIMPLEMENTED although GET_CLIENTS_TO_FENCE is advertised")
		})

		s.it("IDENT-005", func(ctx context.Context) {
			s.needCaps()
			if s.hasCap(identity.Capability_NetworkFence_GET_CLIENTS_TO_FENCE) {
				notSupported("not applicable: the driver advertises GET_CLIENTS_TO_FENCE")
			}
			_, err := s.clients(ctx)
			expectCode(err, "GetFenceClients without the capability", "Unimplemented")
		})

		s.it("IDENT-006", func(ctx context.Context) {
			s.needCaps()
			note("capabilities: %s", strings.Join(capNames(s.Caps), ", "))
			var manifest []string
			for _, k := range slices.Sorted(maps.Keys(s.Identity.GetManifest())) {
				manifest = append(manifest, show(k)+"="+show(s.Identity.GetManifest()[k]))
			}
			note("identity: name %s, vendor_version %s, manifest {%s}", show(s.Identity.GetName()), show(s.Identity.GetVendorVersion()), strings.Join(manifest, ", "))
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

// needCaps ends a case that depends on the capabilities when they could not
// be read (IDENT-003 fails for it).
func (s *State) needCaps() {
	GinkgoHelper()
	if s.capsErr != nil {
		notRun("the driver's capabilities are unknown: GetCapabilities answered %s: %s (IDENT-003 fails for it)", codeSpec(s.capsErr), errText(s.capsErr))
	}
}
