package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func describeLifecycle(s *State) {
	Context("fence lifecycle", func() {
		table(s, "FENCE-001", func(ctx context.Context, v6 bool) {
			s.needList()
			var b []string
			if v6 {
				s.needIPv6(ctx)
				b = s.v6(1, 120)
			} else {
				b = s.v4(1, 29)
			}
			expectOK(s.fence(ctx, b), "FenceClusterNetwork of "+b[0])
			s.expectFenced(ctx, b, "after FenceClusterNetwork")
			expectOK(s.unfence(ctx, b), "UnfenceClusterNetwork of "+b[0])
			s.expectNotFenced(ctx, b, "after UnfenceClusterNetwork")
		}, Entry("IPv4", false), Entry("IPv6", true))

		s.it("FENCE-002", func(ctx context.Context) {
			s.needList()
			b := s.v4(1, 32)
			for i := range 10 {
				expectOK(s.fence(ctx, b), fmt.Sprintf("FenceClusterNetwork of %s, call %d of 10", b[0], i+1))
			}
			listed, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			Expect(countCanonical(listed, b[0])).To(Equal(1), "%s fenced ten times is listed %d times", b[0], countCanonical(listed, b[0]))
		})

		s.it("FENCE-003", func(ctx context.Context) {
			b := s.v4(1, 32)
			expectOK(s.fence(ctx, b), "FenceClusterNetwork of "+b[0])
			for i := range 10 {
				expectOK(s.unfence(ctx, b), fmt.Sprintf("UnfenceClusterNetwork of %s, call %d of 10", b[0], i+1))
			}
			s.expectNotFenced(ctx, b, "after ten UnfenceClusterNetwork calls")
		})

		s.it("FENCE-004", func(ctx context.Context) {
			b := append(s.v4(1, 32), s.v6(1, 128)...)
			if s.cfg.Profile.IPv6 == Optional {
				b = b[:1]
			}
			expectOK(s.unfence(ctx, b), fmt.Sprintf("UnfenceClusterNetwork of never-fenced %v", b))
		})

		s.it("FENCE-005", func(ctx context.Context) {
			s.needList()
			b := append(s.v4(2, 32), s.v4(2, 28)...)
			if s.cfg.Profile.IPv6 == Required {
				b = append(b, s.v6(1, 128)[0], s.v6(1, 64)[0])
			}
			expectOK(s.fence(ctx, b), fmt.Sprintf("FenceClusterNetwork of %d blocks", len(b)))
			s.expectFenced(ctx, b, fmt.Sprintf("after one FenceClusterNetwork of %v", b))
			expectOK(s.unfence(ctx, b), fmt.Sprintf("UnfenceClusterNetwork of %d blocks", len(b)))
			s.expectNotFenced(ctx, b, fmt.Sprintf("after one UnfenceClusterNetwork of %v", b))
		})

		s.it("FENCE-006", func(ctx context.Context) {
			s.needList()
			b := s.v4(3, 32)
			for _, x := range b {
				expectOK(s.fence(ctx, []string{x}), "FenceClusterNetwork of "+x)
			}
			expectOK(s.unfence(ctx, b[1:2]), "UnfenceClusterNetwork of "+b[1])
			s.expectFenced(ctx, []string{b[0], b[2]}, "after unfencing only "+b[1])
			s.expectNotFenced(ctx, b[1:2], "after unfencing "+b[1])
			expectOK(s.fence(ctx, b[1:2]), "FenceClusterNetwork of "+b[1])
			expectOK(s.unfence(ctx, []string{b[0], b[2]}), "UnfenceClusterNetwork of "+b[0]+" and "+b[2])
			s.expectFenced(ctx, b[1:2], "after unfencing only "+b[0]+" and "+b[2])
		})

		s.it("FENCE-007", func(ctx context.Context) {
			s.needList()
			universe := s.v4(4, 32)
			outer := s.alloc.block(false, 29)
			universe = append(universe, outer.String(), sub(outer, 30), sub(outer, 32))
			model := map[string]bool{}
			for step := range 40 {
				n := 1 + s.rng.IntN(3)
				var pick []string
				for range n {
					pick = append(pick, universe[s.rng.IntN(len(universe))])
				}
				op := "FenceClusterNetwork"
				if s.rng.IntN(2) == 0 {
					expectOK(s.fence(ctx, pick), fmt.Sprintf("step %d (seed %d): FenceClusterNetwork of %v", step, s.Seed, pick))
					for _, p := range pick {
						model[p] = true
					}
				} else {
					op = "UnfenceClusterNetwork"
					expectOK(s.unfence(ctx, pick), fmt.Sprintf("step %d (seed %d): UnfenceClusterNetwork of %v", step, s.Seed, pick))
					for _, p := range pick {
						delete(model, p)
					}
				}
				listed, err := s.observed(ctx)
				expectOK(err, "ListClusterFence")
				var got, want []string
				for _, c := range canonicalAll(listed) {
					if slices.Contains(universe, c) {
						got = append(got, c)
					}
				}
				for c := range model {
					want = append(want, c)
				}
				Expect(got).To(ConsistOf(want), "step %d (seed %d, replay with --seed %d): after %s of %v, List shows %v but the fences in force are %v",
					step, s.Seed, s.Seed, op, pick, got, want)
			}
		})
	})
}

// sub is the first block of the given length inside p.
func sub(p netip.Prefix, bits int) string { return netip.PrefixFrom(p.Addr(), bits).String() }
