package sanity

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
)

// Documentation ranges (RFC 5737, RFC 3849): the only blocks the suite fences
// unless Config.Destructive is set.
var docRanges = []netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// Pools the allocator hands blocks out of. 192.0.2.0/24 is kept whole for
// the rules that need a /24 (host bits, overlaps).
var (
	pool4 = []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24")}
	pool6 = []netip.Prefix{netip.MustParsePrefix("2001:db8:fe00::/40")}
	wide4 = netip.MustParsePrefix("192.0.2.0/24")
)

// allocator hands out fresh, aligned blocks from the documentation ranges
// that overlap no fence that existed before the run.
type allocator struct {
	mu    sync.Mutex
	avoid []netip.Prefix
	next4 netip.Addr
	next6 netip.Addr
	i4    int
	i6    int
}

// cursor is where the allocator stands, to rewind to.
type cursor struct {
	next4, next6 netip.Addr
	i4, i6       int
}

// position returns the current cursor.
func (a *allocator) position() cursor {
	a.mu.Lock()
	defer a.mu.Unlock()
	return cursor{a.next4, a.next6, a.i4, a.i6}
}

// rewind hands the blocks given out since c out again. Only called once
// they are all unfenced, so that the pools (512 IPv4 addresses) last a run
// of any length.
func (a *allocator) rewind(c cursor) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next4, a.next6, a.i4, a.i6 = c.next4, c.next6, c.i4, c.i6
}

// reset starts the allocator over, avoiding the fences that existed before.
func (a *allocator) reset(preexisting []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next4, a.next6, a.i4, a.i6, a.avoid = pool4[0].Addr(), pool6[0].Addr(), 0, 0, nil
	for _, c := range preexisting {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			continue
		}
		p = p.Masked()
		// Only fences that touch a pool matter; this keeps every later
		// check short however many fences existed before the run.
		for _, pool := range append(append([]netip.Prefix{wide4}, pool4...), pool6...) {
			if pool.Overlaps(p) {
				a.avoid = append(a.avoid, p)
				break
			}
		}
	}
}

// clash returns a pre-existing fence that overlaps p.
func (a *allocator) clash(p netip.Prefix) (netip.Prefix, bool) {
	for _, q := range a.avoid {
		if q.Overlaps(p) {
			return q, true
		}
	}
	return netip.Prefix{}, false
}

func (a *allocator) clashes(p netip.Prefix) bool {
	_, ok := a.clash(p)
	return ok
}

// block returns a fresh block of the given length from the v4 or v6 pools.
func (a *allocator) block(v6 bool, bits int) netip.Prefix {
	a.mu.Lock()
	defer a.mu.Unlock()
	pools, next, idx := pool4, &a.next4, &a.i4
	if v6 {
		pools, next, idx = pool6, &a.next6, &a.i6
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
		q, clash := a.clash(p)
		if !clash {
			*next = after(p)
			return p
		}
		// Jump past the whole clashing fence (or past p when the fence is
		// inside it): never address by address, so a pre-existing ::/0 or
		// /64 in the pool ends the search at once.
		if q.Bits() < p.Bits() {
			*next = after(q)
		} else {
			*next = after(p)
		}
		if !next.IsValid() {
			*idx = len(pools)
		}
	}
	skipBecause("the documentation ranges have no free /%d left: fences that existed before the run overlap the suite's pools and are avoided", bits)
	return netip.Prefix{}
}

// v4 returns n fresh IPv4 blocks of the given length.
func (s *State) v4(n, bits int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s.alloc.block(false, bits).String()
	}
	return out
}

// v6 returns n fresh IPv6 blocks of the given length.
func (s *State) v6(n, bits int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s.alloc.block(true, bits).String()
	}
	return out
}

// wideBlockFree reports whether 192.0.2.0/24 is free for the rules that need
// a whole /24.
func (s *State) wideBlockFree() bool { return !s.alloc.clashes(wide4) }

// lastAddr is the last address in p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// after is the first address after p, or the zero Addr at the end of the space.
func after(p netip.Prefix) netip.Addr {
	return lastAddr(p).Next()
}

// mustBeSafe refuses, before anything is sent, to fence a block outside the
// documentation ranges unless the run is destructive. Strings that are not
// CIDRs cannot fence anything and pass.
func (s *State) mustBeSafe(cidrs []string) {
	if s.cfg.Destructive {
		return
	}
	if bad := outsideDocRanges(cidrs); len(bad) > 0 {
		Fail(fmt.Sprintf("refusing to fence %v: outside the documentation ranges and --destructive is not set", bad))
	}
}

// outsideDocRanges returns the CIDRs that would fence an address outside
// the documentation ranges. Strings that are not CIDRs fence nothing.
func outsideDocRanges(cidrs []string) []string {
	var bad []string
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			continue
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			// An IPv4-mapped block fences (at most) its IPv4 block.
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		safe := false
		for _, r := range docRanges {
			if r.Bits() <= p.Bits() && r.Contains(p.Addr()) {
				safe = true
			}
		}
		if !safe {
			bad = append(bad, c)
		}
	}
	return bad
}
