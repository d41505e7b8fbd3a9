package cidr

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in     string
		hb     HostBits
		want   string // "" = error expected
		reason string
	}{
		{"192.0.2.0/24", Normalise, "192.0.2.0/24", ""},
		{"192.0.2.5/24", Normalise, "192.0.2.0/24", ""},
		{"192.0.2.5/24", Reject, "", "host bits"},
		{"192.0.2.5/32", Reject, "192.0.2.5/32", ""},
		{"2001:0db8:0000:0000:0000:0000:0000:0000/32", Normalise, "2001:db8::/32", ""},
		{"2001:DB8::1/64", Normalise, "2001:db8::/64", ""},
		{"::ffff:192.0.2.0/120", Normalise, "192.0.2.0/24", ""},
		{"::ffff:192.0.2.7/128", Normalise, "192.0.2.7/32", ""},
		{"::ffff:192.0.2.7/120", Normalise, "192.0.2.0/24", ""},
		{"::ffff:0:0/96", Normalise, "0.0.0.0/0", ""},
		{"::ffff:192.0.2.7/120", Reject, "", "host bits"},
		{"::/8", Normalise, "", "IPv4-mapped"},
		{"::/0", Normalise, "", "IPv4-mapped"},
		{"::/80", Normalise, "", "IPv4-mapped"},
		{"::/81", Normalise, "::/81", ""},
		{"64:ff9b::/96", Normalise, "64:ff9b::/96", ""},
		{"::ffff:0:0:0/96", Normalise, "::ffff:0:0:0/96", ""},
		{"0.0.0.0/0", Normalise, "0.0.0.0/0", ""},
		{"", Normalise, "", "empty"},
		{"garbage", Normalise, "", "bare"},
		{"192.0.2.0/33", Normalise, "", "not a CIDR"},
		{"300.1.1.1/32", Normalise, "", "not a CIDR"},
		{"fd00::/129", Normalise, "", "not a CIDR"},
		{"192.0.2.1:80", Normalise, "", "bare"},
		{"[2001:db8::1]:80", Normalise, "", "bare"},
		{" 192.0.2.0/24", Normalise, "", "whitespace"},
		{"192.0.2.0/24\n", Normalise, "", "whitespace"},
		{"192.0.2.1", Normalise, "", "bare"},
		{"fe80::1%eth0/64", Normalise, "", "zones"},
		{"010.0.0.0/8", Normalise, "", "not a CIDR"},
	}
	for _, tc := range tests {
		p, err := Parse(tc.in, tc.hb)
		if tc.want == "" {
			if err == nil {
				t.Errorf("Parse(%q) = %v, want error", tc.in, p)
			} else if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("Parse(%q) error %q, want it to mention %q", tc.in, err, tc.reason)
			}
			continue
		}
		if err != nil || p.String() != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %s", tc.in, p, err, tc.want)
		}
	}
	if _, err := Parse("192.0.2.5/24", Reject); !errors.Is(err, ErrHostBits) {
		t.Errorf("want ErrHostBits, got %v", err)
	}
}

func TestLoosen(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1": "192.0.2.1/32", "2001:db8::1": "2001:db8::1/128", " 192.0.2.0/24\n": "192.0.2.0/24", "garbage": "garbage",
	} {
		if got := Loosen(in); got != want {
			t.Errorf("Loosen(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsBareOrPadded(t *testing.T) {
	for in, want := range map[string]bool{
		"192.0.2.1": true, " 192.0.2.0/24": true, "2001:db8::1": true,
		"192.0.2.0/24": false, "garbage": false, "300.1.1.1/32": false,
		"fe80::1%eth0/64": false, "fe80::1%eth0": false,
	} {
		if got := IsBareOrPadded(in); got != want {
			t.Errorf("IsBareOrPadded(%q) = %v", in, got)
		}
	}
}

func TestUnion(t *testing.T) {
	pp := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	tests := []struct {
		in   []netip.Prefix
		want []string
	}{
		{pp("10.0.0.0/8"), []string{"10.0.0.0-10.255.255.255"}},
		{pp("192.0.2.0/24", "192.0.2.0/25"), []string{"192.0.2.0-192.0.2.255"}},
		{pp("192.0.2.0/25", "192.0.2.128/25"), []string{"192.0.2.0-192.0.2.255"}},
		{pp("198.51.100.0/24", "192.0.2.0/24"), []string{"192.0.2.0-192.0.2.255", "198.51.100.0-198.51.100.255"}},
		{pp("2001:db8::/32", "192.0.2.7/32"), []string{"192.0.2.7-192.0.2.7", "2001:db8::-2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"}},
		{pp("0.0.0.0/0", "10.0.0.0/8"), []string{"0.0.0.0-255.255.255.255"}},
		{pp("255.255.255.255/32", "::/0"), []string{"255.255.255.255-255.255.255.255", "::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}},
		{nil, nil},
	}
	for _, tc := range tests {
		got := Union(tc.in)
		var gs []string
		for _, r := range got {
			gs = append(gs, r.From.String()+"-"+r.To.String())
		}
		if len(gs) != len(tc.want) {
			t.Errorf("Union(%v) = %v, want %v", tc.in, gs, tc.want)
			continue
		}
		for i := range gs {
			if gs[i] != tc.want[i] {
				t.Errorf("Union(%v) = %v, want %v", tc.in, gs, tc.want)
			}
		}
	}
	rs := Union(pp("192.0.2.0/24"))
	if !Contains(rs, netip.MustParseAddr("192.0.2.77")) || Contains(rs, netip.MustParseAddr("192.0.3.0")) {
		t.Error("Contains wrong")
	}
}

// FuzzParse checks that whatever Parse accepts is canonical: masked, never
// IPv4-mapped, and re-parsing its String gives the same prefix.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"192.0.2.5/24", "2001:DB8::/32", "::ffff:1.2.3.4/128", "0.0.0.0/0", " 1.2.3.4/32", "fe80::1%x/64"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s, Normalise)
		if err != nil {
			return
		}
		if p != p.Masked() {
			t.Fatalf("Parse(%q) = %v not masked", s, p)
		}
		q, err := Parse(p.String(), Reject)
		if err != nil || q != p {
			t.Fatalf("Parse(%q) = %v does not round-trip: %v %v", s, p, q, err)
		}
		if p.Addr().Is4In6() {
			t.Fatalf("Parse(%q) = %v is still IPv4-mapped (fails open)", s, p)
		}
		if _, err := Parse(s, Reject); (err == nil) != (netip.MustParsePrefix(s).Masked() == netip.MustParsePrefix(s)) {
			t.Fatalf("Reject disagrees with Normalise for %q", s)
		}
	})
}

func TestMinBits(t *testing.T) {
	for in, want := range map[string]string{"": "1,1", "0": "0,0", "8": "8,8", "8,32": "8,32", "0,0": "0,0"} {
		m, err := ParseMinBits(in)
		if err != nil || m.String() != want {
			t.Errorf("ParseMinBits(%q) = %v, %v; want %s", in, m, err, want)
		}
	}
	for _, bad := range []string{"x", "-1", "33", "8,129", "8,", " 8", "40", "0/0", "8x"} {
		if _, err := ParseMinBits(bad); err == nil {
			t.Errorf("ParseMinBits(%q) accepted", bad)
		}
	}
	m := DefaultMinBits
	for p, ok := range map[string]bool{"0.0.0.0/0": false, "::/0": false, "0.0.0.0/1": true, "128.0.0.0/1": true, "2001:db8::/32": true} {
		err := m.Check(netip.MustParsePrefix(p))
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrTooWide)) {
			t.Errorf("DefaultMinBits.Check(%s) = %v, want ok=%v", p, err, ok)
		}
	}
	m = MinBits{V4: 8, V6: 32}
	if m.Check(netip.MustParsePrefix("10.0.0.0/7")) == nil || m.Check(netip.MustParsePrefix("10.0.0.0/8")) != nil ||
		m.Check(netip.MustParsePrefix("2001::/31")) == nil || m.Check(netip.MustParsePrefix("2001:db8::/32")) != nil {
		t.Error("MinBits{8,32} misjudges /7, /8, /31 or /32")
	}
}

// TestCoversMatchesContains checks the binary search of Covers against the
// linear Contains on seeded random unions of both families, probing the
// edges of every range and random addresses. FP_COVERS_SEED=N replays it.
func TestCoversMatchesContains(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FP_COVERS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	addr := func() netip.Addr {
		if rng.IntN(3) == 0 {
			return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 14: byte(rng.IntN(4)), 15: byte(rng.IntN(256))})
		}
		return netip.AddrFrom4([4]byte{10, 0, byte(rng.IntN(4)), byte(rng.IntN(256))})
	}
	for round := range 500 {
		var ps []netip.Prefix
		for range rng.IntN(12) {
			a := addr()
			ps = append(ps, netip.PrefixFrom(a, a.BitLen()-rng.IntN(9)).Masked())
		}
		rs := Union(ps)
		probes := []netip.Addr{addr(), addr(), addr()}
		for _, r := range rs {
			probes = append(probes, r.From, r.To, r.From.Prev(), r.To.Next())
		}
		for _, a := range probes {
			if !a.IsValid() {
				continue
			}
			if got, want := Covers(rs, a), Contains(rs, a); got != want {
				t.Fatalf("seed %d (replay with FP_COVERS_SEED=%d), round %d: Covers(%v, %v) = %v, Contains says %v", seed, seed, round, rs, a, got, want)
			}
		}
	}
}

// FuzzMinBits checks --max-prefix parsing: an accepted spec round-trips
// through String, and Check refuses exactly the prefixes shorter than the
// limit of their family.
func FuzzMinBits(f *testing.F) {
	for _, s := range []string{"", "0", "8", "8,32", "32,128", "33", "8,", "-1", " 8"} {
		f.Add(s, uint8(7))
	}
	f.Fuzz(func(t *testing.T, s string, bits uint8) {
		m, err := ParseMinBits(s)
		if err != nil {
			return
		}
		if m.V4 < 0 || m.V4 > 32 || m.V6 < 0 || m.V6 > 128 {
			t.Fatalf("ParseMinBits(%q) = %+v out of range", s, m)
		}
		if back, err := ParseMinBits(m.String()); err != nil || back != m {
			t.Fatalf("ParseMinBits(%q) = %+v does not round-trip: %+v, %v", s, m, back, err)
		}
		p4 := netip.PrefixFrom(netip.AddrFrom4([4]byte{}), int(bits)%33)
		p6 := netip.PrefixFrom(netip.IPv6Unspecified(), int(bits)%129)
		if (m.Check(p4) == nil) != (p4.Bits() >= m.V4) || (m.Check(p6) == nil) != (p6.Bits() >= m.V6) {
			t.Fatalf("%+v: Check(%v) = %v, Check(%v) = %v", m, p4, m.Check(p4), p6, m.Check(p6))
		}
	})
}

// TestParseErrorDoesNotEchoInput pins the bug FuzzFenceRequest found: a
// malformed block's error quoted the whole input (net/netip's message), so
// a 1 MB CIDR came back in the error and went into the driver's log.
func TestParseErrorDoesNotEchoInput(t *testing.T) {
	for _, in := range []string{
		strings.Repeat("9", 1<<20) + "/24",
		"10.0.0.0/" + strings.Repeat("1", 1<<20),
		"2001:db8::" + strings.Repeat("\xff", 1<<20) + "/32",
	} {
		_, err := Parse(in, Normalise)
		if err == nil {
			t.Fatal("accepted")
		}
		if n := len(err.Error()); n > 160 {
			t.Fatalf("error of %d bytes for a %d-byte input: %.200s", n, len(in), err)
		}
	}
	_, err := Parse("1.2.3.4x/24", Normalise)
	if err == nil || !strings.Contains(err.Error(), "unexpected character") {
		t.Fatalf("the reason is lost: %v", err)
	}
}

// TestSpelledReadsBackEveryBlock: a block's String read back through
// Spelled is the same block, and two spellings of one prefix are two blocks
// naming the same prefix.
func TestSpelledReadsBackEveryBlock(t *testing.T) {
	for _, s := range []string{"192.0.2.0/24", "192.0.2.5/24", "2001:DB8::/32", "2001:db8::/32", "::ffff:192.0.2.1/128", "192.0.2.1", " 192.0.2.1/32", "not-a-cidr", "300.1.1.1/32"} {
		b := Spelled(s)
		if b.String() != s || Spelled(b.String()) != b {
			t.Errorf("Spelled(%q) = %+v, reads back as %q", s, b, b.String())
		}
		if b.Enforced() && b.Prefix != b.Prefix.Masked() {
			t.Errorf("Spelled(%q) holds an unmasked prefix %s", s, b.Prefix)
		}
	}
	canon, host := Spelled("192.0.2.0/24"), Spelled("192.0.2.5/24")
	if canon != Canonical(netip.MustParsePrefix("192.0.2.0/24")) || canon == host || canon.Prefix != host.Prefix {
		t.Errorf("canonical %+v and host-bit %+v spellings", canon, host)
	}
	if Spelled("192.0.2.1").Enforced() || Spelled("not-a-cidr").Enforced() {
		t.Error("a spelling that names no prefix is enforced")
	}
}
