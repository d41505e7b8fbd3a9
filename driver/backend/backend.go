// Package backend defines how the driver enforces the fence set. A backend is
// a projection of the store: each Apply replaces what it enforces with
// exactly the given prefixes in one atomic step, so a failed or interrupted
// Apply leaves the previous enforcement intact and the next successful Apply
// converges on the store again.
package backend

import (
	"context"
	"errors"
	"net/netip"
)

// ErrNoView is returned by Peers when the backend cannot see clients.
var ErrNoView = errors.New("backend cannot see clients")

// Backend enforces fences.
type Backend interface {
	// Apply makes the enforced set exactly fenced, atomically.
	Apply(ctx context.Context, fenced []netip.Prefix) error
	// Peers returns remote addresses with established TCP connections to one
	// of ports, or ErrNoView.
	Peers(ctx context.Context, ports []uint16) ([]netip.Addr, error)
	// Close releases the backend's resources. Enforcement stays in place.
	Close() error
}

// Client is a client a backend knows by id, with the address it connects
// from.
type Client struct {
	ID   string
	Addr netip.Addr
}

// ClientLister is implemented by backends that see their clients by id (the
// refstore backend); the driver's GetFenceClients then reports exactly them.
type ClientLister interface {
	Clients(ctx context.Context) ([]Client, error)
}
