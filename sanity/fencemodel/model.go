// Package fencemodel is the reference model of a fence set: what a
// conforming FenceController lists after any sequence of Fence and Unfence
// requests, given the choices the spec leaves to the driver.
//
// The model's rules, each one line of the spec or of its profile:
//
//   - A block is one fence however it is spelled: compressed, expanded,
//     upper-case or uncompressed IPv6 name the same block, and fencing it
//     twice, in any spelling, lists it once.
//   - A CIDR with host bits set (192.0.2.5/24) is normalised to its block or
//     rejected, as the profile says (HostBits).
//   - An IPv4-mapped IPv6 block (::ffff:192.0.2.0/120) is the IPv4 block it
//     names (192.0.2.0/24), or is rejected; it is never an IPv6 fence, which
//     no IPv4 packet matches.
//   - Overlapping blocks are independent fences: fencing one never changes
//     another, and unfencing one lifts exactly that block (nothing inside
//     it, nothing around it, nothing beside it).
//   - A request is applied whole or not at all: one CIDR the driver may
//     reject makes INVALID_ARGUMENT a valid answer, and then nothing changed.
//
// The model judges each answer before it applies it (Apply), and compares a
// reading of the fences with what it holds (Diff).
package fencemodel

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// HostBits is the profile's choice for a CIDR with host bits set.
type HostBits int

// The host-bit choices a profile allows.
const (
	Normalise HostBits = iota // accepted as its block
	Reject                    // Fence rejects it (INVALID_ARGUMENT)
	Either                    // either, request by request
)

// RPC is a request that changes the fence set.
type RPC string

// The two RPCs the model applies.
const (
	Fence   RPC = "FenceClusterNetwork"
	Unfence RPC = "UnfenceClusterNetwork"
)

// Kind says how a CIDR spells its block.
type Kind string

// The spellings the model knows.
const (
	Canonical Kind = "canonical"        // the block's own spelling (netip's)
	Respelled Kind = "another spelling" // the same block without host bits: expanded, upper-case, uncompressed IPv6
	HostBitsK Kind = "host bits set"    // an address inside the block with the block's length
	Mapped    Kind = "IPv4-mapped IPv6" // ::ffff:a.b.c.d/(96+n), the IPv4 block a.b.c.d/n
	Invalid   Kind = "not a CIDR block"
)

// Reading is what one CIDR of a request names.
type Reading struct {
	Raw   string
	Block netip.Prefix // the block it fences (invalid for Invalid)
	Kinds []Kind       // how it spells it; Canonical alone, or the others that apply
}

// Read reads a CIDR the strict way the spec's CIDR block is: an address and
// a prefix length, nothing else (no spaces, no zone).
func Read(raw string) Reading {
	r := Reading{Raw: raw}
	p, err := netip.ParsePrefix(raw)
	if err != nil || p.Addr().Zone() != "" {
		r.Kinds = []Kind{Invalid}
		return r
	}
	m := p.Masked()
	if m != p {
		r.Kinds = append(r.Kinds, HostBitsK)
	}
	if m.Addr().Is4In6() && m.Bits() >= 96 {
		m = netip.PrefixFrom(m.Addr().Unmap(), m.Bits()-96)
		r.Kinds = append(r.Kinds, Mapped)
	}
	r.Block = m
	switch {
	case len(r.Kinds) > 0:
	case m.String() == raw:
		r.Kinds = []Kind{Canonical}
	default:
		r.Kinds = []Kind{Respelled}
	}
	return r
}

// Is reports whether the reading has the kind.
func (r Reading) Is(k Kind) bool { return slices.Contains(r.Kinds, k) }

// answers are the answers a conforming driver may give to one CIDR of a
// request: ok (applied) and invalid (INVALID_ARGUMENT).
func (m *Model) answers(rpc RPC, r Reading) (ok, invalid bool) {
	ok, invalid = true, false
	if r.Is(Invalid) {
		return false, true
	}
	if r.Is(HostBitsK) {
		switch {
		case m.HostBits == Reject && rpc == Fence:
			ok, invalid = false, true
		case m.HostBits != Normalise:
			invalid = true
		}
	}
	if r.Is(Mapped) {
		invalid = true
	}
	return ok, invalid
}

// Model is the fence set a conforming driver holds.
type Model struct {
	HostBits HostBits
	set      map[netip.Prefix]bool
}

// New is an empty model under a host-bits choice.
func New(hb HostBits) *Model { return &Model{HostBits: hb, set: map[netip.Prefix]bool{}} }

// Answer is a driver's answer to one request, by gRPC code name ("OK",
// "InvalidArgument", ...).
type Answer string

// Expect says what a conforming driver answers to the request, in the
// spec's words: "OK", "INVALID_ARGUMENT" or "OK or INVALID_ARGUMENT".
func (m *Model) Expect(rpc RPC, cidrs []string) string {
	ok, invalid := m.allowed(rpc, cidrs)
	switch {
	case ok && invalid:
		return "OK or INVALID_ARGUMENT"
	case ok:
		return "OK"
	}
	return "INVALID_ARGUMENT"
}

func (m *Model) allowed(rpc RPC, cidrs []string) (ok, invalid bool) {
	ok = len(cidrs) > 0
	invalid = len(cidrs) == 0
	for _, c := range cidrs {
		o, i := m.answers(rpc, Read(c))
		ok = ok && o
		invalid = invalid || i
	}
	return ok, invalid
}

// Apply judges the driver's answer to a request and, when it is one a
// conforming driver may give, applies it: OK changes the set, any other
// allowed answer leaves it. It returns why the answer is wrong, or nil.
func (m *Model) Apply(rpc RPC, cidrs []string, got Answer) error {
	ok, invalid := m.allowed(rpc, cidrs)
	switch {
	case got == "OK" && ok:
		for _, c := range cidrs {
			b := Read(c).Block
			if rpc == Fence {
				m.set[b] = true
			} else {
				delete(m.set, b)
			}
		}
		return nil
	case got == "InvalidArgument" && invalid:
		return nil
	}
	return fmt.Errorf("expected %s, got %s", m.Expect(rpc, cidrs), specName(string(got)))
}

// Holds reports whether the block is in the set.
func (m *Model) Holds(b netip.Prefix) bool { return m.set[b] }

// Blocks are the blocks of the set, sorted.
func (m *Model) Blocks() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(m.set))
	for b := range m.set {
		out = append(out, b)
	}
	slices.SortFunc(out, netip.Prefix.Compare)
	return out
}

// Diff is how a reading of the fences differs from the model.
type Diff struct {
	Missing []netip.Prefix // held by the model, not listed
	Extra   []string       // listed, not held by the model (as the driver spelled them)
	Twice   []string       // listed more than once (in any spelling)
}

// Empty reports whether the reading equals the model.
func (d Diff) Empty() bool { return len(d.Missing)+len(d.Extra)+len(d.Twice) == 0 }

// String says the difference in one sentence.
func (d Diff) String() string {
	var parts []string
	if len(d.Missing) > 0 {
		s := make([]string, len(d.Missing))
		for i, p := range d.Missing {
			s[i] = p.String()
		}
		parts = append(parts, "not listed: "+strings.Join(s, ", "))
	}
	if len(d.Extra) > 0 {
		parts = append(parts, "listed though not fenced: "+quoteAll(d.Extra))
	}
	if len(d.Twice) > 0 {
		parts = append(parts, "listed more than once: "+quoteAll(d.Twice))
	}
	return strings.Join(parts, "; ")
}

// Diff compares the entries of one List answer with the model, for the
// blocks within says are the model's to judge (entries that name no block
// are LIST-002's). A listed entry is read as the block it names, except that
// an IPv4-mapped IPv6 entry is an IPv6 fence, not the IPv4 block it maps:
// that is what a driver that keeps it as IPv6 enforces.
func (m *Model) Diff(listed []string, within func(netip.Prefix) bool) Diff {
	return m.DiffListing(ReadListing(listed), within)
}

// Listing is one List answer read once, so that the models of many cases
// judge one reading without parsing it again each (FENCE-010 reads the
// fences once per step for every case of a round).
type Listing []listedBlock

type listedBlock struct {
	raw    string
	block  netip.Prefix // as listed, host bits cleared
	region netip.Prefix // the block it fences (an IPv4-mapped one unmapped)
}

// ReadListing reads the entries of one List answer; entries that name no block
// are left out (they are LIST-002's).
func ReadListing(listed []string) Listing {
	out := make(Listing, 0, len(listed))
	for _, c := range listed {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			continue
		}
		b := p.Masked()
		region := b
		if b.Addr().Is4In6() && b.Bits() >= 96 {
			region = netip.PrefixFrom(b.Addr().Unmap(), b.Bits()-96)
		}
		out = append(out, listedBlock{raw: c, block: b, region: region})
	}
	return out
}

// DiffListing is Diff of a listing already read.
func (m *Model) DiffListing(l Listing, within func(netip.Prefix) bool) Diff {
	var d Diff
	seen := map[netip.Prefix]string{}
	for _, e := range l {
		b, c := e.block, e.raw
		if !within(e.region) {
			continue
		}
		if first, dup := seen[b]; dup {
			if !slices.Contains(d.Twice, first) {
				d.Twice = append(d.Twice, first)
			}
			continue
		}
		seen[b] = c
		if !m.set[b] {
			d.Extra = append(d.Extra, c)
		}
	}
	for _, b := range m.Blocks() {
		if _, ok := seen[b]; !ok && within(b) {
			d.Missing = append(d.Missing, b)
		}
	}
	return d
}

func quoteAll(xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(out, ", ")
}

// specName spells a gRPC code's Go name as the spec does:
// InvalidArgument is INVALID_ARGUMENT.
func specName(goName string) string {
	var b strings.Builder
	var prev rune
	for _, r := range goName {
		if r >= 'A' && r <= 'Z' && prev >= 'a' && prev <= 'z' {
			b.WriteByte('_')
		}
		b.WriteString(strings.ToUpper(string(r)))
		prev = r
	}
	return b.String()
}
