package sanity

import (
	"net/netip"
	"strings"
)

// blockOf reads a listed or requested string as the block it fences: a CIDR
// with its host bits cleared and an IPv4-mapped IPv6 block read as the IPv4
// block it names, or a bare address as a host block; spaces around it are
// ignored. ok is false for anything else.
func blockOf(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, aerr := netip.ParseAddr(s)
		if aerr != nil || a.Zone() != "" {
			return netip.Prefix{}, false
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	p = p.Masked()
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p, true
}

// blockKey is the key two strings share when they fence the same block (a
// string that names no block is its own key, so that garbage stays visible).
func blockKey(s string) string {
	if p, ok := blockOf(s); ok {
		return p.String()
	}
	return s
}

// canonical is the canonical spelling of a CIDR as written (host bits
// kept), or the input when it does not parse.
func canonical(c string) string {
	p, err := netip.ParsePrefix(strings.TrimSpace(c))
	if err != nil {
		return c
	}
	return p.String()
}

// fenceView is one reading of the fences in force, indexed by block.
type fenceView struct {
	raw    []string
	blocks map[string]int // blockKey -> entries naming it
}

func newView(listed []string) fenceView {
	v := fenceView{raw: listed, blocks: make(map[string]int, len(listed))}
	for _, c := range listed {
		v.blocks[blockKey(c)]++
	}
	return v
}

// has reports whether the block b names is listed, in any spelling.
func (v fenceView) has(b string) bool { return v.blocks[blockKey(b)] > 0 }

// count is how many entries name the block b names.
func (v fenceView) count(b string) int { return v.blocks[blockKey(b)] }

// spelled reports whether an entry is spelled exactly s.
func (v fenceView) spelled(s string) bool {
	for _, c := range v.raw {
		if c == s {
			return true
		}
	}
	return false
}
