package fault

import (
	"net/netip"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// blockFaults get blocks wrong: overlapping blocks that are not independent
// fences (a Fence or an Unfence that touches the blocks around or inside
// the one named), and blocks of some widths stored as another block.
var blockFaults = []*Fault{
	{Name: "unfence-lifts-around", Help: "an Unfence of a block that is not fenced lifts the narrowest fence around it",
		Proofs: []Proof{{Fails: []string{"FENCE-010"}, MayFail: []string{"FENCE-007"}}},
		make: fixed(behaviour{unfence: func(s *UnfenceStep) error {
			if !s.Block.Enforced() || s.Fences.Has(s.Block) {
				return nil
			}
			var narrowest cidr.Block
			for _, b := range s.Fences.Blocks() {
				if around(b, s.Block) && (!narrowest.Enforced() || b.Prefix.Bits() > narrowest.Prefix.Bits()) {
					narrowest = b
				}
			}
			if narrowest.Enforced() {
				s.Fences.Remove(narrowest)
			}
			return nil
		}})},
	{Name: "fence-replaces-inside", Help: "a Fence of a block removes the narrower fences inside it (they look covered)",
		Proofs: []Proof{{Fails: []string{"FENCE-010"}, MayFail: []string{"FENCE-007"}}},
		make: fixed(behaviour{fence: func(s *FenceStep) error {
			for _, b := range s.Fences.Blocks() {
				if around(s.Block, b) {
					s.Fences.Remove(b)
				}
			}
			return nil
		}})},
	{Name: "fence-absorbed", Help: "a Fence of a block inside a fenced one is acknowledged and not stored (it looks covered)",
		Proofs: []Proof{{Fails: []string{"CIDR-009", "FENCE-010"}, MayFail: []string{"FENCE-007"}}},
		make: fixed(behaviour{fence: func(s *FenceStep) error {
			for _, b := range s.Fences.Blocks() {
				if s.Action == Add && around(b, s.Block) {
					s.Action = Drop
				}
			}
			return nil
		}})},
	{Name: "one-fence-per-address", Help: "fences are keyed by address: a Fence or an Unfence of 198.51.100.0/29 replaces or lifts 198.51.100.0/28 too",
		Proofs: []Proof{{Fails: []string{"CIDR-009", "FENCE-010"}, MayFail: []string{"FENCE-007"}}},
		make: fixed(behaviour{
			fence:   func(s *FenceStep) error { sameAddress(s.Fences, s.Block); return nil },
			unfence: func(s *UnfenceStep) error { sameAddress(s.Fences, s.Block); return nil },
		})},
	{Name: "ipv6-wide-as-64", Help: "IPv6 blocks wider than /64 are stored and listed as their first /64",
		Proofs: []Proof{{Fails: []string{"CIDR-014", "FENCE-010"}, Why: whyModel("CIDR-014")}},
		make: fixed(behaviour{cidr: at(func(_ string, b cidr.Block, err error) (cidr.Block, error) {
			if p := b.Prefix; err == nil && b.Enforced() && p.Addr().Is6() && p.Bits() < 64 {
				return cidr.Canonical(netip.PrefixFrom(p.Addr(), 64)), nil
			}
			return b, err
		})})},
	{Name: "ipv6-nibble", Help: "IPv6 prefix lengths are rounded up to a multiple of four, as a store keyed by hexadecimal digits does: a /63 is stored as a /64, a /127 as a /128",
		Proofs: []Proof{{Fails: []string{"CIDR-014", "FENCE-009", "FENCE-010"}, Why: "FENCE-009 asks for IPv6 /125s; " + whyModel("CIDR-014")}},
		make: fixed(behaviour{cidr: at(func(_ string, b cidr.Block, err error) (cidr.Block, error) {
			if p := b.Prefix; err == nil && b.Enforced() && p.Addr().Is6() && p.Bits()%4 != 0 {
				return cidr.Canonical(netip.PrefixFrom(p.Addr(), p.Bits()+4-p.Bits()%4)), nil
			}
			return b, err
		})})},
	{Name: "keep-mapped-wide", Help: "an IPv4-mapped block wider than /128 is kept as IPv6, where no IPv4 packet matches it (a /128 is fenced as IPv4)",
		Proofs: []Proof{{Fails: []string{"CIDR-012", "FENCE-010"}, Why: whyModel("CIDR-012")}},
		make: fixed(behaviour{
			load: func(l *Load) { l.Spellings, l.Migrate = true, false },
			cidr: at(func(raw string, b cidr.Block, err error) (cidr.Block, error) {
				if p, perr := netip.ParsePrefix(raw); err == nil && perr == nil && p.Addr().Is4In6() && p.Bits() >= 96 && p.Bits() < 128 {
					return cidr.Canonical(p.Masked()), nil
				}
				return b, err
			}),
		})},
	{Name: "unmap-keeps-length", Help: "an IPv4-mapped block is unmapped without taking 96 off its length, clamped to a host: ::ffff:198.51.100.0/120 fences 198.51.100.0/32",
		Proofs: fails("CIDR-012", "FENCE-010"),
		make: fixed(behaviour{cidr: at(func(raw string, b cidr.Block, err error) (cidr.Block, error) {
			if p, perr := netip.ParsePrefix(raw); err == nil && perr == nil && p.Addr().Is4In6() && p.Bits() >= 96 {
				return cidr.Canonical(netip.PrefixFrom(p.Masked().Addr().Unmap(), 32)), nil
			}
			return b, err
		})})},
}

// around reports whether a is a block strictly wider than b that contains it.
func around(a, b cidr.Block) bool {
	return a.Enforced() && b.Enforced() && a.Prefix.Bits() < b.Prefix.Bits() && a.Prefix.Contains(b.Prefix.Addr())
}

// sameAddress removes the stored blocks that share b's address with
// another length.
func sameAddress(f Fences, b cidr.Block) {
	for _, o := range f.Blocks() {
		if o != b && o.Enforced() && b.Enforced() && o.Prefix.Addr() == b.Prefix.Addr() {
			f.Remove(o)
		}
	}
}
