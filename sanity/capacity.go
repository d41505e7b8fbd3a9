package sanity

import (
	"context"
	"fmt"
	"net/netip"
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
		plans := map[bool]*scalePlan{}
		table(s, "SCALE-001", func(ctx context.Context, c scaleCase) {
			s.needState()
			if c.v6 {
				s.needIPv6(ctx)
			}
			if plans[c.v6] == nil {
				plans[c.v6] = s.planScale(ctx, c.v6)
			}
			plan := plans[c.v6]
			n, batch := plan.many, plan.batch
			if c.oneRequest {
				n, batch = plan.one, plan.one
			}
			blocks := s.scaleBlocks(c.v6, n)
			note("measured %s per block in one request of %d; fenced %d %s blocks in requests of %d%s", plan.perBlock.Round(time.Microsecond), scaleProbe, len(blocks), family(c.v6), batch, plan.why)
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
					failf("FenceClusterNetwork of %d blocks (%s to %s): expected OK, RESOURCE_EXHAUSTED or INVALID_ARGUMENT, got %s: %s", len(part), part[0], part[len(part)-1], codeSpec(err), errText(err))
				}
				refused = append(refused, part...)
			}
			v := s.readFences(ctx, fmt.Sprintf("after fencing %d %s blocks", len(blocks), family(c.v6)))
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
			s.claimMade(v, blocks)
			check(len(dropped) == 0, "%d of %d acknowledged %s blocks are not listed (silently dropped; the driver lists the other %d): %s", len(dropped), len(acked), family(c.v6), len(acked)-len(dropped), firstFew(dropped))
			check(len(leaked) == 0, "%d refused blocks are listed: %s", len(leaked), firstFew(leaked))
			if len(refused) > 0 {
				note("the driver refused %d of %d blocks honestly", len(refused), len(blocks))
			}
			s.unfenceAll(ctx, acked)
		}, Entry("IPv4 in one request", scaleCase{false, true}), Entry(fmt.Sprintf("IPv4 across requests of up to %d", scaleBatch), scaleCase{false, false}),
			Entry("IPv6 in one request", scaleCase{true, true}), Entry(fmt.Sprintf("IPv6 across requests of up to %d", scaleBatch), scaleCase{true, false}))
	})
}

// claimMade gives the cleanup what the driver lists over the blocks a rule
// fenced and did not ask for (a wider block it made of them), so that the
// rule's cleanup undoes it too.
func (s *State) claimMade(v fenceView, blocks []string) {
	mine := make(map[string]bool, len(blocks))
	var ps []netip.Prefix
	for _, b := range blocks {
		mine[blockKey(b)] = true
		if p, ok := blockOf(b); ok {
			ps = append(ps, p)
		}
	}
	for _, c := range v.raw {
		p, ok := blockOf(c)
		if !ok || mine[p.String()] || s.preSet[p.String()] {
			continue
		}
		for _, q := range ps {
			if p.Overlaps(q) {
				s.tracker.account(c)
				break
			}
		}
	}
}

// scaleCase is one case of SCALE-001: a family, in one request or many.
type scaleCase struct{ v6, oneRequest bool }

func family(v6 bool) string {
	if v6 {
		return "IPv6"
	}
	return "IPv4"
}

// unfenceAll unfences blocks in requests of the size the driver's pace
// allows (requestSize), never in one request the suite did not measure.
func (s *State) unfenceAll(ctx context.Context, blocks []string) {
	GinkgoHelper()
	for len(blocks) > 0 {
		part := blocks[:min(len(blocks), s.requestSize())]
		blocks = blocks[len(part):]
		expectOK(s.unfence(ctx, part), fmt.Sprintf("UnfenceClusterNetwork of %d blocks (%s to %s)", len(part), part[0], part[len(part)-1]))
		s.tracker.forget(part...)
	}
}

// ipv4Hosts is how many IPv4 /32s the documentation ranges hold.
const ipv4Hosts = 768

// scaleBlocks are n fresh blocks of the family: IPv6 /128s, or IPv4 /32s,
// disjoint (at most the 768 the documentation ranges hold: whole /24s
// first, then what the pools leave, and with --destructive the reserved
// ranges).
func (s *State) scaleBlocks(v6 bool, n int) []string {
	GinkgoHelper()
	if v6 {
		return s.v6(n, 128)
	}
	asked := n
	if !s.cfg.Destructive {
		n = min(n, ipv4Hosts)
	}
	var out []string
	for len(out) < n {
		r, ok := s.alloc.region(false, 24)
		if !ok {
			break
		}
		for a := r.Addr(); r.Contains(a) && len(out) < n; a = a.Next() {
			out = append(out, netip.PrefixFrom(a, 32).String())
		}
	}
	for len(out) < n {
		p, err := s.alloc.block(false, 32)
		if err != nil {
			if len(out) == 0 {
				notRun("%s", err.Error())
			}
			break
		}
		out = append(out, p.String())
	}
	if len(out) < asked {
		note("IPv4: %d blocks, the free /32s of the documentation ranges (%d asked; --destructive adds 198.18.0.0/16)", len(out), asked)
	}
	return out
}

// planScale fences scaleProbe blocks of the family in one request, timing
// it, and sizes both cases of the family to fit: each request within half
// the RPC deadline, each case within half its share of the budget (a
// sixteenth of --timeout: the rule has four cases). The probe's blocks are
// checked with the first case.
func (s *State) planScale(ctx context.Context, v6 bool) *scalePlan {
	GinkgoHelper()
	probe := s.v4(min(scaleProbe, s.cfg.ScaleSize), 32)
	if v6 {
		probe = s.v6(len(probe), 128)
	}
	start := time.Now()
	err := s.fence(ctx, probe)
	took := time.Since(start)
	settleCut(err)
	if err != nil && !slices.Contains(honestRefusals, codeName(err)) {
		failf("FenceClusterNetwork of %d blocks: expected OK, RESOURCE_EXHAUSTED or INVALID_ARGUMENT, got %s: %s", len(probe), codeSpec(err), errText(err))
	}
	if err == nil {
		s.expectFenced(ctx, probe, fmt.Sprintf("after fencing %d blocks", len(probe)))
		s.unfenceAll(ctx, probe)
	}
	p := &scalePlan{perBlock: max(took/time.Duration(len(probe)), time.Microsecond)}
	share := min(s.budget.total/16, s.left()/2) / 2
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
