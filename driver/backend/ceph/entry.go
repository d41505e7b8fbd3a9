package ceph

import (
	"fmt"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
)

// entry is one blocklist entry this backend can own: a whole address
// (`osd blocklist add <ip>`, Ceph's ip:0/0) or a range (`osd blocklist range
// add <cidr>`). Instance entries (ip:port/nonce, from RBD lock breaking
// or a tool fencing one client) are never this backend's.
type entry struct {
	Range bool
	P     netip.Prefix // a /32 or /128 for an address entry
}

// String is the entry's key in the record: "10.1.2.3" or "range 10.2.0.0/16".
func (e entry) String() string {
	if e.Range {
		return "range " + e.P.String()
	}
	return e.P.Addr().String()
}

func parseEntryKey(s string) (entry, error) {
	if r, ok := strings.CutPrefix(s, "range "); ok {
		p, err := netip.ParsePrefix(r)
		if err != nil || p != p.Masked() {
			return entry{}, fmt.Errorf("record entry %q: not a canonical prefix", s)
		}
		return entry{Range: true, P: p}, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return entry{}, fmt.Errorf("record entry %q: not an address", s)
	}
	return entry{P: netip.PrefixFrom(a, a.BitLen())}, nil
}

// arg is the addr argument of the mon command.
func (e entry) arg() string {
	if e.Range {
		return e.P.String()
	}
	return e.P.Addr().String()
}

// hostBits reports whether p names one address.
func hostBits(p netip.Prefix) bool { return p.Bits() == p.Addr().BitLen() }

// entriesOf returns the entries that enforce p: one range entry when
// ranges are on (a host prefix too: a /32 range never collides with the
// address entries `ceph osd blocklist add <ip>` makes by hand); else one
// address entry per address of p (the caller bounds the count with
// entryCount first).
func entriesOf(p netip.Prefix, ranges bool, out []entry) []entry {
	p = p.Masked()
	if ranges {
		return append(out, entry{Range: true, P: p})
	}
	n := p.Addr().BitLen()
	for a := p.Addr(); a.IsValid() && p.Contains(a); a = a.Next() {
		out = append(out, entry{P: netip.PrefixFrom(a, n)})
	}
	return out
}

// entryCount is how many entries p needs, saturated at limit+1.
func entryCount(p netip.Prefix, ranges bool, limit int) int {
	if ranges || hostBits(p) {
		return 1
	}
	free := p.Addr().BitLen() - p.Bits()
	if free >= 62 {
		return limit + 1
	}
	return int(min(int64(1)<<free, int64(limit)+1))
}

// blocked is one entry as the OSD map shows it.
type blocked struct {
	e     entry
	until string
}

// parseCephAddr reads an entry as Ceph spells it in `osd dump`:
// "10.1.2.3:0/0", "[2001:db8::5]:0/0", "cidr:10.2.0.0:0/16",
// "cidr:[2001:db8::]:0/32", optionally with a "v1:", "v2:" or "any:"
// type. ok is false for an instance entry (a port or nonce other than 0)
// or anything else this backend never makes.
func parseCephAddr(s string) (entry, bool) {
	isRange := false
	if r, ok := strings.CutPrefix(s, "cidr:"); ok {
		s, isRange = r, true
	}
	for _, t := range []string{"v1:", "v2:", "any:"} {
		s = strings.TrimPrefix(s, t)
	}
	hostPort, nonce, ok := strings.Cut(s, "/")
	if !ok {
		return entry{}, false
	}
	ap, err := netip.ParseAddrPort(hostPort)
	if err != nil {
		return entry{}, false
	}
	a := ap.Addr()
	if a.Is4In6() {
		a = a.Unmap()
	}
	if isRange {
		// A range keeps its prefix length where an address keeps its nonce.
		bits, err := strconv.Atoi(nonce)
		if err != nil || ap.Port() != 0 {
			return entry{}, false
		}
		p, err := a.Prefix(bits)
		if err != nil || p.Addr() != a {
			return entry{}, false
		}
		return entry{Range: true, P: p}, true
	}
	if ap.Port() != 0 || nonce != "0" {
		return entry{}, false
	}
	return entry{P: netip.PrefixFrom(a, a.BitLen())}, true
}

// addressCount is the number of addresses in p, for messages.
func addressCount(p netip.Prefix) string {
	return new(big.Int).Lsh(big.NewInt(1), uint(p.Addr().BitLen()-p.Bits())).String()
}
