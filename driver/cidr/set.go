package cidr

import (
	"maps"
	"net/netip"
	"slices"

	"github.com/google/btree"
)

// Set is the union of a multiset of prefixes, kept as sorted, non-overlapping,
// non-adjacent ranges (what an nftables interval set holds). Add and Remove
// cost O(log n) plus the prefixes inside the changed block, never O(n), and
// report how the ranges changed, so a backend can send only the changed
// interval elements.
//
// It relies on a property of CIDR blocks: two prefixes are either disjoint
// or one contains the other.
type Set struct {
	count    map[netip.Prefix]int
	prefixes *btree.BTreeG[netip.Prefix] // distinct prefixes, by address then length
	ranges   *btree.BTreeG[Range]        // the union, by From (IPv4 sorts before IPv6)
}

// Delta is how a change moved the ranges: Removed were in the union and are
// not any more, Added are new. A range in both is never reported.
type Delta struct {
	Added, Removed []Range
}

// Empty reports whether nothing changed.
func (d Delta) Empty() bool { return len(d.Added) == 0 && len(d.Removed) == 0 }

// NewSet returns the set of ps.
func NewSet(ps []netip.Prefix) *Set {
	s := &Set{
		count:    map[netip.Prefix]int{},
		prefixes: btree.NewG(32, func(a, b netip.Prefix) bool { return a.Compare(b) < 0 }),
		ranges:   btree.NewG(32, func(a, b Range) bool { return a.From.Less(b.From) }),
	}
	for _, p := range ps {
		if !p.IsValid() {
			continue
		}
		p = p.Masked()
		if s.count[p]++; s.count[p] == 1 {
			s.prefixes.ReplaceOrInsert(p)
		}
	}
	for _, r := range Union(slices.Collect(maps.Keys(s.count))) {
		s.ranges.ReplaceOrInsert(r)
	}
	return s
}

// Ranges returns the union, sorted.
func (s *Set) Ranges() []Range {
	out := make([]Range, 0, s.ranges.Len())
	s.ranges.Ascend(func(r Range) bool { out = append(out, r); return true })
	return out
}

// Len returns the number of ranges.
func (s *Set) Len() int { return s.ranges.Len() }

// Change adds and removes prefixes (removal of a prefix that is not in the
// multiset is ignored) and returns the net change of the ranges.
func (s *Set) Change(add, remove []netip.Prefix) Delta {
	net := map[Range]int{}
	for _, p := range add {
		s.add(p, net)
	}
	for _, p := range remove {
		s.remove(p, net)
	}
	var d Delta
	for r, n := range net {
		switch {
		case n > 0:
			d.Added = append(d.Added, r)
		case n < 0:
			d.Removed = append(d.Removed, r)
		}
	}
	byFrom := func(a, b Range) int { return a.From.Compare(b.From) }
	slices.SortFunc(d.Added, byFrom)
	slices.SortFunc(d.Removed, byFrom)
	return d
}

func (s *Set) put(r Range, net map[Range]int) { s.ranges.ReplaceOrInsert(r); net[r]++ }
func (s *Set) del(r Range, net map[Range]int) { s.ranges.Delete(r); net[r]-- }

func (s *Set) add(p netip.Prefix, net map[Range]int) {
	if !p.IsValid() {
		return
	}
	p = p.Masked()
	if s.count[p]++; s.count[p] > 1 {
		return
	}
	s.prefixes.ReplaceOrInsert(p)
	m := Range{From: p.Addr(), To: last(p)}
	// Ranges overlapping or adjacent to m: at most one starts before m.From,
	// the others start inside m or right after it.
	var touched []Range
	s.ranges.DescendLessOrEqual(Range{From: m.From}, func(r Range) bool {
		if r.From.Is4() == m.From.Is4() && (r.To.Compare(m.From) >= 0 || r.To.Next() == m.From) {
			touched = append(touched, r)
		}
		return false
	})
	s.ranges.AscendGreaterOrEqual(Range{From: m.From}, func(r Range) bool {
		if r.From.Is4() != m.From.Is4() || (r.From.Compare(m.To) > 0 && m.To.Next() != r.From) {
			return false
		}
		if len(touched) == 0 || touched[len(touched)-1] != r {
			touched = append(touched, r)
		}
		return true
	})
	if len(touched) == 1 && touched[0].From.Compare(m.From) <= 0 && touched[0].To.Compare(m.To) >= 0 {
		return // already covered
	}
	for _, r := range touched {
		if r.From.Less(m.From) {
			m.From = r.From
		}
		if r.To.Compare(m.To) > 0 {
			m.To = r.To
		}
		s.del(r, net)
	}
	s.put(m, net)
}

func (s *Set) remove(p netip.Prefix, net map[Range]int) {
	if !p.IsValid() {
		return
	}
	p = p.Masked()
	switch n := s.count[p]; {
	case n == 0:
		return
	case n > 1:
		s.count[p]--
		return
	}
	delete(s.count, p)
	s.prefixes.Delete(p)
	for bits := p.Bits() - 1; bits >= 0; bits-- {
		if s.count[netip.PrefixFrom(p.Addr(), bits).Masked()] > 0 {
			return // a wider stored prefix still covers p
		}
	}
	from, to := p.Addr(), last(p)
	var outer Range
	s.ranges.DescendLessOrEqual(Range{From: from}, func(r Range) bool { outer = r; return false })
	// The prefixes left inside p, outermost only (they nest or are disjoint).
	var inner []netip.Prefix
	s.prefixes.AscendGreaterOrEqual(p, func(q netip.Prefix) bool {
		if q.Addr().Compare(to) > 0 || q.Addr().Is4() != from.Is4() {
			return false
		}
		if n := len(inner); n == 0 || !inner[n-1].Contains(q.Addr()) {
			inner = append(inner, q)
		}
		return true
	})
	var pieces []Range
	if outer.From.Less(from) {
		pieces = append(pieces, Range{From: outer.From, To: from.Prev()})
	}
	pieces = append(pieces, Union(inner)...)
	if to.Less(outer.To) {
		pieces = append(pieces, Range{From: to.Next(), To: outer.To})
	}
	s.del(outer, net)
	for _, r := range mergeAdjacent(pieces) {
		s.put(r, net)
	}
}

// mergeAdjacent merges sorted, non-overlapping ranges that touch.
func mergeAdjacent(rs []Range) []Range {
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1].To.Next() == r.From {
			out[n-1].To = r.To
			continue
		}
		out = append(out, r)
	}
	return out
}
