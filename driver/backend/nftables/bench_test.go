//go:build linux

package nftables

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
)

// BenchmarkSlash8 applies a /8 and reads the set back; "elements" is the
// number of intervals the kernel holds for it (1, not 16M).
func BenchmarkSlash8(b *testing.B) {
	be := newBackend(b)
	p := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	var n int
	for range b.N {
		if err := be.Apply(context.Background(), p); err != nil {
			b.Fatal(err)
		}
		rs, err := be.Ranges(false)
		if err != nil {
			b.Fatal(err)
		}
		n = len(rs)
	}
	if n != 1 {
		b.Fatalf("a /8 became %d elements", n)
	}
	b.ReportMetric(float64(n), "elements")
}

// BenchmarkApply10k applies 10k non-adjacent prefixes in one batch.
func BenchmarkApply10k(b *testing.B) {
	be := newBackend(b)
	ps := spread(10000)
	for range b.N {
		if err := be.Apply(context.Background(), ps); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChangeOne adds and removes one block with 0 or 100k ranges in
// force: the incremental batch carries two elements either way.
func BenchmarkChangeOne(b *testing.B) {
	for _, stored := range []int{0, 100000} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			be := newBackend(b)
			if err := be.Apply(context.Background(), spread(stored)); err != nil {
				b.Fatal(err)
			}
			one := []netip.Prefix{netip.MustParsePrefix("172.16.0.0/24")}
			b.ResetTimer()
			for range b.N {
				if err := be.Change(context.Background(), one, nil); err != nil {
					b.Fatal(err)
				}
				if err := be.Change(context.Background(), nil, one); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
