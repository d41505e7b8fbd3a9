package hostmodel

import (
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Node is this machine as name resolution sees it: its names (short and
// fully qualified) and its IP addresses.
type Node struct {
	Names, Addresses []string
}

// IsLocalHost reports whether Windows resolves a UNC server name to this
// machine. The name is taken as a resolver takes it (IDNA's nameprep:
// compatibility forms to their plain letters, NFKC, then lower case; one
// final dot dropped): localhost and the names below it, this machine's
// names (and the first label of each), "." and "?"; or it is an address,
// IPv4 in any form inet_addr reads (each of up to four parts decimal, 0
// octal or 0x hex, the last filling the bytes left), IPv6 written as
// ipv6-literal.net: this machine's, loopback or unspecified.
func (n Node) IsLocalHost(server string) bool {
	s := resolverForm(server)
	switch {
	case s == "localhost", strings.HasSuffix(s, ".localhost"), s == ".", s == "?", s == "":
		return true
	}
	if a, ok := resolveAddress(s); ok {
		a = a.Unmap()
		if a.IsLoopback() || a.IsUnspecified() {
			return true
		}
		for _, mine := range n.Addresses {
			if m, err := netip.ParseAddr(mine); err == nil && m.Unmap() == a {
				return true
			}
		}
		return false
	}
	for _, name := range n.Names {
		name = resolverForm(name)
		if s == name || s == strings.SplitN(name, ".", 2)[0] {
			return true
		}
	}
	return false
}

// resolverForm is a name as a resolver compares it.
func resolverForm(s string) string {
	s = strings.ToLower(norm.NFKC.String(strings.ReplaceAll(s, "\u3002", ".")))
	if len(s) > 1 {
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// resolveAddress reads an address the way the resolver does before it
// looks a name up.
func resolveAddress(s string) (netip.Addr, bool) {
	if lit, ok := strings.CutSuffix(s, ".ipv6-literal.net"); ok {
		lit, _, _ = strings.Cut(lit, "s") // the zone
		a, err := netip.ParseAddr(strings.ReplaceAll(lit, "-", ":"))
		return a, err == nil
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		// inet_addr knows decimal, 0-prefixed octal and 0x hex only:
		// strconv's base 0 would take 0b, 0o and '_' too
		if p == "" || strings.Contains(p, "_") || len(p) > 1 && p[0] == '0' && strings.ContainsAny(p[1:2], "oObB") {
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		room := uint(8)
		if i == len(parts)-1 {
			room = uint(8 * (4 - i))
		}
		if n>>room != 0 {
			return netip.Addr{}, false
		}
		v = v<<room | n
	}
	// a shorter form's last part filled the bytes left
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
