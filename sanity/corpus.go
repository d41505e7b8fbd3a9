package sanity

import (
	"fmt"
	"net/netip"
	"strings"
)

// The malformed-input corpus of CIDR-001: strings that are not CIDR blocks,
// each with the reason and the blocks a lenient parser reads it as. Every
// one must be rejected with INVALID_ARGUMENT and never listed.
//
// The corpus is generated from one IPv4 /24 and one IPv6 /48 of the
// documentation ranges (the region), chosen so that every reading of every
// string a lenient parser could make (inet_aton's octal, hexadecimal and
// short forms, integer wrap-around of a prefix length, a C string cut at a
// NUL, a zone dropped, digits of another script read as digits) falls
// inside the region: a driver that misreads one fences a documentation
// block, never a real address. The few strings with a reading outside the
// region are sent only with --destructive and say so.

// malformed is one entry of the corpus.
type malformed struct {
	class string // the class of defect, e.g. "leading-zero octet"
	why   string // why it is not a CIDR block, and how a lenient parser reads it
	cidr  string
	// readAs are the blocks lenient parsers read it as.
	readAs []string
	// outside says a reading falls outside the region (and the
	// documentation ranges): the string is sent only with --destructive.
	outside bool
}

// corpusFor generates the corpus for an IPv4 /24 and an IPv6 /48.
func corpusFor(v4 netip.Prefix, v6 netip.Prefix) []malformed {
	o := v4.Addr().As4()
	a, b, c := int(o[0]), int(o[1]), int(o[2])
	ip := func(d int) string { return fmt.Sprintf("%d.%d.%d.%d", a, b, c, d) }
	host := func(d int) string { return ip(d) + "/32" }
	net24 := ip(0) + "/24"
	g := v6.Addr().As16()
	p6 := fmt.Sprintf("%x:%x:%x", uint16(g[0])<<8|uint16(g[1]), uint16(g[2])<<8|uint16(g[3]), uint16(g[4])<<8|uint16(g[5]))
	h6 := func(suffix string) string { return p6 + "::" + suffix }
	host6 := h6("1") + "/128"
	net64 := h6("") + "/64"
	v6Octal := netip.PrefixFrom(v6.Addr(), 52).String()
	digits := func(s string, zero rune) string {
		return strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return zero + (r - '0')
			}
			return r
		}, s)
	}
	return []malformed{
		{"empty", "no block at all", "", nil, false},
		{"garbage", "not an address", "not-a-cidr", nil, false},
		{"hostname", "a name, not an address", "storage.example.com/32", nil, false},
		{"octet over 255", "an octet of 300: a parser that keeps the low byte reads 44", ip(300) + "/32", []string{host(44)}, false},
		{"five octets", "five octets: a parser that stops after four reads the first four", ip(1) + ".1/32", []string{host(1)}, false},
		{"leading-zero octet", "a leading zero: inet_aton reads 010 as octal 8, others as decimal 10", ip(0) + "10/32", []string{host(8), host(10)}, false},
		{"octal octets", "every octet in octal with a leading zero, as inet_aton accepts", fmt.Sprintf("0%o.0%o.0%o.010/32", a, b, c), []string{host(8)}, false},
		{"leading-zero octet", "a leading zero on a digit that is not octal (09)", ip(0) + "9/32", []string{host(9)}, false},
		{"hexadecimal octets", "octets in hexadecimal (0x..), as inet_aton accepts", fmt.Sprintf("0x%x.0x%x.0x%x.0x1/32", a, b, c), []string{host(1)}, false},
		{"hexadecimal address", "the whole address as one hexadecimal number, as inet_aton accepts", fmt.Sprintf("0x%02x%02x%02x01/32", a, b, c), []string{host(1)}, false},
		{"decimal address", "the whole address as one decimal number, as inet_aton accepts", fmt.Sprintf("%d/32", a<<24|b<<16|c<<8|1), []string{host(1)}, false},
		{"three-part address", "three parts, the last 16 bits wide, as inet_aton accepts", fmt.Sprintf("%d.%d.%d/32", a, b, c*256+1), []string{host(1)}, false},
		{"two-part address", "two parts, the last 24 bits wide, as inet_aton accepts", fmt.Sprintf("%d.%d/32", a, b*65536+c*256+1), []string{host(1)}, false},
		{"three-octet address", "three octets: some tools pad on the right, inet_aton reads the last as 16 bits (a block outside the documentation ranges)", fmt.Sprintf("%d.%d.%d/24", a, b, c), []string{net24, netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(a), byte(b), 0, byte(c)}), 24).Masked().String()}, true},
		{"signed prefix length", "a prefix length with a plus sign", ip(0) + "/+24", []string{net24}, false},
		{"signed prefix length", "a negative prefix length: a parser that drops the sign reads /24", ip(0) + "/-24", []string{net24}, false},
		{"zero-padded prefix length", "a prefix length with a leading zero: decimal 32, or octal 26", ip(1) + "/032", []string{host(1), ip(0) + "/26"}, false},
		{"zero-padded prefix length", "a prefix length padded with zeros", ip(0) + "/0024", []string{net24}, false},
		{"hexadecimal prefix length", "a prefix length in hexadecimal", ip(0) + "/0x18", []string{net24}, false},
		{"netmask", "a dotted netmask instead of a prefix length", ip(0) + "/255.255.255.0", []string{net24}, false},
		{"IPv4 prefix over 32", "an IPv4 prefix length of 33: a parser that clamps reads /32", ip(1) + "/33", []string{host(1)}, false},
		{"IPv4 prefix over 32", "an IPv4 prefix length of 288: kept in a byte it wraps to /32", ip(1) + "/288", []string{host(1)}, false},
		{"IPv4 prefix over 32", "an IPv4 prefix length of 2^32+32: kept in 32 bits it wraps to /32", ip(1) + "/4294967328", []string{host(1)}, false},
		{"IPv4 prefix over 32", "an IPv4 prefix length of 2^64+32: kept in 64 bits it wraps to /32", ip(1) + "/18446744073709551648", []string{host(1)}, false},
		{"space inside", "a space after the slash", ip(0) + "/ 24", []string{net24}, false},
		{"space inside", "a space before the slash", ip(0) + " /24", []string{net24}, false},
		{"two prefix lengths", "two prefix lengths", ip(0) + "/24/24", []string{net24}, false},
		{"trailing slash", "a slash after the prefix length", ip(0) + "/24/", []string{net24}, false},
		{"missing prefix length", "a slash and no prefix length: a parser may read a host block", ip(0) + "/", []string{host(0)}, false},
		{"trailing dot", "a dot after the last octet", ip(1) + "./32", []string{host(1)}, false},
		{"host and port", "an address and a port, not a block", ip(7) + ":8080", []string{host(7)}, false},
		{"non-ASCII digits", "fullwidth digits, which some parsers read as digits", digits(host(1), '０'), []string{host(1)}, false},
		{"non-ASCII digits", "Arabic-Indic digits, which some parsers read as digits", digits(host(1), '٠'), []string{host(1)}, false},
		{"non-ASCII digits", "Devanagari digits in the prefix length", ip(1) + "/" + digits("32", '०'), []string{host(1)}, false},
		{"look-alike separators", "fullwidth full stops instead of dots", strings.ReplaceAll(host(1), ".", "．"), []string{host(1)}, false},
		{"look-alike separators", "a division slash (U+2215) instead of a slash", ip(0) + "∕24", []string{net24}, false},
		{"embedded NUL", "a NUL after the block: C code stops there", host(1) + "\x00junk", []string{host(1)}, false},
		{"embedded NUL", "a NUL before the prefix length: C code reads a bare address", ip(1) + "\x00/24", []string{host(1)}, false},
		{"embedded NUL", "a NUL first: C code reads an empty string", "\x00" + host(1), nil, false},
		{"IPv4-mapped octet over 255", "an IPv4-mapped address with an octet of 300", "::ffff:" + ip(300) + "/128", []string{host(44)}, false},
		{"zoned IPv6", "a zone (%eth0) on an address: a parser that drops it reads the address", h6("1") + "%eth0/128", []string{host6}, false},
		{"zoned IPv6", "a numeric zone on a network", h6("") + "%1/64", []string{net64}, false},
		{"zoned IPv6", "a zoned link-local address, as the issue's example (its reading is outside the documentation ranges)", "fe80::1%eth0/128", []string{"fe80::1/128"}, true},
		{"IPv6 prefix over 128", "an IPv6 prefix length of 129: a parser that clamps reads /128", h6("1") + "/129", []string{host6}, false},
		{"IPv6 prefix over 128", "an IPv6 prefix length of 384: kept in a byte it wraps to /128", h6("1") + "/384", []string{host6}, false},
		{"IPv6 prefix over 128", "an IPv6 prefix length of 2^32+128: kept in 32 bits it wraps to /128", h6("1") + "/4294967424", []string{host6}, false},
		{"zero-padded prefix length", "an IPv6 prefix length with a leading zero: decimal 64, or octal 52", h6("") + "/064", []string{net64, v6Octal}, false},
		{"signed prefix length", "an IPv6 prefix length with a plus sign", h6("") + "/+64", []string{net64}, false},
		{"bracketed IPv6", "brackets, as in a URL, around the address", "[" + h6("") + "]/64", []string{net64}, false},
		{"triple colon", "three colons", p6 + ":::1/128", []string{host6}, false},
		{"two double colons", "two :: in one address", h6("1::1") + "/128", nil, false},
		{"nine groups", "nine groups", p6 + ":0:0:0:0:0:1/128", nil, false},
		{"long group", "a group of five hex digits: a parser that keeps four reads 1234 or 2345", h6("12345") + "/128", []string{h6("1234") + "/128", h6("2345") + "/128"}, false},
		{"not hexadecimal", "a group that is not hexadecimal", h6("g") + "/128", nil, false},
		{"IPv4 tail over 255", "an IPv6 address ending in an IPv4 tail with an octet of 300", h6(ip(300)) + "/128", nil, false},
		{"embedded NUL", "a NUL after an IPv6 block: C code stops there", host6 + "\x00", []string{host6}, false},
	}
}

// corpusRegion are the blocks the corpus is generated from.
type corpusRegion struct{ v4, v6 netip.Prefix }

// holds reports whether a block lies inside the region.
func (r corpusRegion) holds(p netip.Prefix) bool {
	return p.IsValid() && ((r.v4.Bits() <= p.Bits() && r.v4.Contains(p.Addr())) || (r.v6.Bits() <= p.Bits() && r.v6.Contains(p.Addr())))
}

// touches reports whether a block overlaps the region.
func (r corpusRegion) touches(p netip.Prefix) bool { return r.v4.Overlaps(p) || r.v6.Overlaps(p) }
