package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/rulebook"
)

// Documentation ranges (RFC 5737, RFC 3849, RFC 9637): the only blocks the
// suite fences unless Config.Destructive is set.
var docRanges = []netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("3fff::/20"),
}

// Pools the allocator hands blocks out of. 192.0.2.0/24 is kept whole for
// the rules that need a /24 (host bits, the malformed-input corpus).
var (
	pool4 = []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24")}
	pool6 = []netip.Prefix{netip.MustParsePrefix("2001:db8:fe00::/40"), netip.MustParsePrefix("3fff:f00::/40")}
	wide4 = netip.MustParsePrefix("192.0.2.0/24")
)

// The wide IPv6 space: the parts of 3fff::/20 and 2001:db8::/32 outside the
// pools, where the width classes wider than a /40 are placed (regions).
var wide6 = []netip.Prefix{netip.MustParsePrefix("3fff::/21"), netip.MustParsePrefix("2001:db8::/33")}

// Reserved ranges outside the documentation ranges that --destructive adds
// when pre-existing fences leave no room in them: benchmarking (RFC 2544,
// RFC 5180) and discard-only (RFC 6666) space, which no cluster routes.
var (
	destructivePool4 = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/16")}
	destructivePool6 = []netip.Prefix{netip.MustParsePrefix("2001:2::/48"), netip.MustParsePrefix("100::/64")}
	destructiveWide4 = netip.MustParsePrefix("198.19.0.0/24")
)

// FencedRanges are every range the suite may fence: the documentation
// ranges and the reserved ones --destructive adds (CIDR-010's 240.0.0.0/4
// aside). An enforce command's setup routes them.
func FencedRanges() []netip.Prefix {
	out := slices.Clone(docRanges)
	out = append(append(append(out, destructivePool4...), destructiveWide4), destructivePool6...)
	return out
}

// allocator hands out fresh, aligned blocks from the documentation ranges
// that overlap no fence that existed before the run, nor any block still in
// use. It never rewinds on its own: when its pools run out it asks reclaim
// which blocks are in use now (one read of the fences) and starts over
// around them, so a long run costs one List per exhaustion, not one per rule.
type allocator struct {
	mu          sync.Mutex
	avoid       []netip.Prefix // pre-existing fences that touch a pool
	inUse       []netip.Prefix // blocks in use at the last reclaim
	issued      []netip.Prefix // handed out since the current rule started
	next4       netip.Addr
	next6       netip.Addr
	i4          int
	i6          int
	destructive bool
	// reclaim returns the blocks in use now (listed, or fenced and not yet
	// undone); nil when the fences cannot be read.
	reclaim func() ([]netip.Prefix, error)
	// held returns the blocks the run fenced and has not undone (the
	// sentinels, the probes' blocks): region never hands them out.
	held      func() []netip.Prefix
	reclaimMu sync.Mutex
}

func (a *allocator) pools(v6 bool) []netip.Prefix {
	if v6 {
		if a.destructive {
			return append(append([]netip.Prefix{}, pool6...), destructivePool6...)
		}
		return pool6
	}
	if a.destructive {
		return append(append([]netip.Prefix{}, pool4...), destructivePool4...)
	}
	return pool4
}

// reset starts the allocator over, avoiding the fences that existed before.
func (a *allocator) reset(preexisting []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.avoid, a.inUse, a.issued = nil, nil, nil
	a.rewindLocked()
	all := append(append(append(append([]netip.Prefix{wide4, destructiveWide4}, a.pools(false)...), a.pools(true)...), destructivePool6...), wide6...)
	for _, c := range preexisting {
		p, ok := blockOf(c)
		if !ok {
			continue
		}
		// Only fences that touch a pool matter; this keeps every later
		// check short however many fences existed before the run.
		for _, pool := range all {
			if pool.Overlaps(p) {
				a.avoid = append(a.avoid, p)
				break
			}
		}
	}
}

func (a *allocator) rewindLocked() {
	a.next4, a.next6, a.i4, a.i6 = a.pools(false)[0].Addr(), a.pools(true)[0].Addr(), 0, 0
}

// ruleStarts forgets the blocks handed out to the previous rule.
func (a *allocator) ruleStarts() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.issued = nil
}

// heldNow are the blocks held now (held), outside a.mu.
func (a *allocator) heldNow() []netip.Prefix {
	if a.held == nil {
		return nil
	}
	return a.held()
}

// clash returns a fence that existed before the run (or a block in use at
// the last reclaim, one handed out to this rule, or one held) that
// overlaps p.
func (a *allocator) clash(p netip.Prefix, held []netip.Prefix) (netip.Prefix, bool) {
	for _, set := range [][]netip.Prefix{a.avoid, a.inUse, a.issued, held} {
		for _, q := range set {
			if q.Overlaps(p) {
				return q, true
			}
		}
	}
	return netip.Prefix{}, false
}

func (a *allocator) clashes(p netip.Prefix) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, q := range a.avoid {
		if q.Overlaps(p) {
			return true
		}
	}
	return false
}

// block returns a fresh block of the given length from the v4 or v6 pools;
// when they are exhausted it reclaims the blocks no longer in use once, and
// then reports what is in the way.
func (a *allocator) block(v6 bool, bits int) (netip.Prefix, error) {
	if p, ok := a.scan(v6, bits); ok {
		return p, nil
	}
	if a.reclaim != nil {
		a.reclaimMu.Lock()
		inUse, err := a.reclaim()
		a.reclaimMu.Unlock()
		if err == nil {
			a.mu.Lock()
			a.inUse = inUse
			a.rewindLocked()
			a.mu.Unlock()
			if p, ok := a.scan(v6, bits); ok {
				return p, nil
			}
		}
	}
	return netip.Prefix{}, a.exhausted(v6, bits)
}

// exhausted says which ranges are full and what fills them.
func (a *allocator) exhausted(v6 bool, bits int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var pools, covering []string
	for _, p := range a.pools(v6) {
		pools = append(pools, p.String())
	}
	for _, q := range a.avoid {
		for _, p := range a.pools(v6) {
			if p.Overlaps(q) && len(covering) < 5 {
				covering = append(covering, q.String())
				break
			}
		}
	}
	msg := fmt.Sprintf("no free /%d block is left in %s", bits, strings.Join(pools, ", "))
	if len(covering) > 0 {
		msg += fmt.Sprintf(": fences that existed before the run cover them (%s)", strings.Join(covering, ", "))
	}
	if !a.destructive {
		msg += fmt.Sprintf("; --destructive lets the suite use %s and %s too", destructivePool4[0], destructivePool6[0])
	}
	return fmt.Errorf("%s", msg)
}

// scan hands out the next free block, if any.
func (a *allocator) scan(v6 bool, bits int) (netip.Prefix, bool) {
	held := a.heldNow()
	a.mu.Lock()
	defer a.mu.Unlock()
	pools, next, idx := a.pools(false), &a.next4, &a.i4
	if v6 {
		pools, next, idx = a.pools(true), &a.next6, &a.i6
	}
	for *idx < len(pools) {
		pool := pools[*idx]
		p := netip.PrefixFrom(*next, bits).Masked()
		if p.Addr().Less(*next) {
			p = netip.PrefixFrom(after(p), bits)
		}
		if !p.IsValid() || !pool.Contains(p.Addr()) || !pool.Contains(lastAddr(p)) {
			*idx++
			if *idx < len(pools) {
				*next = pools[*idx].Addr()
			}
			continue
		}
		q, clash := a.clash(p, held)
		if !clash {
			*next = after(p)
			a.issued = append(a.issued, p)
			return p, true
		}
		*next = pastClash(p, q)
		if !next.IsValid() {
			*idx = len(pools)
		}
	}
	return netip.Prefix{}, false
}

// regionPools is all the space regions come from: every documentation
// range (and with --destructive the reserved ones), widest first.
func (a *allocator) regionPools(v6 bool) []netip.Prefix {
	if v6 {
		out := append(slices.Clone(wide6), pool6...)
		if a.destructive {
			out = append(out, destructivePool6...)
		}
		return out
	}
	out := append([]netip.Prefix{wide4}, pool4...)
	if a.destructive {
		out = append(out, destructivePool4[0], destructiveWide4)
	}
	return out
}

// region hands out the first free aligned block of the length anywhere in
// the region pools, scanning from their start (no cursor: a rule that
// places many blocks of mixed lengths, FENCE-010, packs them), or false when
// none is free.
func (a *allocator) region(v6 bool, bits int) (netip.Prefix, bool) {
	held := a.heldNow()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, pool := range a.regionPools(v6) {
		if bits < pool.Bits() {
			continue
		}
		next := pool.Addr()
		for next.IsValid() && pool.Contains(next) {
			p := netip.PrefixFrom(next, bits).Masked()
			if p.Addr().Less(next) {
				next = after(p)
				continue
			}
			q, clash := a.clash(p, held)
			if !clash {
				a.issued = append(a.issued, p)
				return p, true
			}
			next = pastClash(p, q)
		}
	}
	return netip.Prefix{}, false
}

// inSpace reports whether p overlaps the space regions come from.
func (a *allocator) inSpace(p netip.Prefix) bool {
	for _, pool := range append(a.regionPools(false), a.regionPools(true)...) {
		if pool.Overlaps(p) {
			return true
		}
	}
	return false
}

// release gives back blocks handed out to the current rule, once it no
// longer uses them.
func (a *allocator) release(ps []netip.Prefix) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.issued = slices.DeleteFunc(a.issued, func(p netip.Prefix) bool { return slices.Contains(ps, p) })
}

// refresh reads which blocks are in use now (one reading of the fences), so
// that blocks used at the last reclaim and undone since are free again.
func (a *allocator) refresh() {
	if a.reclaim == nil {
		return
	}
	a.reclaimMu.Lock()
	inUse, err := a.reclaim()
	a.reclaimMu.Unlock()
	if err == nil {
		a.mu.Lock()
		a.inUse = inUse
		a.mu.Unlock()
	}
}

// region is a fresh region of the length, or the rule ends as NOT RUN
// naming what is in the way. When none is free, the fences are read once
// (blocks held since the last reading may be free by now) and it tries
// again.
func (s *State) region(v6 bool, bits int) netip.Prefix {
	GinkgoHelper()
	p, ok := s.alloc.region(v6, bits)
	if !ok {
		// TIME-002's trials still waiting for their window hold blocks
		// (an IPv4-only driver's fill the /24s): wait it out, read them,
		// and so free their blocks.
		ctx, cancel := context.WithTimeout(context.Background(), 3*s.cfg.RPCTimeout.Duration)
		s.awaitWindows(ctx, s.probes, true)
		cancel()
		s.alloc.refresh()
		p, ok = s.alloc.region(v6, bits)
	}
	if !ok {
		if c := s.cut(); c != nil {
			rulebook.Cut(c.kind, "%s", c.why)
		}
		notRun("no free %s /%d is left in the documentation ranges: fences the run could not undo, or that existed before it, are in the way", family(v6), bits)
	}
	return p
}

// take returns a fresh block or ends the rule as NOT RUN, naming what is
// in the way.
func (s *State) take(v6 bool, bits int) netip.Prefix {
	p, err := s.alloc.block(v6, bits)
	if err != nil {
		if c := s.cut(); c != nil {
			rulebook.Cut(c.kind, "%s", c.why)
		}
		rulebook.NotRun("%s", err.Error())
	}
	return p
}

// v4 returns n fresh IPv4 blocks of the given length.
func (s *State) v4(n, bits int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s.take(false, bits).String()
	}
	return out
}

// v6 returns n fresh IPv6 blocks of the given length.
func (s *State) v6(n, bits int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s.take(true, bits).String()
	}
	return out
}

// wideBlock is a whole /24 for the rules that need one: 192.0.2.0/24, else
// a /24 of the pools, else with --destructive a reserved one; the rule is
// NOT RUN when fences that existed before the run leave none.
func (s *State) wideBlock() netip.Prefix {
	if !s.alloc.clashes(wide4) {
		return wide4
	}
	if p, err := s.alloc.block(false, 24); err == nil {
		return p
	}
	if s.cfg.Destructive && !s.alloc.clashes(destructiveWide4) {
		return destructiveWide4
	}
	hint := "; --destructive lets the suite use " + destructiveWide4.String()
	if s.cfg.Destructive {
		hint = ", and so does " + destructiveWide4.String()
	}
	if c := s.cut(); c != nil {
		rulebook.Cut(c.kind, "%s", c.why)
	}
	rulebook.NotRun("this rule needs a whole /24: %s and every /24 of %s overlap a fence that existed before the run%s", wide4, pool4, hint)
	return netip.Prefix{}
}

// lastAddr is the last address in p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// pastClash is where a search resumes after candidate p clashed with q:
// past the whole clashing block, or past p when the block is inside it;
// never address by address, so a pre-existing ::/0 or /64 in the pool
// ends the search at once.
func pastClash(p, q netip.Prefix) netip.Addr {
	if q.Bits() < p.Bits() {
		return after(q)
	}
	return after(p)
}

// after is the first address after p, or the zero Addr at the end of the space.
func after(p netip.Prefix) netip.Addr {
	return lastAddr(p).Next()
}

// mustBeSafe refuses, before anything is sent, to fence a block outside the
// documentation ranges unless the run is destructive. Strings that name no
// block cannot fence anything and pass (the malformed-input corpus checks
// its own readings, see corpus.go).
func (s *State) mustBeSafe(cidrs []string) {
	if s.cfg.Destructive {
		return
	}
	if bad := outsideDocRanges(cidrs); len(bad) > 0 {
		failf("the suite refused to fence %s: outside the documentation ranges and --destructive is not set", showAll(bad))
	}
}

// outsideDocRanges returns the strings that would fence an address outside
// the documentation ranges.
func outsideDocRanges(cidrs []string) []string {
	var bad []string
	for _, c := range cidrs {
		p, ok := blockOf(c)
		if ok && !inDocRanges(p) {
			bad = append(bad, c)
		}
	}
	return bad
}

// inDocRanges reports whether p lies inside one documentation range.
func inDocRanges(p netip.Prefix) bool {
	for _, r := range docRanges {
		if r.Bits() <= p.Bits() && r.Contains(p.Addr()) {
			return true
		}
	}
	return false
}
