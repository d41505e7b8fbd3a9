package fault

import (
	"net/netip"
)

// enforcedFaults store and list exactly what was asked but give the backend
// something else to enforce: only ENFORCE-001, which writes from addresses
// inside and beside the fenced blocks through an enforce command, sees
// them (its proofs need a backend that enforces, so they run on nftables:
// ProvenOtherwise).
var enforcedFaults = []*Fault{
	{Name: "enforce-first-address", Help: "a block is enforced as its first address only (List shows the block)",
		make: fixed(behaviour{enforced: func(p netip.Prefix) netip.Prefix { return netip.PrefixFrom(p.Addr(), p.Addr().BitLen()) }})},
	{Name: "enforce-neighbour", Help: "a block is enforced as the next block of its width, off by one (List shows the block)",
		make: fixed(behaviour{enforced: func(p netip.Prefix) netip.Prefix {
			if next := netip.PrefixFrom(lastAddr(p).Next(), p.Bits()); next.IsValid() {
				return next
			}
			return p
		}})},
}

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
