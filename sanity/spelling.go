package sanity

import (
	"context"
	"fmt"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// hostBitSpelling is p written with a host bit set: its second address.
func hostBitSpelling(p netip.Prefix) string {
	return netip.PrefixFrom(p.Addr().Next(), p.Bits()).String()
}

func describeSpellings(s *State) {
	Context("spellings", func() {
		table(s, "CIDR-011", func(ctx context.Context, v6 bool) {
			s.needList()
			bits := 28
			if v6 {
				s.needIPv6(ctx)
				bits = 64
			}
			p := s.alloc.block(v6, bits)
			canon, hb := p.String(), hostBitSpelling(p)
			expectOK(s.fence(ctx, []string{canon}), "FenceClusterNetwork of "+canon)
			err := s.fence(ctx, []string{hb})
			if err != nil && s.cfg.Profile.HostBits != HostBitsNormalise && codeName(err) == "InvalidArgument" {
				note("host bits rejected: only the canonical spelling was checked")
				expectOK(s.unfence(ctx, []string{canon}), "UnfenceClusterNetwork of "+canon)
				s.expectNotFenced(ctx, []string{canon}, "after UnfenceClusterNetwork of "+canon)
				return
			}
			expectOK(err, "FenceClusterNetwork of "+hb+" (the same block with a host bit)")
			listed, lerr := s.observed(ctx)
			expectOK(lerr, "ListClusterFence")
			Expect(countCanonical(listed, canon)).To(Equal(1), "%s fenced as %s and %s is listed %d times (listed: %v)", canon, canon, hb, countCanonical(listed, canon), s.ours(listed))
			expectOK(s.unfence(ctx, []string{hb}), "UnfenceClusterNetwork of "+hb)
			s.expectNotFenced(ctx, []string{canon}, "after UnfenceClusterNetwork of "+hb)
			expectOK(s.fence(ctx, []string{hb}), "FenceClusterNetwork of "+hb)
			s.expectFenced(ctx, []string{canon}, "after FenceClusterNetwork of "+hb)
			expectOK(s.unfence(ctx, []string{canon}), "UnfenceClusterNetwork of "+canon)
			s.expectNotFenced(ctx, []string{canon}, "after UnfenceClusterNetwork of "+canon)
		}, Entry("IPv4", false), Entry("IPv6", true))

		s.it("CIDR-012", func(ctx context.Context) {
			s.needList()
			v4 := s.alloc.block(false, 32)
			mapped := netip.PrefixFrom(netip.AddrFrom16(v4.Addr().As16()), 128).String()
			err := s.fence(ctx, []string{mapped})
			listed, lerr := s.observed(ctx)
			expectOK(lerr, "ListClusterFence")
			got := canonicalAll(listed)
			Expect(got).NotTo(ContainElement(mapped), "%s was kept as an IPv6 fence, which no IPv4 packet matches", mapped)
			if err != nil {
				expectCode(err, "FenceClusterNetwork of "+mapped, "InvalidArgument")
				Expect(got).NotTo(ContainElement(v4.String()), "%s was rejected but %s is listed", mapped, v4)
				note("IPv4-mapped IPv6: rejected")
				return
			}
			Expect(got).To(ContainElement(v4.String()), "%s was acknowledged but %s is not listed (listed: %v)", mapped, v4, s.ours(listed))
			expectOK(s.unfence(ctx, []string{v4.String()}), "UnfenceClusterNetwork of "+v4.String())
			s.expectNotFenced(ctx, []string{v4.String(), mapped}, "after UnfenceClusterNetwork of "+v4.String())
			note("IPv4-mapped IPv6: fenced as IPv4")
		})

		table(s, "CIDR-013", func(ctx context.Context, v6first bool) {
			s.needList()
			if s.cfg.Profile.IPv6 == Optional {
				s.needIPv6(ctx)
			}
			v4, v6 := append(s.v4(1, 32), s.v4(1, 30)...), append(s.v6(1, 128), s.v6(1, 64)...)
			b := []string{v4[0], v6[0], v4[1], v6[1]}
			if v6first {
				b = []string{v6[0], v4[0], v6[1], v4[1]}
			}
			expectOK(s.fence(ctx, b), fmt.Sprintf("FenceClusterNetwork of %v", b))
			s.expectFenced(ctx, b, fmt.Sprintf("after one FenceClusterNetwork of %v", b))
		}, Entry("IPv4 first", false), Entry("IPv6 first", true))
	})
}
