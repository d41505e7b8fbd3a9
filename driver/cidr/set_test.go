package cidr

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestSetMatchesUnion runs seeded random fences and unfences of nested,
// adjacent and overlapping blocks (both families, the address space edges
// included) and checks after every step that the set equals Union of the
// multiset and that applying the reported delta to the previous ranges gives
// the new ones. FP_SET_SEED=N replays a run.
func TestSetMatchesUnion(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FP_SET_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (replay with FP_SET_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	random := func() netip.Prefix {
		if rng.IntN(4) == 0 {
			a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(rng.IntN(256))})
			if rng.IntN(8) == 0 {
				a = netip.IPv6Unspecified()
			}
			return netip.PrefixFrom(a, 120+rng.IntN(9)).Masked()
		}
		a := netip.AddrFrom4([4]byte{byte(rng.IntN(3)) * 127, 0, 0, byte(rng.IntN(256))})
		if rng.IntN(10) == 0 {
			a = netip.AddrFrom4([4]byte{255, 255, 255, byte(rng.IntN(256))})
		}
		return netip.PrefixFrom(a, 24+rng.IntN(9)).Masked()
	}
	s := NewSet(nil)
	var multi []netip.Prefix
	for step := range 3000 {
		var add, rm []netip.Prefix
		for range rng.IntN(3) {
			add = append(add, random())
		}
		for range rng.IntN(3) {
			if len(multi) > 0 && rng.IntN(4) > 0 {
				rm = append(rm, multi[rng.IntN(len(multi))])
			} else {
				rm = append(rm, random())
			}
		}
		before := s.Ranges()
		d := s.Change(add, rm)
		multi = append(multi, add...)
		for _, p := range rm {
			if i := slices.Index(multi, p); i >= 0 {
				multi = slices.Delete(multi, i, i+1)
			}
		}
		want := Union(multi)
		if got := s.Ranges(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d step %d (+%v -%v): ranges %v, want %v", seed, step, add, rm, got, want)
		}
		applied := slices.DeleteFunc(before, func(r Range) bool { return slices.Contains(d.Removed, r) })
		applied = append(applied, d.Added...)
		slices.SortFunc(applied, func(a, b Range) int { return a.From.Compare(b.From) })
		if fmt.Sprint(applied) != fmt.Sprint(want) {
			t.Fatalf("seed %d step %d (+%v -%v): delta %+v applied gives %v, want %v", seed, step, add, rm, d, applied, want)
		}
	}
}

// TestSetDeltaIsLocal pins the cost claim: one block added to or removed
// from 10k unrelated ones changes one or two ranges, and merges and splits
// report exactly the ranges they touch.
func TestSetDeltaIsLocal(t *testing.T) {
	var ps []netip.Prefix
	for i := range 10000 {
		ps = append(ps, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 0}), 25))
	}
	s := NewSet(ps)
	one := netip.MustParsePrefix("10.200.0.0/25")
	if d := s.Change([]netip.Prefix{one}, nil); len(d.Added) != 1 || len(d.Removed) != 0 {
		t.Fatalf("adding one isolated block: %+v", d)
	}
	// 10.0.0.128/25 joins 10.0.0.0/25 and 10.0.1.0/25: three ranges become one.
	mid := netip.MustParsePrefix("10.0.0.128/25")
	d := s.Change([]netip.Prefix{mid}, nil)
	if fmt.Sprint(d.Added) != "[{10.0.0.0 10.0.1.127}]" || len(d.Removed) != 2 {
		t.Fatalf("merge: %+v", d)
	}
	d = s.Change(nil, []netip.Prefix{mid})
	if len(d.Added) != 2 || fmt.Sprint(d.Removed) != "[{10.0.0.0 10.0.1.127}]" {
		t.Fatalf("split: %+v", d)
	}
	// A /16 over 256 of the /25s (and adjacent to 10.1.0.0/25), then
	// removed: the 257 ranges come back.
	wide := netip.MustParsePrefix("10.0.0.0/16")
	if d := s.Change([]netip.Prefix{wide}, nil); len(d.Added) != 1 || len(d.Removed) != 257 {
		t.Fatalf("covering /16: added %d removed %d", len(d.Added), len(d.Removed))
	}
	if d := s.Change(nil, []netip.Prefix{wide}); len(d.Added) != 257 || len(d.Removed) != 1 {
		t.Fatalf("uncovering /16: added %d removed %d", len(d.Added), len(d.Removed))
	}
	if d := s.Change(nil, []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}); !d.Empty() {
		t.Fatalf("removing a block never added changed %+v", d)
	}
}

// FuzzSetChange decodes ops from bytes (3 bytes each: kind and family,
// address, length) over a small space of both families and the address
// space edges, and checks after every Change what TestSetMatchesUnion does:
// the set equals Union of the multiset and the delta turns the previous
// ranges into the new ones.
func FuzzSetChange(f *testing.F) {
	f.Add([]byte{0, 0, 24, 0, 128, 25, 1, 0, 24})
	f.Add([]byte{2, 0, 120, 2, 1, 121, 0, 255, 32, 3, 0, 120})
	f.Add([]byte{0, 255, 0, 0, 0, 1, 1, 255, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*64 {
			ops = ops[:3*64]
		}
		s := NewSet(nil)
		var multi []netip.Prefix
		for i := 0; i+3 <= len(ops); i += 3 {
			kind, at, n := ops[i], ops[i+1], ops[i+2]
			var p netip.Prefix
			if kind&2 != 0 {
				p = netip.PrefixFrom(netip.AddrFrom16([16]byte{0: at & 0x80, 15: at}), int(n)%129).Masked()
			} else {
				p = netip.PrefixFrom(netip.AddrFrom4([4]byte{at & 0xc0, 0, 0, at}), int(n)%33).Masked()
			}
			var add, rm []netip.Prefix
			if kind&1 == 0 {
				add = []netip.Prefix{p}
			} else {
				rm = []netip.Prefix{p}
			}
			before := s.Ranges()
			d := s.Change(add, rm)
			multi = append(multi, add...)
			for _, q := range rm {
				if j := slices.Index(multi, q); j >= 0 {
					multi = slices.Delete(multi, j, j+1)
				}
			}
			want := Union(multi)
			if got := s.Ranges(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("op %d (+%v -%v): ranges %v, want %v", i/3, add, rm, got, want)
			}
			applied := slices.DeleteFunc(before, func(r Range) bool { return slices.Contains(d.Removed, r) })
			applied = append(applied, d.Added...)
			slices.SortFunc(applied, func(a, b Range) int { return a.From.Compare(b.From) })
			if fmt.Sprint(applied) != fmt.Sprint(want) {
				t.Fatalf("op %d (+%v -%v): delta %+v applied gives %v, want %v", i/3, add, rm, d, applied, want)
			}
		}
	})
}
