package driver

import (
	"net/netip"
	"os"
	"testing"
)

// spread returns n distinct, non-adjacent /32s in 10.0.0.0/8.
func spread(n int) []string {
	out := make([]string, n)
	for i := range out {
		v := uint32(10<<24) + uint32(i)*2
		out[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), 32).String()
	}
	return out
}

// BenchmarkFence10k fences 10k CIDRs in one request over gRPC (store commit
// and backend apply included), then unfences them outside the timer.
func BenchmarkFence10k(b *testing.B) {
	ps := spread(10000)
	for _, be := range []string{"memory", "nftables"} {
		b.Run(be, func(b *testing.B) {
			o := Options{Backend: be}
			if be == "nftables" {
				if os.Geteuid() != 0 {
					b.Skip("needs root for a private netns and nftables")
				}
				o.NetNS = "new"
			}
			h := start(b, o)
			b.ResetTimer()
			for range b.N {
				if err := h.fence(b, ps...); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if err := h.unfence(b, ps...); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkList100k lists 100k stored fences over gRPC.
func BenchmarkList100k(b *testing.B) {
	h := start(b, Options{})
	h.fenceChunked(b, spread(100000))
	b.ResetTimer()
	for range b.N {
		if n := len(h.list(b)); n != 100000 {
			b.Fatalf("listed %d", n)
		}
	}
}
