// Package cidr parses, validates and normalises the CIDR blocks carried by
// fence requests, and merges fenced prefixes into the non-overlapping address
// ranges that an nftables interval set accepts.
//
// Parsing is strict and done with net/netip: the value must be exactly
// "address/bits" with no whitespace, no zone and no port.
//
// IPv4-mapped IPv6 prefixes (::ffff:192.0.2.0/120) are unmapped to the IPv4
// block they name (192.0.2.0/24): a client behind such an address connects
// with IPv4 packets, which only an IPv4 fence stops, so keeping the block as
// IPv6 would acknowledge a fence that does not hold (fail open). A shorter
// IPv6 prefix that contains the whole mapped range (::/8, ::/0) is refused:
// it cannot be enforced as the operator most likely means it.
package cidr

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// HostBits says what to do with a prefix that has bits set below its mask.
type HostBits int

const (
	// Normalise clears the host bits: 192.0.2.5/24 becomes 192.0.2.0/24.
	Normalise HostBits = iota
	// Reject refuses a prefix with host bits set.
	Reject
)

// ParseHostBits maps the option string ("" or "normalise", "reject").
func ParseHostBits(s string) (HostBits, error) {
	switch s {
	case "", "normalise", "normalize":
		return Normalise, nil
	case "reject":
		return Reject, nil
	}
	return 0, fmt.Errorf("host bits policy %q: want normalise or reject", s)
}

// ErrHostBits is returned (wrapped) for a prefix with host bits set under Reject.
var ErrHostBits = errors.New("host bits set below the prefix length")

// Parse parses one CIDR block strictly and applies the host-bits policy. The
// returned prefix is masked, so its String is the canonical form.
func Parse(s string, hb HostBits) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, explain(s, err)
	}
	if m := p.Masked(); m != p {
		if hb == Reject {
			return netip.Prefix{}, fmt.Errorf("%w (network is %s)", ErrHostBits, m)
		}
		p = m
	}
	return Unmap(p)
}

// mapped is ::ffff:0:0/96, the IPv4-mapped IPv6 range.
var mapped = netip.MustParsePrefix("::ffff:0:0/96")

// ErrMappedRange is returned (wrapped) for an IPv6 prefix wider than /96
// that contains the whole IPv4-mapped range.
var ErrMappedRange = errors.New("contains the IPv4-mapped range ::ffff:0:0/96; fence IPv4 clients with IPv4 blocks")

// Unmap turns a masked IPv4-mapped IPv6 prefix into the IPv4 prefix it
// names and refuses an IPv6 prefix containing the whole mapped range; any
// other prefix is returned unchanged.
func Unmap(p netip.Prefix) (netip.Prefix, error) {
	a := p.Addr()
	switch {
	case a.Is4In6() && p.Bits() >= 96:
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96), nil
	case a.Is6() && p.Bits() < 96 && p.Contains(mapped.Addr()):
		return netip.Prefix{}, fmt.Errorf("%s %w", p, ErrMappedRange)
	}
	return p, nil
}

// MinBits is the shortest prefix length accepted per family: a fence wider
// than that is refused rather than clamped, because clamping would
// acknowledge less than was asked for.
type MinBits struct{ V4, V6 int }

// DefaultMinBits refuses only 0.0.0.0/0 and ::/0.
var DefaultMinBits = MinBits{V4: 1, V6: 1}

// ErrTooWide is returned (wrapped) for a prefix shorter than the limit.
var ErrTooWide = errors.New("wider than the driver allows")

// ParseMinBits reads "N" (both families) or "V4,V6", e.g. "8,32". An empty
// string is DefaultMinBits.
func ParseMinBits(s string) (MinBits, error) {
	if s == "" {
		return DefaultMinBits, nil
	}
	v4s, v6s, two := strings.Cut(s, ",")
	if !two {
		v6s = v4s
	}
	var m MinBits
	var err4, err6 error
	m.V4, err4 = strconv.Atoi(v4s)
	m.V6, err6 = strconv.Atoi(v6s)
	if err4 != nil || err6 != nil || m.V4 < 0 || m.V4 > 32 || m.V6 < 0 || m.V6 > 128 || (!two && m.V6 > 32) {
		return MinBits{}, fmt.Errorf("max prefix %q: want N (0-32) or V4,V6 lengths such as 8,32", s)
	}
	return m, nil
}

// Check refuses a prefix shorter than the limit of its family.
func (m MinBits) Check(p netip.Prefix) error {
	lim := m.V4
	if p.Addr().Is6() {
		lim = m.V6
	}
	if p.Bits() < lim {
		return fmt.Errorf("/%d is %w (shortest allowed /%d, see --max-prefix)", p.Bits(), ErrTooWide, lim)
	}
	return nil
}

// String is the --max-prefix form.
func (m MinBits) String() string { return fmt.Sprintf("%d,%d", m.V4, m.V6) }

// explain turns a netip parse error into a short reason that names the most
// likely mistake.
func explain(s string, err error) error {
	switch {
	case s == "":
		return errors.New("empty CIDR block")
	case strings.TrimSpace(s) != s:
		return errors.New("leading or trailing whitespace")
	case !strings.Contains(s, "/"):
		return errors.New("bare address without a prefix length")
	case strings.Contains(s, "%"):
		return errors.New("zones are not allowed in a CIDR block")
	}
	return fmt.Errorf("not a CIDR block: %s", reason(err))
}

// maxReason bounds the explanation of a parse error.
const maxReason = 96

// reason is what net/netip says is wrong, without the input it quotes
// (netip.ParsePrefix("<the whole input>"): ...): the input is the client's
// and may be a megabyte, and callers quote a clipped prefix of it
// themselves. FuzzFenceRequest found the unbounded echo.
func reason(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "netip.ParsePrefix("); ok {
		if i := strings.LastIndex(rest, "): "); i >= 0 {
			msg = rest[i+3:]
		}
	}
	if len(msg) > maxReason {
		msg = strings.ToValidUTF8(msg[:maxReason], "") + "..."
	}
	return msg
}

// IsBareOrPadded reports whether s would be a valid address or CIDR block
// once trimmed and/or given a prefix length: the inputs that the
// accept-bare-ip fault stores verbatim.
func IsBareOrPadded(s string) bool {
	t := strings.TrimSpace(s)
	if _, err := netip.ParsePrefix(t); err == nil {
		return t != s
	}
	a, err := netip.ParseAddr(t)
	return err == nil && a.Zone() == ""
}

// Loosen turns a bare or padded value into the CIDR a lenient reader would
// take it for: surrounding white space dropped, a bare address as a host
// prefix (/32 or /128). Other values are returned unchanged.
func Loosen(s string) string {
	t := strings.TrimSpace(s)
	if a, err := netip.ParseAddr(t); err == nil {
		return netip.PrefixFrom(a, a.BitLen()).String()
	}
	return t
}

// Range is an inclusive address range [From, To] within one family.
type Range struct {
	From, To netip.Addr
}

// Union merges prefixes into sorted, non-overlapping, non-adjacent ranges,
// IPv4 first. Overlapping or nested prefixes (a /24 and a /25 inside it)
// become one range; invalid prefixes are ignored.
func Union(ps []netip.Prefix) []Range {
	rs := make([]Range, 0, len(ps))
	for _, p := range ps {
		if !p.IsValid() {
			continue
		}
		p = p.Masked()
		rs = append(rs, Range{From: p.Addr(), To: last(p)})
	}
	return Merge(rs)
}

// Merge sorts ranges and merges those that overlap or touch (within one
// family), IPv4 first.
func Merge(rs []Range) []Range {
	slices.SortFunc(rs, func(a, b Range) int { return a.From.Compare(b.From) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 {
			prev := &out[n-1]
			if prev.To.Is4() == r.From.Is4() && (r.From.Compare(prev.To) <= 0 || prev.To.Next() == r.From) {
				if r.To.Compare(prev.To) > 0 {
					prev.To = r.To
				}
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// last returns the highest address inside a masked prefix.
func last(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	bits := p.Bits()
	for i := range b {
		for j := 7; j >= 0; j-- {
			if i*8+(7-j) >= bits {
				b[i] |= 1 << j
			}
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Covers reports whether a range of merged (sorted, non-overlapping, as
// returned by Merge and Union) covers addr, in O(log n).
func Covers(merged []Range, addr netip.Addr) bool {
	i, _ := slices.BinarySearchFunc(merged, addr, func(r Range, a netip.Addr) int { return r.From.Compare(a) })
	// merged[i-1] is the last range starting at or before addr.
	if i < len(merged) && merged[i].From == addr {
		return true
	}
	return i > 0 && addr.Compare(merged[i-1].To) <= 0
}

// Contains reports whether any range covers addr.
func Contains(rs []Range, addr netip.Addr) bool {
	for _, r := range rs {
		if r.From.Is4() == addr.Is4() && r.From.Compare(addr) <= 0 && addr.Compare(r.To) <= 0 {
			return true
		}
	}
	return false
}
