package relations

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/sanity/fencemodel"
)

// regionsFor places a case in the first aligned blocks of a family's test
// space: disjoint regions, one after another.
func regionsFor(c Case) []netip.Prefix {
	base := netip.MustParsePrefix("192.0.0.0/16")
	if c.Family.Bits == 128 {
		base = netip.MustParsePrefix("3fff::/20")
	}
	var out []netip.Prefix
	for i, r := range c.Regions {
		out = append(out, Nth(base, r, 2*i))
	}
	return out
}

// TestEveryRelationIsWhatItSays places every case and checks that its
// blocks relate as its relation says, and that every spelling names its
// block.
func TestEveryRelationIsWhatItSays(t *testing.T) {
	for _, f := range []Family{IPv4, IPv6} {
		seen := map[Relation]map[int]bool{}
		for _, c := range Cases(f) {
			blocks, cidrs := c.Place(regionsFor(c))
			a, b := blocks[0], blocks[1]
			for i, raw := range cidrs {
				if r := fencemodel.Read(raw); r.Block != blocks[i] {
					t.Errorf("%s: %q reads as %v, want %v", c.Name, raw, r.Block, blocks[i])
				}
			}
			ok := true
			switch c.Relation {
			case Equal:
				ok = a == b && cidrs[0] == cidrs[1]
			case Respelled:
				ok = a == b && cidrs[0] != cidrs[1]
			case Nested:
				ok = a.Bits() < b.Bits() && a.Contains(b.Addr())
			case Overlapping:
				ok = b.Bits() < a.Bits() && b.Contains(a.Addr()) && strings.HasPrefix(cidrs[1], a.Addr().String()+"/")
			case Siblings, Across:
				parent := netip.PrefixFrom(a.Addr(), a.Bits()-1).Masked()
				ok = a.Bits() == b.Bits() && !a.Overlaps(b) && lastAddr(a).Next() == b.Addr() && parent.Contains(b.Addr()) == (c.Relation == Siblings)
			case Disjoint:
				ok = a.Bits() == b.Bits() && !a.Overlaps(b) && lastAddr(a).Next() != b.Addr() && lastAddr(b).Next() != a.Addr()
			case Chain:
				ok = blocks[0].Contains(blocks[1].Addr()) && blocks[1].Contains(blocks[2].Addr()) && blocks[1].Bits() > a.Bits() && blocks[2].Bits() > blocks[1].Bits()
			case Family3:
				ok = a.Contains(blocks[1].Addr()) && a.Contains(blocks[2].Addr()) && !blocks[1].Overlaps(blocks[2])
			}
			if !ok {
				t.Errorf("%s: blocks %v (%v) are not %s", c.Name, blocks, cidrs, c.Relation)
			}
			if seen[c.Relation] == nil {
				seen[c.Relation] = map[int]bool{}
			}
			seen[c.Relation][a.Bits()] = true
		}
		for _, w := range f.Widths {
			want := []Relation{Equal, Respelled}
			if w < f.Bits {
				want = append(want, Nested)
			}
			if w-2 >= f.Widest {
				want = append(want, Disjoint)
			}
			for _, rel := range want {
				if !seen[rel][w] {
					t.Errorf("%s: no %s case at /%d", f.Name, rel, w)
				}
			}
		}
	}
}

// TestScriptsCoverEveryOrderedPair runs each script on distinct blocks and
// checks that every ordered pair (X, Y) meets its three checks: Y
// unfenced while only X of the two is fenced, Y fenced while X is, Y
// unfenced while both are; and that every script ends with nothing fenced.
func TestScriptsCoverEveryOrderedPair(t *testing.T) {
	for name, s := range map[string][]Step{"pair": pairScript, "triple": tripleScript} {
		n := 2
		if name == "triple" {
			n = 3
		}
		fenced := make([]bool, n)
		covered := map[string]bool{}
		for _, st := range s {
			y := st.Operand
			for x := range n {
				if x == y || !fenced[x] {
					continue
				}
				switch {
				case st.RPC == fencemodel.Unfence && !fenced[y]:
					covered[fmt.Sprint(x, y, 1)] = true
				case st.RPC == fencemodel.Fence && !fenced[y]:
					covered[fmt.Sprint(x, y, 2)] = true
				case st.RPC == fencemodel.Unfence:
					covered[fmt.Sprint(x, y, 3)] = true
				}
			}
			fenced[y] = st.RPC == fencemodel.Fence
		}
		for x := range n {
			for y := range n {
				for check := 1; check <= 3; check++ {
					if x != y && !covered[fmt.Sprint(x, y, check)] {
						t.Errorf("%s script: pair (%d, %d) misses check %d", name, x, y, check)
					}
				}
			}
			if fenced[x] {
				t.Errorf("%s script leaves operand %d fenced", name, x)
			}
		}
	}
}

func TestSpellings(t *testing.T) {
	p6 := netip.MustParsePrefix("2001:db8:fe00:1::/64")
	p4 := netip.MustParsePrefix("198.51.100.16/28")
	for _, c := range []struct {
		p    netip.Prefix
		s    Spelling
		want string
	}{
		{p6, Canonical, "2001:db8:fe00:1::/64"},
		{p6, Expanded, "2001:0db8:fe00:0001:0000:0000:0000:0000/64"},
		{p6, Uncompressed, "2001:db8:fe00:1:0:0:0:0/64"},
		{p6, Upper, "2001:DB8:FE00:1::/64"},
		{p6, HostBits, "2001:db8:fe00:1::1/64"},
		{p4, HostBits, "198.51.100.17/28"},
		{p4, HalfHostBits, "198.51.100.24/28"},
		{p4, Mapped, "::ffff:198.51.100.16/124"},
	} {
		if got := Spell(c.p, c.s); got != c.want {
			t.Errorf("Spell(%v, %s) = %q, want %q", c.p, c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		region string
		bits   int
		index  int
		want   string
	}{
		{"198.51.100.0/24", 26, 0, "198.51.100.0/26"},
		{"198.51.100.0/24", 26, -1, "198.51.100.192/26"},
		{"198.51.100.0/24", 32, 2, "198.51.100.2/32"},
		{"198.51.100.0/24", 32, -2, "198.51.100.254/32"},
		{"3fff::/21", 128, -1, "3fff:7ff:ffff:ffff:ffff:ffff:ffff:ffff/128"},
		{"3fff::/21", 24, 3, "3fff:300::/24"},
	} {
		if got := Nth(netip.MustParsePrefix(c.region), c.bits, c.index).String(); got != c.want {
			t.Errorf("Nth(%s, %d, %d) = %s, want %s", c.region, c.bits, c.index, got, c.want)
		}
	}
}

// TestCaseCounts pins how much a run sends: the number of cases and the
// requests their scripts make (the suite batches each step of every case
// into a request or a few).
func TestCaseCounts(t *testing.T) {
	for _, f := range []Family{IPv4, IPv6} {
		cs := Cases(f)
		ops := 0
		for _, c := range cs {
			ops += len(c.Script)
		}
		t.Logf("%s: %d cases, %d operations", f.Name, len(cs), ops)
		if len(cs) < 5*len(f.Widths) {
			t.Errorf("%s: only %d cases", f.Name, len(cs))
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr { return Nth(p, p.Addr().BitLen(), -1).Addr() }
