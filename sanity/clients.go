package sanity

import (
	"context"
	"net/netip"

	"github.com/csi-addons/spec/lib/go/identity"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func describeClients(s *State) {
	Context("GetFenceClients", func() {
		s.it("CLIENT-001", func(ctx context.Context) {
			s.needClients()
			cl, err := s.clients(ctx)
			expectOK(err, "GetFenceClients")
			if len(cl) == 0 {
				note("the driver reported no clients, so there was nothing to check")
			}
			for i, c := range cl {
				Expect(c.GetId()).NotTo(BeEmpty(), "client %d has an empty id", i)
				Expect(c.GetAddresses()).NotTo(BeEmpty(), "client %q has no addresses", c.GetId())
				for _, a := range c.GetAddresses() {
					_, perr := netip.ParsePrefix(a.GetCidr())
					Expect(perr).NotTo(HaveOccurred(), "client %q: address %q is not a CIDR block", c.GetId(), a.GetCidr())
				}
			}
		})

		s.it("CLIENT-002", func(ctx context.Context) {
			s.needClients()
			var first map[string][]string
			for call := range 3 {
				cl, err := s.clients(ctx)
				expectOK(err, "GetFenceClients")
				got := map[string][]string{}
				for _, c := range cl {
					Expect(got).NotTo(HaveKey(c.GetId()), "call %d: client id %q appears twice", call+1, c.GetId())
					got[c.GetId()] = strList(c.GetAddresses())
				}
				if first == nil {
					first = got
					continue
				}
				Expect(got).To(Equal(first), "call %d returned different clients than call 1", call+1)
			}
		})

		s.it("CLIENT-003", func(ctx context.Context) {
			s.needClients()
			s.needList()
			b := s.v4(1, 32)
			expectOK(s.fence(ctx, b), "FenceClusterNetwork of "+b[0])
			before, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			_, err = s.clients(ctx)
			expectOK(err, "GetFenceClients")
			after, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			Expect(after).To(ConsistOf(before), "the fences changed across a GetFenceClients call")
		})

		s.it("CLIENT-004", func(ctx context.Context) {
			s.needClients()
			cl, err := s.clients(ctx)
			expectOK(err, "GetFenceClients")
			for _, c := range cl {
				note("client %q: %v", c.GetId(), strList(c.GetAddresses()))
			}
		})
	})
}

func (s *State) needClients() {
	if !s.hasCap(identity.Capability_NetworkFence_GET_CLIENTS_TO_FENCE) {
		notSupported("the driver does not advertise GET_CLIENTS_TO_FENCE")
	}
}
