package relations

import (
	"fmt"
	"net/netip"
	"strings"
)

// Place returns the blocks of a case's operands in the given regions (one
// aligned block per length of c.Regions), and each operand as written.
func (c Case) Place(regions []netip.Prefix) (blocks []netip.Prefix, cidrs []string) {
	for _, op := range c.Operands {
		b := Nth(regions[op.Region], op.Bits, op.Index)
		blocks = append(blocks, b)
		cidrs = append(cidrs, Spell(b, op.Spell))
	}
	return blocks, cidrs
}

// Nth is the index-th aligned block of length bits inside region (-1 the
// last, -2 the one before it).
func Nth(region netip.Prefix, bits, index int) netip.Prefix {
	b := region.Masked().Addr().AsSlice()
	n := bits - region.Bits() // the bits that say which block
	for i := 0; i < n; i++ {
		pos := bits - 1 - i // bit i of the index, from the least significant
		var set bool
		if index < 0 {
			set = i >= 64 || ((^uint64(-index-1))>>i)&1 == 1
		} else {
			set = i < 64 && (uint64(index)>>i)&1 == 1
		}
		if set {
			b[pos/8] |= 1 << (7 - pos%8)
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.PrefixFrom(a, bits)
}

// Spell writes a block as the spelling says.
func Spell(p netip.Prefix, s Spelling) string {
	a, bits := p.Addr(), p.Bits()
	switch s {
	case HostBits:
		return netip.PrefixFrom(a.Next(), bits).String()
	case HalfHostBits:
		return netip.PrefixFrom(Nth(p, bits+1, -1).Addr(), bits).String()
	case Mapped:
		return fmt.Sprintf("::ffff:%s/%d", a, 96+bits)
	case Expanded, Uncompressed:
		g := a.As16()
		parts := make([]string, 8)
		for i := range parts {
			v := uint16(g[2*i])<<8 | uint16(g[2*i+1])
			if s == Expanded {
				parts[i] = fmt.Sprintf("%04x", v)
			} else {
				parts[i] = fmt.Sprintf("%x", v)
			}
		}
		return fmt.Sprintf("%s/%d", strings.Join(parts, ":"), bits)
	case Upper:
		return strings.ToUpper(p.String())
	}
	return p.String()
}
