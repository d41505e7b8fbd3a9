package sanity

import (
	"net/netip"
	"strings"
	"testing"
)

// TestCorpusIsMalformedAndSafe: every string of CIDR-001's corpus is
// neither a CIDR block nor an address, says why, and every block a lenient
// parser reads it as lies inside the region it was generated from (so a
// broken driver fences a documentation block, never a real address),
// unless the entry is marked to be sent only with --destructive.
func TestCorpusIsMalformedAndSafe(t *testing.T) {
	for _, region := range []corpusRegion{
		{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8:fe00::/48")},
		{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("3fff:f00::/48")},
	} {
		for _, m := range corpusFor(region.v4, region.v6) {
			if _, err := netip.ParsePrefix(m.cidr); err == nil {
				t.Errorf("%q (%s) is a valid CIDR block", m.cidr, m.class)
			}
			if a, err := netip.ParseAddr(strings.TrimSpace(m.cidr)); err == nil && a.Zone() == "" {
				t.Errorf("%q (%s) is a bare address (CIDR-003's, not CIDR-001's)", m.cidr, m.class)
			}
			if m.class == "" || m.why == "" {
				t.Errorf("%q has no class or reason", m.cidr)
			}
			outside := false
			for _, r := range m.readAs {
				p, err := netip.ParsePrefix(r)
				if err != nil || p != p.Masked() {
					t.Errorf("%q: reading %q is not a canonical block", m.cidr, r)
					continue
				}
				outside = outside || !region.holds(p)
			}
			if outside != m.outside {
				t.Errorf("%q: a reading outside the region %s and %s is %v, but the entry says outside=%v", m.cidr, region.v4, region.v6, outside, m.outside)
			}
		}
	}
}

// TestCorpusCoversEveryClass: the classes of malformed input the suite is
// asked to send are all in the corpus.
func TestCorpusCoversEveryClass(t *testing.T) {
	classes := map[string]bool{}
	for _, m := range corpusFor(netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8:fe00::/48")) {
		classes[m.class] = true
	}
	for _, want := range []string{"leading-zero octet", "octal octets", "hexadecimal octets", "zoned IPv6", "signed prefix length",
		"zero-padded prefix length", "three-octet address", "three-part address", "non-ASCII digits", "embedded NUL",
		"IPv6 prefix over 128", "IPv4 prefix over 32", "octet over 255", "look-alike separators", "netmask"} {
		if !classes[want] {
			t.Errorf("the corpus has no %q entry", want)
		}
	}
}
