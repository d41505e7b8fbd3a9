package fencemodel

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

type step struct {
	rpc   RPC
	cidrs []string
	got   Answer
	err   string // "" when the answer is one a conforming driver gives
}

func TestModel(t *testing.T) {
	all := func(netip.Prefix) bool { return true }
	for _, c := range []struct {
		name  string
		hb    HostBits
		steps []step
		want  []string
	}{
		{"one block one fence, in any spelling", Normalise, []step{
			{Fence, []string{"2001:db8::/64"}, "OK", ""},
			{Fence, []string{"2001:DB8:0:0:0:0:0:0/64", "2001:0db8:0000:0000:0000:0000:0000:0000/64"}, "OK", ""},
		}, []string{"2001:db8::/64"}},
		{"overlapping blocks are independent", Normalise, []step{
			{Fence, []string{"198.51.100.0/28", "198.51.100.0/29"}, "OK", ""},
			{Unfence, []string{"198.51.100.8/29"}, "OK", ""},
			{Unfence, []string{"198.51.100.0/28"}, "OK", ""},
		}, []string{"198.51.100.0/29"}},
		{"host bits normalised", Normalise, []step{
			{Fence, []string{"198.51.100.5/24"}, "OK", ""},
			{Fence, []string{"203.0.113.5/24"}, "InvalidArgument", "expected OK, got INVALID_ARGUMENT"},
		}, []string{"198.51.100.0/24"}},
		{"host bits rejected by Fence, either way by Unfence", Reject, []step{
			{Fence, []string{"198.51.100.0/24"}, "OK", ""},
			{Fence, []string{"198.51.100.5/24"}, "OK", "expected INVALID_ARGUMENT, got OK"},
			{Unfence, []string{"198.51.100.5/24"}, "InvalidArgument", ""},
			{Unfence, []string{"198.51.100.5/24"}, "OK", ""},
		}, nil},
		{"a request is whole or nothing", Either, []step{
			{Fence, []string{"198.51.100.1/32", "198.51.100.5/24"}, "InvalidArgument", ""},
			{Fence, []string{"198.51.100.1/32", "not-a-cidr"}, "OK", "expected INVALID_ARGUMENT, got OK"},
			{Fence, []string{"198.51.100.1/32", "198.51.100.5/24"}, "Internal", "expected OK or INVALID_ARGUMENT, got INTERNAL"},
		}, nil},
		{"IPv4-mapped is the IPv4 block", Normalise, []step{
			{Fence, []string{"::ffff:198.51.100.0/120"}, "OK", ""},
			{Unfence, []string{"::ffff:198.51.100.0/121"}, "InvalidArgument", ""},
		}, []string{"198.51.100.0/24"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := New(c.hb)
			for i, s := range c.steps {
				err := m.Apply(s.rpc, s.cidrs, s.got)
				if got := errString(err); got != s.err {
					t.Errorf("step %d: %q, want %q", i, got, s.err)
				}
			}
			var got []string
			for _, b := range m.Blocks() {
				got = append(got, b.String())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("set %v, want %v", got, c.want)
			}
			if d := m.Diff(c.want, all); !d.Empty() {
				t.Errorf("the model's own listing differs: %s", d)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestDiff(t *testing.T) {
	m := New(Normalise)
	_ = m.Apply(Fence, []string{"198.51.100.0/24", "3fff:100::/48", "203.0.113.0/24"}, "OK")
	region := netip.MustParsePrefix("198.51.100.0/23")
	v6 := netip.MustParsePrefix("3fff::/20")
	within := func(p netip.Prefix) bool { return region.Overlaps(p) || v6.Overlaps(p) }
	d := m.Diff([]string{
		"::ffff:198.51.100.0/120", // the IPv4 block kept as IPv6: not it
		"3fff:100::/64",           // a /48 listed as its first /64
		"3fff:100::/64",           // twice
		"203.0.113.0/24",          // outside: not judged
		"garbage",
	}, within)
	want := "not listed: 198.51.100.0/24, 3fff:100::/48; listed though not fenced: \"::ffff:198.51.100.0/120\", \"3fff:100::/64\"; listed more than once: \"3fff:100::/64\""
	if d.String() != want {
		t.Errorf("diff\n got %s\nwant %s", d, want)
	}
}

func TestRead(t *testing.T) {
	for raw, want := range map[string]string{
		"198.51.100.0/24":              "canonical 198.51.100.0/24",
		"198.51.100.7/24":              "host bits set 198.51.100.0/24",
		"::ffff:198.51.100.7/120":      "host bits set,IPv4-mapped IPv6 198.51.100.0/24",
		"2001:DB8::/32":                "another spelling 2001:db8::/32",
		" 198.51.100.0/24":             "not a CIDR block invalid Prefix",
		"198.51.100.0/24\x00":          "not a CIDR block invalid Prefix",
		"fe80::1%eth0/128":             "not a CIDR block invalid Prefix",
		"0:0:0:0:0:ffff:c633:6400/120": "IPv4-mapped IPv6 198.51.100.0/24",
	} {
		r := Read(raw)
		var kinds []string
		for _, k := range r.Kinds {
			kinds = append(kinds, string(k))
		}
		if got := strings.Join(kinds, ",") + " " + r.Block.String(); got != want {
			t.Errorf("Read(%q) = %s, want %s", raw, got, want)
		}
	}
}
