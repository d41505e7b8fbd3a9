package sanity

import (
	"context"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func describeListing(s *State) {
	Context("ListClusterFence", func() {
		s.it("LIST-001", func(ctx context.Context) {
			if s.listErr != nil {
				Fail(s.listErr.Error())
			}
			_, err := s.list(ctx)
			if codeName(err) == "Unimplemented" && s.cfg.Profile.ListClusterFence == Optional {
				notSupported("ListClusterFence is not implemented (profile listClusterFence: optional); state is read from: %s", s.stateSource())
			}
			expectOK(err, "ListClusterFence")
		})

		s.it("LIST-002", func(ctx context.Context) {
			s.needList()
			b := s.v4(1, 32)
			expectOK(s.fence(ctx, b), "FenceClusterNetwork of "+b[0])
			if v6 := s.v6(1, 128); s.fence(ctx, v6) != nil {
				note("IPv6 %s was not fenced: only IPv4 entries were made by the suite", v6[0])
			}
			listed, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			var bad []string
			for _, c := range listed {
				if _, perr := netip.ParsePrefix(c); perr != nil {
					bad = append(bad, quote(c))
				}
			}
			Expect(bad).To(BeEmpty(), "%d of %d listed entries are not CIDR blocks: %s", len(bad), len(listed), firstFew(bad))
		})

		table(s, "FENCE-008", func(ctx context.Context, c blockShape) {
			if c.v6 {
				s.needIPv6(ctx)
			}
			b := s.alloc.block(c.v6, c.bits).String()
			expectOK(s.fence(ctx, []string{b}), "FenceClusterNetwork of "+b)
			expectOK(s.unfence(ctx, []string{b}), "UnfenceClusterNetwork of "+b)
		},
			Entry("IPv4 /32", blockShape{false, 32}), Entry("IPv4 /25", blockShape{false, 25}),
			Entry("IPv6 /128", blockShape{true, 128}), Entry("IPv6 /64", blockShape{true, 64}), Entry("IPv6 /48", blockShape{true, 48}))
	})
}

// blockShape is the family and length of a block to allocate.
type blockShape struct {
	v6   bool
	bits int
}
