package memory

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/fenceproof/fenceproof/driver/backend"
)

func TestMemory(t *testing.T) {
	b := New()
	var _ backend.Backend = b
	p := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	if err := b.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	b.FailWith(errors.New("boom"))
	if err := b.Apply(context.Background(), nil); err == nil {
		t.Fatal("FailWith ignored")
	}
	got, n := b.Applied()
	if n != 1 || len(got) != 1 || got[0] != p[0] {
		t.Fatalf("Applied = %v, %d", got, n)
	}
	if _, err := b.Peers(context.Background(), []uint16{1}); !errors.Is(err, backend.ErrNoView) {
		t.Fatalf("Peers = %v", err)
	}
}
