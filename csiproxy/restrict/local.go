package restrict

import (
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// How a UNC server name reaches this machine (SMB-005). Windows does not
// compare the text: it resolves it, so every spelling that resolves here
// is this machine. A name is mapped the way a resolver maps it for lookup
// (UTS #46: case folded, full-width and other compatibility forms to their
// plain letters, the ideographic full stop to a dot); an address in any
// form inet_addr reads (127.1, 0x7f000001, 2130706433, 0177.0.0.1) is the
// address; an IPv6 address is written as its ipv6-literal.net name.

// lookupNames maps names as a resolver does; a name that does not pass
// its checks is still mapped (what it maps to is what it would resolve).
var lookupNames = idna.New(idna.MapForLookup(), idna.Transitional(true))

// lookupKey is a server name as a resolver looks it up: mapped, without
// a final dot.
func lookupKey(s string) string {
	m, _ := lookupNames.ToUnicode(s)
	if m == "" {
		m = strings.ToLower(s)
	}
	return strings.TrimSuffix(m, ".")
}

// ServerAddress is the address a UNC server name spells, if it spells one:
// an IPv4 address in any inet_addr form, or an IPv6 address as its
// ipv6-literal.net name (zone after 's').
func ServerAddress(s string) (netip.Addr, bool) {
	k := lookupKey(s)
	if lit, ok := strings.CutSuffix(k, ".ipv6-literal.net"); ok {
		addr, _, _ := strings.Cut(lit, "s")
		a, err := netip.ParseAddr(strings.ReplaceAll(addr, "-", ":"))
		return a, err == nil && a.Is6()
	}
	return inetAddr(k)
}

// inetAddr parses an IPv4 address the way inet_addr does: one to four
// parts separated by dots, each decimal, octal (a leading 0) or hex (0x);
// every part but the last is one byte, the last fills the bytes left.
func inetAddr(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v [4]uint64
	for i, p := range parts {
		n, ok := inetPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		v[i] = n
	}
	last := len(parts) - 1
	var out uint64
	for i := 0; i < last; i++ {
		if v[i] > 0xFF {
			return netip.Addr{}, false
		}
		out |= v[i] << (8 * (3 - i))
	}
	if v[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	out |= v[last]
	return netip.AddrFrom4([4]byte{byte(out >> 24), byte(out >> 16), byte(out >> 8), byte(out)}), true
}

// inetPart reads one part of an inet_addr address.
func inetPart(p string) (uint64, bool) {
	base := uint64(10)
	switch {
	case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" || len(p) > 12 {
		return 0, false
	}
	var n uint64
	for _, c := range p {
		d := uint64(36)
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
	}
	return n, n <= 0xFFFFFFFF
}

// localServer reports whether an SMB server name reaches this machine:
// localhost or a name below it, one of its names (or the first label of
// one), one of its addresses, a loopback or unspecified address, in any
// spelling a resolver equates with them.
func (v *Validator) localServer(s string) bool {
	k := lookupKey(s)
	if k == "localhost" || strings.HasSuffix(k, ".localhost") || k == "" {
		return true
	}
	if a, ok := ServerAddress(s); ok {
		a = a.Unmap()
		if a.IsLoopback() || a.IsUnspecified() {
			return true
		}
		for _, l := range v.LocalAddresses {
			if la, err := netip.ParseAddr(l); err == nil && la.Unmap() == a {
				return true
			}
		}
		return false
	}
	for _, n := range v.LocalNames {
		n = lookupKey(n)
		short, _, _ := strings.Cut(n, ".")
		if k == n || k == short {
			return true
		}
	}
	return false
}
