package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/sanity/fencemodel"
	"github.com/fenceproof/fenceproof/sanity/relations"
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
			s.checkMapped(ctx)
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

// checkMapped is CIDR-012: an IPv4-mapped spelling of an IPv4 block of every
// length (::ffff:a.b.c.d/120 to /128), each in a request of its own, is
// rejected or fenced as exactly the IPv4 block (never listed as an IPv6
// block, which no IPv4 packet matches); an accepted one is lifted by an
// Unfence of the IPv4 block.
func (s *State) checkMapped(ctx context.Context) {
	GinkgoHelper()
	s.needState()
	m := fencemodel.New(s.modelHostBits())
	var blocks []netip.Prefix
	var accepted, rejected, wrong []string
	for _, w := range relations.IPv4.Widths {
		p := s.region(false, w)
		blocks = append(blocks, p)
		raw := []string{relations.Spell(p, relations.Mapped)}
		answer := s.send(ctx, fencemodel.Fence, raw)
		if err := m.Apply(fencemodel.Fence, raw, answer); err != nil {
			wrong = append(wrong, fmt.Sprintf("FenceClusterNetwork of %s: %s", raw[0], err))
		} else if answer == "OK" {
			accepted = append(accepted, raw[0])
		} else {
			rejected = append(rejected, raw[0])
		}
	}
	check(len(wrong) == 0, "%s", strings.Join(wrong, "; "))
	v := s.readFences(ctx, "after fencing IPv4-mapped blocks of every length")
	var kept []string
	for _, p := range blocks {
		if d := m.Diff(v.raw, p.Overlaps); !d.Empty() {
			kept = append(kept, fmt.Sprintf("%s (IPv4 %s): %s", relations.Spell(p, relations.Mapped), p, d))
		}
	}
	check(len(kept) == 0, "%d IPv4-mapped blocks are not listed as the IPv4 blocks they name (an IPv6 fence no IPv4 packet matches, or another block): %s", len(kept), strings.Join(kept, "; "))
	var lift []string
	for _, p := range m.Blocks() {
		lift = append(lift, p.String())
	}
	if len(lift) > 0 {
		expectOK(s.unfence(ctx, lift), fmt.Sprintf("UnfenceClusterNetwork of %s", strings.Join(lift, ", ")))
		s.tracker.forget(lift...)
		after := s.readFences(ctx, "after unfencing the IPv4 blocks")
		var still []string
		for _, p := range blocks {
			for _, c := range after.raw {
				if q, ok := blockOf(c); ok && q.Overlaps(p) {
					still = append(still, show(c))
				}
			}
		}
		check(len(still) == 0, "after UnfenceClusterNetwork of the IPv4 blocks %s, still listed: %s", strings.Join(lift, ", "), strings.Join(still, ", "))
	}
	note("IPv4-mapped IPv6 fenced as IPv4: %d lengths; rejected: %d lengths", len(accepted), len(rejected))
}
