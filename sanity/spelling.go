package sanity

import (
	"context"
	"fmt"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
)

// hostBitSpelling is p written with a host bit set: its second address.
func hostBitSpelling(p netip.Prefix) string {
	return netip.PrefixFrom(p.Addr().Next(), p.Bits()).String()
}

func describeSpellings(s *State) {
	Context("spellings", func() {
		table(s, "CIDR-011", func(ctx context.Context, v6 bool) {
			s.needState()
			bits := 28
			if v6 {
				s.needIPv6(ctx)
				bits = 64
			}
			p := s.take(v6, bits)
			canon, hb := p.String(), hostBitSpelling(p)
			expectOK(s.fence(ctx, []string{canon}), "FenceClusterNetwork of "+canon)
			err := s.fence(ctx, []string{hb})
			settleCut(err)
			if err != nil && s.cfg.Profile.HostBits != HostBitsNormalise && codeName(err) == "InvalidArgument" {
				note("host bits rejected: only the canonical spelling was checked")
				expectOK(s.unfence(ctx, []string{canon}), "UnfenceClusterNetwork of "+canon)
				s.expectNotFenced(ctx, []string{canon}, "after UnfenceClusterNetwork of "+canon)
				return
			}
			expectOK(err, "FenceClusterNetwork of "+hb+" (the same block with a host bit)")
			v := s.readFences(ctx, "after fencing one block in two spellings")
			// Counted by block, so that the host-bit spelling stored beside
			// the canonical one is a duplicate too.
			check(v.count(canon) == 1, "%s fenced as %s and %s is listed %d times (the suite's entries listed: %s)", canon, canon, hb, v.count(canon), showFew(s.ours(v.raw)))
			expectOK(s.unfence(ctx, []string{hb}), "UnfenceClusterNetwork of "+hb)
			s.expectNotFenced(ctx, []string{canon}, "after UnfenceClusterNetwork of "+hb)
			expectOK(s.fence(ctx, []string{hb}), "FenceClusterNetwork of "+hb)
			s.expectFenced(ctx, []string{canon}, "after FenceClusterNetwork of "+hb)
			expectOK(s.unfence(ctx, []string{canon}), "UnfenceClusterNetwork of "+canon)
			s.expectNotFenced(ctx, []string{canon}, "after UnfenceClusterNetwork of "+canon)
		}, Entry("IPv4", false), Entry("IPv6", true))

		s.it("CIDR-012", func(ctx context.Context) {
			s.needState()
			v4 := s.take(false, 32)
			mapped := netip.PrefixFrom(netip.AddrFrom16(v4.Addr().As16()), 128).String()
			err := s.fence(ctx, []string{mapped})
			settleCut(err)
			v := s.readFences(ctx, "after FenceClusterNetwork of "+mapped)
			check(!v.spelled(mapped) && !v.spelled(canonical(mapped)), "%s was kept as an IPv6 fence, which no IPv4 packet matches", mapped)
			if err != nil {
				expectCode(err, "FenceClusterNetwork of "+mapped, "InvalidArgument")
				check(!v.spelled(v4.String()), "%s was rejected but %s is listed", mapped, v4)
				note("IPv4-mapped IPv6: rejected")
				return
			}
			check(v.spelled(v4.String()), "%s was acknowledged but %s is not listed (the suite's entries listed: %s)", mapped, v4, showFew(s.ours(v.raw)))
			expectOK(s.unfence(ctx, []string{v4.String()}), "UnfenceClusterNetwork of "+v4.String())
			after := s.readFences(ctx, "after UnfenceClusterNetwork of "+v4.String())
			check(!after.has(v4.String()), "after UnfenceClusterNetwork of %s, %s or %s is still listed", v4, v4, mapped)
			note("IPv4-mapped IPv6: fenced as IPv4")
		})

		table(s, "CIDR-013", func(ctx context.Context, v6first bool) {
			s.needState()
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
