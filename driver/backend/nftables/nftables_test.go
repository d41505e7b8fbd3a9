//go:build linux

package nftables

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_NET_ADMIN) to create network namespaces and nftables tables")
	}
}

// newBackend opens a backend in a private netns.
func newBackend(t testing.TB) *Backend {
	t.Helper()
	needRoot(t)
	b, err := New("new", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestSlash8IsOneElement(t *testing.T) {
	b := newBackend(t)
	apply(t, b, "10.0.0.0/8", "192.0.2.0/24", "192.0.2.0/25", "2001:db8::/32", "255.255.255.255/32")
	r4, err := b.Ranges(false)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(r4); got != "[{10.0.0.0 10.255.255.255} {192.0.2.0 192.0.2.255} {255.255.255.255 255.255.255.255}]" {
		t.Fatalf("fenced4 holds %s", got)
	}
	r6, err := b.Ranges(true)
	if err != nil || len(r6) != 1 || r6[0].From.String() != "2001:db8::" {
		t.Fatalf("fenced6 holds %v, %v", r6, err)
	}
	// Replacing the set keeps the /24 when the /25 goes.
	apply(t, b, "192.0.2.0/24")
	if r4, _ := b.Ranges(false); len(r4) != 1 || r4[0].To.String() != "192.0.2.255" {
		t.Fatalf("after dropping the /25: %v", r4)
	}
	apply(t, b)
	if r4, _ := b.Ranges(false); len(r4) != 0 {
		t.Fatalf("after clearing: %v", r4)
	}
}

func TestTenThousandInOneBatch(t *testing.T) {
	b := newBackend(t)
	ps := spread(10000)
	start := time.Now()
	if err := b.Apply(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	r4, err := b.Ranges(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r4) != 10000 {
		t.Fatalf("set holds %d ranges, want 10000", len(r4))
	}
	t.Logf("10k non-adjacent prefixes applied in one batch in %v", took)
}

// spread returns n non-adjacent /32s in 10.0.0.0/8.
func spread(n int) []netip.Prefix {
	out := make([]netip.Prefix, n)
	for i := range out {
		v := uint32(10<<24) + uint32(i)*4
		out[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), 32)
	}
	return out
}

func apply(t *testing.T, b *Backend, ss ...string) {
	t.Helper()
	var ps []netip.Prefix
	for _, s := range ss {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	if err := b.Apply(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
}

func TestNetNSPath(t *testing.T) {
	needRoot(t)
	n, err := ns.TempNetNS()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	b, err := New(fmt.Sprintf("/proc/self/fd/%d", n.Fd()), nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, b, "198.51.100.0/24")
	b.Close()
	// The table outlives the backend: a second backend on the same netns sees it.
	b2, err := New(fmt.Sprintf("/proc/self/fd/%d", n.Fd()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if r, err := b2.Ranges(false); err != nil || len(r) != 1 {
		t.Fatalf("table not found from a second handle: %v %v", r, err)
	}
	if _, err := New("/nonexistent/netns", nil); err == nil {
		t.Fatal("bad netns path accepted")
	}
}

// TestChangeMatchesUnion runs seeded random Changes (hosts and wider
// blocks, nested, adjacent, repeated) against the kernel and checks after
// each that what the kernel holds is the union of the multiset, and that
// Verify finds no drift. FP_NFT_SEED=N replays a run.
func TestChangeMatchesUnion(t *testing.T) {
	b := newBackend(t)
	if err := b.Apply(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FP_NFT_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (replay with FP_NFT_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	random := func() netip.Prefix {
		if rng.IntN(3) == 0 {
			return netip.PrefixFrom(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(rng.IntN(64))}), 122+rng.IntN(7)).Masked()
		}
		return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(rng.IntN(64))}), 26+rng.IntN(7)).Masked()
	}
	var multi []netip.Prefix
	for step := range 150 {
		var add, rm []netip.Prefix
		for range rng.IntN(3) {
			add = append(add, random())
		}
		for range rng.IntN(3) {
			if len(multi) > 0 {
				rm = append(rm, multi[rng.IntN(len(multi))])
			}
		}
		if err := b.Change(context.Background(), add, rm); err != nil {
			t.Fatalf("seed %d step %d: %v", seed, step, err)
		}
		multi = append(multi, add...)
		for _, p := range rm {
			if i := slices.Index(multi, p); i >= 0 {
				multi = slices.Delete(multi, i, i+1)
			}
		}
		want := cidr.Union(multi)
		r4, err := b.Ranges(false)
		if err != nil {
			t.Fatal(err)
		}
		r6, err := b.Ranges(true)
		if err != nil {
			t.Fatal(err)
		}
		if got := append(r4, r6...); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d step %d (+%v -%v): kernel %v, want %v", seed, step, add, rm, got, want)
		}
		if err := b.Verify(context.Background()); err != nil {
			t.Fatalf("seed %d step %d: Verify: %v", seed, step, err)
		}
	}
}
