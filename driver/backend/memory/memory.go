// Package memory is a backend that enforces nothing and remembers the last
// applied fence set; it is for unit tests and for running the suite without
// privileges.
package memory

import (
	"context"
	"net/netip"
	"slices"
	"sync"

	"github.com/fenceproof/fenceproof/driver/backend"
)

// Backend is the in-memory backend.
type Backend struct {
	mu      sync.Mutex
	applied []netip.Prefix
	applies int
	fail    error
}

// New returns an empty memory backend.
func New() *Backend { return &Backend{} }

// Apply records fenced, or returns the error set by FailWith.
func (b *Backend) Apply(_ context.Context, fenced []netip.Prefix) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	b.applied = slices.Clone(fenced)
	b.applies++
	return nil
}

// Peers always returns backend.ErrNoView: memory sees no clients.
func (b *Backend) Peers(context.Context, []uint16) ([]netip.Addr, error) {
	return nil, backend.ErrNoView
}

// Close does nothing.
func (b *Backend) Close() error { return nil }

// FailWith makes every later Apply fail with err (nil to heal); for tests of
// the driver's behaviour on backend failure.
func (b *Backend) FailWith(err error) {
	b.mu.Lock()
	b.fail = err
	b.mu.Unlock()
}

// Applied returns the last applied set and how many Applies succeeded.
func (b *Backend) Applied() ([]netip.Prefix, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.applied), b.applies
}
