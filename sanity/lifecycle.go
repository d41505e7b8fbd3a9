package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/sanity/fencemodel"
)

func describeLifecycle(s *State) {
	Context("fence lifecycle", func() {
		table(s, "FENCE-001", func(ctx context.Context, v6 bool) {
			s.needState()
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
			s.needState()
			b := s.v4(1, 32)
			for i := range 10 {
				expectOK(s.fence(ctx, b), fmt.Sprintf("FenceClusterNetwork of %s, call %d of 10", b[0], i+1))
			}
			v := s.readFences(ctx, "after ten fences of one block")
			check(v.count(b[0]) == 1, "%s fenced ten times is listed %d times", b[0], v.count(b[0]))
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
			s.needState()
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
			s.needState()
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
			s.needState()
			universe := s.v4(4, 32)
			outer := s.take(false, 29)
			universe = append(universe, outer.String(), sub(outer, 30), sub(outer, 32))
			ours := func(p netip.Prefix) bool {
				for _, u := range universe {
					if netip.MustParsePrefix(u).Overlaps(p) {
						return true
					}
				}
				return false
			}
			every := s.modelCheckEvery()
			if every > 1 {
				note("ListClusterFence is slow or long (%s): the model was compared every %d steps and after the last, not after each", s.listCost(), every)
			}
			model := fencemodel.New(s.modelHostBits())
			var ops []string
			for step := range modelSteps {
				n := 1 + s.rng.IntN(3)
				var pick []string
				for range n {
					pick = append(pick, universe[s.rng.IntN(len(universe))])
				}
				rpc := fencemodel.Fence
				if s.rng.IntN(2) != 0 {
					rpc = fencemodel.Unfence
				}
				answer := s.send(ctx, rpc, pick)
				ops = append(ops, fmt.Sprintf("%s of %v %s", rpc, pick, specName(string(answer))))
				if err := model.Apply(rpc, pick, answer); err != nil {
					failf("step %d (seed %d, replay with --seed %d): %s of %v: %s", step, s.Seed, s.Seed, rpc, pick, err)
				}
				if (step+1)%every != 0 && step != modelSteps-1 {
					continue
				}
				v := s.readFences(ctx, fmt.Sprintf("after step %d", step))
				d := model.Diff(v.raw, ours)
				check(d.Empty(), "step %d (seed %d, replay with --seed %d): after %s, List differs from the model: %s (the last requests: %s)",
					step, s.Seed, s.Seed, ops[len(ops)-1], d, strings.Join(ops[max(0, len(ops)-8):], "; "))
			}
		})
	})
}

// modelSteps is the length of FENCE-007's random sequence.
const modelSteps = 40

// Above these, ListClusterFence is expensive: rules that would read it
// after every step read it every few steps instead (modelCheckEvery).
const (
	expensiveListTime    = 100 * time.Millisecond
	expensiveListEntries = 5000
)

// modelCheckEvery is how many steps FENCE-007 makes between readings of
// the fences: 1, or 5 (8 readings) when a reading is expensive.
func (s *State) modelCheckEvery() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lists.Slowest > expensiveListTime || s.lists.Largest > expensiveListEntries {
		return 5
	}
	return 1
}

// listCost describes the slowest and largest List so far.
func (s *State) listCost() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("slowest %s, largest %d entries", s.lists.Slowest.Round(time.Millisecond), s.lists.Largest)
}

// sub is the first block of the given length inside p.
func sub(p netip.Prefix, bits int) string { return netip.PrefixFrom(p.Addr(), bits).String() }
