package sanity

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// scaleBatch is the largest request of the many-requests case.
const scaleBatch = 32

// honestRefusals are the codes a driver may refuse a fence with for capacity.
var honestRefusals = []string{"ResourceExhausted", "InvalidArgument"}

// SCALE-001 times requests of growing size before it sizes its cases, so
// that a driver whose time grows faster than its requests (one that rewrites
// its whole state per block) is measured, not extrapolated from 8 blocks: a
// first request of scaleProbe blocks, a second of up to scaleRamp times as
// many (as many as fit in an eighth of the RPC deadline were the time to grow
// with the square of the size), and the cases reach at most scaleReach times
// the largest request timed.
const (
	scaleProbe = 8
	scaleRamp  = 8
	scaleReach = 16
)

// scaleSample is one timed Fence of SCALE-001's probes.
type scaleSample struct {
	n    int
	took time.Duration
}

// scalePlan is how much SCALE-001 fences, sized to the driver's pace.
type scalePlan struct {
	samples []scaleSample // the probes, in the order sent
	growth  float64       // time grows with size^growth (1 to 3), from the two probes
	one     int           // blocks in the one-request case
	many    int           // blocks in the many-requests case
	batch   int           // blocks per request in that case
	why     string        // why fewer than --scale-size, if so
}

func describeCapacity(s *State) {
	Context("capacity", func() {
		plans := map[bool]*scalePlan{}
		table(s, "SCALE-001", func(ctx context.Context, c scaleCase) {
			s.needState()
			if c.v6 {
				s.needIPv6(ctx)
			}
			blocks := s.scaleBlocks(c.v6, s.cfg.ScaleSize)
			if plans[c.v6] == nil {
				plans[c.v6] = s.planScale(ctx, blocks)
			}
			plan := plans[c.v6]
			n, batch := plan.many, plan.batch
			if c.oneRequest {
				n, batch = plan.one, plan.one
			}
			blocks = blocks[:min(n, len(blocks))]
			note("%s; fenced %d %s blocks in requests of %d%s", plan, len(blocks), family(c.v6), batch, plan.why)
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
	s.alloc.refresh() // what the previous case fenced and unfenced is free again
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

// planScale times Fences of the first blocks of the family's (the probes:
// fenced, checked listed, unfenced; the case fences them again) and sizes
// both cases of the family so that, at the pace measured, each request takes
// at most 1/requestHeadroom of the RPC deadline and each case half its share of
// the budget (a sixteenth of --timeout: the rule has four cases).
func (s *State) planScale(ctx context.Context, blocks []string) *scalePlan {
	GinkgoHelper()
	perRequest := s.cfg.RPCTimeout.Duration / requestHeadroom
	p := &scalePlan{}
	p.probe(len(blocks), perRequest, func(n int) (time.Duration, bool) {
		probe := blocks[:n]
		start := time.Now()
		err := s.fence(ctx, probe)
		took := time.Since(start)
		settleCut(err)
		if err != nil && !slices.Contains(honestRefusals, codeName(err)) {
			failf("FenceClusterNetwork of %d blocks (%s to %s): expected OK, RESOURCE_EXHAUSTED or INVALID_ARGUMENT, got %s: %s", len(probe), probe[0], probe[len(probe)-1], codeSpec(err), errText(err))
		}
		if err != nil {
			return took, false // refused: the cases find out how much it takes
		}
		when := fmt.Sprintf("after fencing %d blocks in one request", len(probe))
		v := s.readFences(ctx, when)
		s.claimMade(v, probe) // a wider block the driver made of them is undone too
		var missing []string
		for _, b := range probe {
			if !v.has(b) {
				missing = append(missing, b)
			}
		}
		check(len(missing) == 0, "%s: %s not listed", when, showAll(missing))
		s.unfenceAll(ctx, probe)
		return took, true
	})
	p.size(s.cfg.ScaleSize, min(s.budget.total/16, s.left()/2)/2, perRequest)
	return p
}

// probe times fence (a Fence of the first n of avail blocks; ok is false
// when it was refused) on scaleProbe blocks, then on as many more as fit in
// half of perRequest were the time to grow with the square of the size (at
// most scaleRamp times as many).
func (p *scalePlan) probe(avail int, perRequest time.Duration, fence func(n int) (took time.Duration, ok bool)) {
	p.growth = 2 // until measured, assume the square
	next := min(scaleProbe, avail)
	for next > 0 && len(p.samples) < 2 {
		took, ok := fence(next)
		p.samples = append(p.samples, scaleSample{next, max(took, time.Microsecond)})
		if !ok {
			return
		}
		if next = p.fit(min(scaleRamp*next, avail), perRequest/2); next <= scaleProbe {
			return
		}
	}
}

// size sets the plan's sizes from its samples: want blocks at most, each
// case within share, each request within perRequest.
func (p *scalePlan) size(want int, share, perRequest time.Duration) {
	if len(p.samples) == 2 {
		a, b := p.samples[0], p.samples[1]
		p.growth = math.Log(float64(b.took)/float64(a.took)) / math.Log(float64(b.n)/float64(a.n))
		p.growth = min(max(p.growth, 1), 3)
	}
	p.one = max(p.fit(want, min(share, perRequest)), 1)
	p.batch = max(p.fit(scaleBatch, perRequest), 1)
	// The many-requests case costs at least what one request of all its
	// blocks would (a driver whose time per block grows with the set it
	// holds), and the requests' own cost.
	p.many = max(sort.Search(p.reach(want), func(n int) bool {
		n++
		reqs := time.Duration((n + p.batch - 1) / p.batch)
		return max(p.predict(n), reqs*p.predict(min(n, p.batch))) > share
	}), 1)
	if p.one < want || p.many < want {
		p.why = fmt.Sprintf(" (fewer than --scale-size %d: at this pace %d blocks would take %s in one request, more than the rule's share of the budget, %s per case, or 1/%d of the RPC deadline per request)",
			want, want, p.predict(want).Round(time.Millisecond), share.Round(time.Second), requestHeadroom)
	}
}

// predict is the time of a request of n blocks at the pace measured: the
// last probe's scaled by (n/its size)^growth, and at least by n/its size.
func (p *scalePlan) predict(n int) time.Duration {
	last := p.samples[len(p.samples)-1]
	r := float64(n) / float64(last.n)
	return time.Duration(float64(last.took) * max(r, math.Pow(r, p.growth)))
}

// reach is limit, at most scaleReach times the last probe.
func (p *scalePlan) reach(limit int) int {
	return min(limit, scaleReach*p.samples[len(p.samples)-1].n)
}

// fit is the most blocks, at most reach(limit), that one request carries
// within d at the pace measured.
func (p *scalePlan) fit(limit int, d time.Duration) int {
	return sort.Search(p.reach(limit), func(n int) bool { return p.predict(n+1) > d })
}

// String says what the plan measured.
func (p *scalePlan) String() string {
	var ms []string
	for _, m := range p.samples {
		ms = append(ms, fmt.Sprintf("%d blocks in %s", m.n, m.took.Round(time.Microsecond)))
	}
	return fmt.Sprintf("timed one request of %s (time grows as size^%.1f)", strings.Join(ms, ", then "), p.growth)
}
