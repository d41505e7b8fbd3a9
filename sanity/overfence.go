package sanity

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// Over-fencing: a driver that fences more than it was asked, by merging
// sibling blocks into their parent (eight /32s into a /29) or replacing a
// set of blocks by one that covers them (a client's /32 by its /24), cuts
// off every neighbour inside the wider block. FENCE-009 makes one request
// such a driver would change and checks that List holds exactly the
// requested blocks; every reading of the fences during the run is also
// checked for a listed block nobody asked for that covers one the suite
// asked for (noteOverFence).

// noteOverFence records, for FENCE-009, the listed blocks that no one asked
// for and that cover a block the suite asked for.
func (s *State) noteOverFence(listed []string) {
	var unasked []netip.Prefix
	for _, c := range listed {
		k := blockKey(c)
		if s.preSet[k] || s.tracker.wasRequested(c) {
			continue
		}
		if p, ok := blockOf(c); ok {
			unasked = append(unasked, p)
		}
	}
	if len(unasked) == 0 {
		return
	}
	asked := s.tracker.requestedBlocks()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range unasked {
		for _, r := range asked {
			if u.Bits() < r.Bits() && u.Contains(r.Addr()) {
				if s.overFence == nil {
					s.overFence = map[string]string{}
				}
				if _, seen := s.overFence[u.String()]; !seen && len(s.overFence) < 20 {
					s.overFence[u.String()] = fmt.Sprintf("%s is listed, which nobody asked for, and covers %s, which the suite asked for", u, r)
				}
				// The driver made it of the suite's blocks: the cleanup's.
				s.tracker.account(u.String())
				break
			}
		}
	}
}

// overFenceRequest is one request of FENCE-009 within a fresh region: for
// IPv4 a /27 holding eight /32s that fill an aligned /29 (merged into it),
// three sparse /32s (covered by a /29 or a /28) and two sibling /29s
// (merged into a /28); for IPv6 a /120 holding the same shapes with /128s
// and /125s, so that no block is wider than a /120.
func (s *State) overFenceRequest(v6 bool) (region netip.Prefix, want []string) {
	GinkgoHelper()
	host, eighth := 32, 29
	region = s.take(false, 27)
	if v6 {
		host, eighth = 128, 125
		region = s.take(true, 123)
	}
	at := func(i int) netip.Addr {
		a := region.Addr()
		for range i {
			a = a.Next()
		}
		return a
	}
	for i := range 8 {
		want = append(want, netip.PrefixFrom(at(i), host).String())
	}
	for _, i := range []int{9, 11, 13} {
		want = append(want, netip.PrefixFrom(at(i), host).String())
	}
	want = append(want, netip.PrefixFrom(at(16), eighth).String(), netip.PrefixFrom(at(24), eighth).String())
	return region, want
}

// checkOverFencing is FENCE-009's case for one family, and the over-fences
// seen during the run.
func (s *State) checkOverFencing(ctx context.Context, v6 bool) {
	GinkgoHelper()
	s.needState()
	if v6 {
		s.needIPv6(ctx)
	}
	region, want := s.overFenceRequest(v6)
	expectOK(s.fence(ctx, want), fmt.Sprintf("FenceClusterNetwork of %d blocks (%s)", len(want), strings.Join(want, ", ")))
	v := s.readFences(ctx, fmt.Sprintf("after one FenceClusterNetwork of %d blocks", len(want)))
	asked := map[string]bool{}
	for _, w := range want {
		asked[blockKey(w)] = true
	}
	var extra, missing []string
	for _, c := range v.raw {
		p, ok := blockOf(c)
		if !ok || s.preSet[blockKey(c)] || asked[blockKey(c)] || !region.Overlaps(p) {
			continue
		}
		extra = append(extra, c)
		s.tracker.account(c) // undo what the driver made of the request
	}
	for _, w := range want {
		if !v.has(w) {
			missing = append(missing, w)
		}
	}
	s.mu.Lock()
	seen := maps.Clone(s.overFence)
	s.mu.Unlock()
	var elsewhere []string
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		elsewhere = append(elsewhere, seen[k])
	}
	var problems []string
	if len(extra) > 0 {
		problems = append(problems, fmt.Sprintf("after one request of %d blocks, List holds %s, which the request did not name: a wider block fences every address inside it", len(want), showAll(extra)))
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%s, which the request named, are not listed as such", showAll(missing)))
	}
	if len(elsewhere) > 0 {
		problems = append(problems, "during the run: "+strings.Join(elsewhere, "; "))
	}
	check(len(problems) == 0, "%s", strings.Join(problems, "\n"))
	expectOK(s.unfence(ctx, want), fmt.Sprintf("UnfenceClusterNetwork of %d blocks", len(want)))
}
