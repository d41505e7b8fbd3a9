// Package relations generates, by construction, the cases the fence
// lifecycle is checked on: two (and three) CIDR blocks in every relation
// two blocks can have (equal, equal in another spelling, nested, an
// overlapping spelling, adjacent as siblings or across a boundary,
// disjoint), at every width class of a family, each with a script of
// Fence and Unfence requests that, for every ordered pair (X, Y) of its
// blocks, unfences Y while X is fenced and Y is not, fences Y while X is
// fenced, and unfences Y while both are fenced.
//
// A case is a shape: its blocks are given by length and position inside
// one or more regions (aligned blocks the caller places in fresh
// documentation space), so the same table serves any free block. The
// reference model (package fencemodel) says what each step must leave.
package relations

import (
	"fmt"

	"github.com/fenceproof/fenceproof/sanity/fencemodel"
)

// Family is an address family with the width classes it is checked at.
type Family struct {
	Name string
	Bits int // the address length: 32 or 128
	// Widths are the width classes, widest first; Widest is the widest
	// region the free space holds (the documentation ranges: a /24 for
	// IPv4, 3fff::/20 for IPv6).
	Widths []int
	Widest int
}

// The families, at the width classes the documentation ranges allow:
// every IPv4 length of a /24, and for IPv6 the host, the point-to-point
// /127, a length inside a /64, each side of the /64 boundary, the /48 and a
// length that is no multiple of four beside it, and the wide /32 and /24
// that 3fff::/20 holds.
var (
	IPv4 = Family{Name: "IPv4", Bits: 32, Widths: []int{24, 25, 26, 27, 28, 29, 30, 31, 32}, Widest: 24}
	IPv6 = Family{Name: "IPv6", Bits: 128, Widths: []int{24, 32, 47, 48, 63, 64, 65, 120, 127, 128}, Widest: 21}
)

// Destructive widens a family to the reserved space --destructive adds
// (198.18.0.0/16 for IPv4): the extra width classes, and that region.
func (f Family) Destructive(widths []int, widest int) Family {
	f.Widths = append(append([]int{}, widths...), f.Widths...)
	f.Widest = widest
	return f
}

// Relation is how the blocks of a case relate.
type Relation string

// The relations.
const (
	Equal       Relation = "equal"
	Respelled   Relation = "equal, spelled otherwise"
	Nested      Relation = "nested"
	Overlapping Relation = "overlapping spelling"
	Siblings    Relation = "adjacent siblings"
	Across      Relation = "adjacent across a boundary"
	Disjoint    Relation = "disjoint"
	Chain       Relation = "nested three deep"
	Family3     Relation = "two siblings and their parent"
)

// Spelling is how an operand is written.
type Spelling string

// The spellings. HostBits writes the block with its second address,
// HalfHostBits with the first address of its second half (the address of
// a block nested at its end).
const (
	Canonical    Spelling = "canonical"
	HostBits     Spelling = "with a host bit"
	HalfHostBits Spelling = "with the address of its second half"
	Mapped       Spelling = "IPv4-mapped"
	Expanded     Spelling = "expanded"
	Upper        Spelling = "upper-case"
	Uncompressed Spelling = "uncompressed"
)

// Operand is one block of a case: its length, its position among the
// aligned blocks of that length in its region (0 the first, -1 the last)
// and its spelling.
type Operand struct {
	Region int
	Bits   int
	Index  int
	Spell  Spelling
}

// Step is one request of a script: an RPC of one operand.
type Step struct {
	RPC     fencemodel.RPC
	Operand int
}

// Case is one shape to check: blocks in one relation, placed in regions of
// the given lengths, and the script run on them.
type Case struct {
	Family   Family
	Relation Relation
	Name     string
	Regions  []int
	Operands []Operand
	Script   []Step
}

// Cases are every case of a family, widest regions first.
func Cases(f Family) []Case {
	var out []Case
	add := func(rel Relation, name string, regions []int, ops ...Operand) {
		script := pairScript
		if len(ops) == 3 {
			script = tripleScript
		}
		out = append(out, Case{Family: f, Relation: rel, Name: fmt.Sprintf("%s %s", f.Name, name), Regions: regions, Operands: ops, Script: script})
	}
	for _, w := range f.Widths {
		one := []int{w}
		at := func(bits, index int, s Spelling) Operand { return Operand{Bits: bits, Index: index, Spell: s} }
		add(Equal, fmt.Sprintf("/%d and itself", w), one, at(w, 0, Canonical), at(w, 0, Canonical))
		for _, s := range respellings(f, w) {
			add(Respelled, fmt.Sprintf("/%d and itself %s", w, s), one, at(w, 0, Canonical), at(w, 0, s))
		}
		if w < f.Bits {
			add(Nested, fmt.Sprintf("/%d around the /%d at its start", w, w+1), one, at(w, 0, Canonical), at(w+1, 0, Canonical))
			add(Nested, fmt.Sprintf("/%d around the /%d at its end", w, w+1), one, at(w, 0, Canonical), at(w+1, -1, Canonical))
			add(Overlapping, fmt.Sprintf("/%d at the end of a /%d spelled with its address", w+1, w), one, at(w+1, -1, Canonical), at(w, 0, HalfHostBits))
		}
		// A region as wide as the space holds is scarce (the documentation
		// ranges hold three IPv4 /24s): the relations a narrower case covers
		// as well are not repeated there, and blocks that wide are disjoint
		// from the other cases' blocks of a round anyway.
		if w <= f.Bits-2 && w > f.Widest {
			add(Nested, fmt.Sprintf("/%d around a host inside it", w), one, at(w, 0, Canonical), at(f.Bits, 1, Canonical))
		}
		if w-1 > f.Widest {
			add(Siblings, fmt.Sprintf("two /%d siblings", w), []int{w - 1}, at(w, 0, Canonical), at(w, -1, Canonical))
		}
		if w-2 >= f.Widest {
			add(Across, fmt.Sprintf("two /%d adjacent across a /%d boundary", w, w-1), []int{w - 2}, at(w, 1, Canonical), at(w, 2, Canonical))
			add(Disjoint, fmt.Sprintf("two disjoint /%d", w), []int{w - 2}, at(w, 0, Canonical), at(w, -1, Canonical))
		}
	}
	for _, w := range tripleWidths(f) {
		add(Chain, fmt.Sprintf("/%d, /%d, /%d nested at one address", w, w+1, w+2), []int{w},
			Operand{Bits: w}, Operand{Bits: w + 1}, Operand{Bits: w + 2})
		add(Family3, fmt.Sprintf("/%d and the two /%d inside it", w, w+1), []int{w},
			Operand{Bits: w}, Operand{Bits: w + 1}, Operand{Bits: w + 1, Index: -1})
	}
	for i := range out {
		for j := range out[i].Operands {
			if out[i].Operands[j].Spell == "" {
				out[i].Operands[j].Spell = Canonical
			}
		}
	}
	return out
}

// respellings are the other spellings of a /w block of the family.
func respellings(f Family, w int) []Spelling {
	var out []Spelling
	if f.Bits == 128 {
		out = append(out, Expanded, Upper, Uncompressed)
	}
	if w < f.Bits {
		out = append(out, HostBits)
	}
	if f.Bits == 32 {
		out = append(out, Mapped)
	}
	return out
}

// tripleWidths are the outer widths of the three-block cases: the widest
// but one, one in the middle and the narrowest that has room for two more
// bits.
func tripleWidths(f Family) []int {
	ws := f.Widths
	var out []int
	for _, w := range []int{ws[1], ws[len(ws)/2], f.Bits - 2} {
		if w <= f.Bits-2 && (len(out) == 0 || out[len(out)-1] != w) {
			out = append(out, w)
		}
	}
	return out
}

// The scripts. pairScript, for blocks A and B, fences A; unfences B while
// only A is fenced; fences B beside A; fences A again; unfences A (B stays)
// and unfences it again; fences A beside B; unfences B (A stays); unfences
// A. Every ordered pair gets its three checks, and a repeated Fence and
// Unfence are in it. tripleScript does the same for the six ordered pairs
// of three blocks, each with the third block fenced or not.
var (
	pairScript   = script("F0 U1 F1 F0 U0 U0 F0 U1 U0")
	tripleScript = script("F0 U1 U2 F1 F2 U2 U2 U0 U0 F0 U1 F2 U1 F1 U1 U0 U0 F0 U2 U0")
)

// script reads "F0 U1 ..." (Fence or Unfence of operand n).
func script(s string) []Step {
	var out []Step
	for i := 0; i < len(s); i += 3 {
		rpc := fencemodel.Fence
		if s[i] == 'U' {
			rpc = fencemodel.Unfence
		}
		out = append(out, Step{RPC: rpc, Operand: int(s[i+1] - '0')})
	}
	return out
}
