package cidr

import "net/netip"

// Block is one fence as the driver holds it: a masked prefix, written in
// canonical form by String, or, only under the faults that store
// a CIDR as it was written, that spelling and the prefix it names, if any.
// A request's CIDRs become Blocks once, when they are parsed; stored records
// once, when they are loaded. Blocks are comparable: two spellings of one
// prefix are two blocks.
type Block struct {
	// Prefix is the masked prefix the block enforces; invalid when the
	// spelling names none (a bare address, a padded or malformed string).
	Prefix netip.Prefix
	// Spelling is set only when the block is not the canonical form of
	// Prefix: a fault stored it as written.
	Spelling string
}

// Canonical is the block of a prefix in canonical form.
func Canonical(p netip.Prefix) Block { return Block{Prefix: p} }

// Spelled is the block of a CIDR as written: the canonical block when s is a
// masked prefix written in canonical form, else s itself with the (masked)
// prefix it names, if any.
// A stored record's key reads back through Spelled.
func Spelled(s string) Block {
	p, err := netip.ParsePrefix(s)
	switch {
	case err != nil:
		return Block{Spelling: s}
	case p == p.Masked() && p.String() == s:
		return Block{Prefix: p}
	}
	return Block{Prefix: p.Masked(), Spelling: s}
}

// String is the block as stored and listed: its spelling, or the canonical
// form of its prefix.
func (b Block) String() string {
	if b.Spelling != "" {
		return b.Spelling
	}
	return b.Prefix.String()
}

// Enforced reports whether the block names a prefix to enforce.
func (b Block) Enforced() bool { return b.Prefix.IsValid() }
