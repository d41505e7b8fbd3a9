package sanity

import (
	"context"
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// scaleBatch is the largest request of the many-requests case.
const scaleBatch = 32

// honestRefusals are the codes a driver may refuse a fence with for capacity.
var honestRefusals = []string{"ResourceExhausted", "InvalidArgument"}

// scaleProbe is how many blocks SCALE-001 fences first, to measure the
// driver's time per block before it sizes the rest.
const scaleProbe = 8

// scalePlan is how much SCALE-001 fences, sized to the driver's pace.
type scalePlan struct {
	perBlock time.Duration // measured in one request of scaleProbe blocks
	one      int           // blocks in the one-request case
	many     int           // blocks in the many-requests case
	batch    int           // blocks per request in that case
	why      string        // why fewer than --scale-size, if so
}

func describeCapacity(s *State) {
	Context("capacity", func() {
		var plan *scalePlan
		table(s, "SCALE-001", func(ctx context.Context, oneRequest bool) {
			s.needState()
			if plan == nil {
				plan = s.planScale(ctx)
			}
			n, batch := plan.many, plan.batch
			if oneRequest {
				n, batch = plan.one, plan.one
			}
			blocks := s.scaleBlocks(n)
			note("measured %s per block in one request of %d; fenced %d blocks in requests of %d%s", plan.perBlock.Round(time.Microsecond), scaleProbe, len(blocks), batch, plan.why)
			var acked, refused []string
			for i := 0; i < len(blocks); i += batch {
				part := blocks[i:min(i+batch, len(blocks))]
				err := s.fence(ctx, part)
				settleCut(err)
				if err == nil {
					acked = append(acked, part...)
					continue
				}
				if !slices.Contains(honestRefusals, codeName(err)) {
					failf("FenceClusterNetwork of %d blocks (%s...): expected OK, RESOURCE_EXHAUSTED or INVALID_ARGUMENT, got %s: %s", len(part), part[0], codeSpec(err), errText(err))
				}
				refused = append(refused, part...)
			}
			v := s.readFences(ctx, fmt.Sprintf("after fencing %d blocks", len(blocks)))
			var dropped, leaked []string
			for _, b := range acked {
				if !v.has(b) {
					dropped = append(dropped, b)
				}
			}
			for _, b := range refused {
				if v.has(b) {
					leaked = append(leaked, b)
				}
			}
			check(len(dropped) == 0, "%d of %d acknowledged blocks are not listed (silently dropped): %s", len(dropped), len(acked), firstFew(dropped))
			check(len(leaked) == 0, "%d refused blocks are listed: %s", len(leaked), firstFew(leaked))
			if len(refused) > 0 {
				note("the driver refused %d of %d blocks honestly", len(refused), len(blocks))
			}
			if len(acked) > 0 {
				expectOK(s.unfence(ctx, acked), fmt.Sprintf("UnfenceClusterNetwork of %d blocks", len(acked)))
			}
		}, Entry("in one request", true), Entry(fmt.Sprintf("across requests of up to %d", scaleBatch), false))
	})
}

// scaleBlocks are n fresh blocks: IPv6 /128s, or IPv4 /32s (at most 256)
// when IPv6 is optional.
func (s *State) scaleBlocks(n int) []string {
	GinkgoHelper()
	if s.cfg.Profile.IPv6 == Required {
		return s.v6(n, 128)
	}
	if n > 256 {
		note("IPv6 is optional: checked with 256 IPv4 blocks")
	}
	return s.v4(min(n, 256), 32)
}

// planScale fences scaleProbe blocks in one request, timing it, and sizes
// both cases of SCALE-001 to fit: each request within half the RPC
// deadline, each case within half the rule's share of the budget (an eighth
// of --timeout). The probe's blocks are checked with the first case.
func (s *State) planScale(ctx context.Context) *scalePlan {
	GinkgoHelper()
	probe := s.scaleBlocks(min(scaleProbe, s.cfg.ScaleSize))
	start := time.Now()
	err := s.fence(ctx, probe)
	took := time.Since(start)
	settleCut(err)
	if err != nil && !slices.Contains(honestRefusals, codeName(err)) {
		failf("FenceClusterNetwork of %d blocks: expected OK, RESOURCE_EXHAUSTED or INVALID_ARGUMENT, got %s: %s", len(probe), codeSpec(err), errText(err))
	}
	if err == nil {
		s.expectFenced(ctx, probe, fmt.Sprintf("after fencing %d blocks", len(probe)))
		expectOK(s.unfence(ctx, probe), fmt.Sprintf("UnfenceClusterNetwork of %d blocks", len(probe)))
	}
	p := &scalePlan{perBlock: max(took/time.Duration(len(probe)), time.Microsecond)}
	share := min(s.budget.total/8, s.left()/2) / 2
	perRequest := s.cfg.RPCTimeout.Duration / 2
	fit := func(d time.Duration) int { return int(d / p.perBlock) }
	want := s.cfg.ScaleSize
	p.one = max(min(want, fit(min(share, perRequest))), 1)
	p.batch = max(min(scaleBatch, fit(perRequest)), 1)
	p.many = max(min(want, fit(share)), 1)
	if p.one < want || p.many < want {
		p.why = fmt.Sprintf(" (fewer than --scale-size %d: at this pace %d blocks take %s, more than the rule's share of the budget, %s per case, or half the RPC deadline per request)",
			want, want, (p.perBlock * time.Duration(want)).Round(time.Millisecond), share.Round(time.Second))
	}
	return p
}
