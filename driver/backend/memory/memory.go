// Package memory is a backend that enforces nothing and remembers the fence
// set it was given; it is for unit tests and for running the suite without
// privileges.
package memory

import (
	"context"
	"net/netip"
	"slices"
	"sync"

	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/cidr"
)

// Backend is the in-memory backend. It implements backend.Incremental.
type Backend struct {
	mu      sync.Mutex
	set     *cidr.Set
	applied map[netip.Prefix]int
	applies int
	changes int
	fail    error
}

var _ backend.Incremental = (*Backend)(nil)

// New returns an empty memory backend.
func New() *Backend { return &Backend{set: cidr.NewSet(nil), applied: map[netip.Prefix]int{}} }

// Apply records fenced, or returns the error set by FailWith.
func (b *Backend) Apply(_ context.Context, fenced []netip.Prefix) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	b.applied = map[netip.Prefix]int{}
	for _, p := range fenced {
		b.applied[p.Masked()]++
	}
	b.set = cidr.NewSet(fenced)
	b.applies++
	return nil
}

// Change applies a difference, or returns the error set by FailWith.
func (b *Backend) Change(_ context.Context, add, remove []netip.Prefix) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	for _, p := range add {
		b.applied[p.Masked()]++
	}
	for _, p := range remove {
		p = p.Masked()
		if b.applied[p]--; b.applied[p] <= 0 {
			delete(b.applied, p)
		}
	}
	b.set.Change(add, remove)
	b.changes++
	return nil
}

// Peers always returns backend.ErrNoView: memory sees no clients.
func (b *Backend) Peers(context.Context, []uint16) ([]netip.Addr, error) {
	return nil, backend.ErrNoView
}

// Close does nothing.
func (b *Backend) Close() error { return nil }

// FailWith makes every later Apply and Change fail with err (nil to heal);
// for tests of the driver's behaviour on backend failure.
func (b *Backend) FailWith(err error) {
	b.mu.Lock()
	b.fail = err
	b.mu.Unlock()
}

// Applied returns the distinct prefixes in force and how many Applies and
// Changes succeeded.
func (b *Backend) Applied() ([]netip.Prefix, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]netip.Prefix, 0, len(b.applied))
	for p := range b.applied {
		out = append(out, p)
	}
	slices.SortFunc(out, netip.Prefix.Compare)
	return out, b.applies + b.changes
}

// Ranges returns the union in force.
func (b *Backend) Ranges() []cidr.Range {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.set.Ranges()
}
