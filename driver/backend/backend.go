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

// Incremental is a Backend that can also change what it enforces by a
// difference. The backend keeps the multiset of prefixes it was given (by
// Apply, then by each Change) and enforces their union; Change costs grows
// with the change, not with the enforced set. The driver uses Change for
// every mutation when a backend has it, and Apply at start and to repair
// drift.
type Incremental interface {
	Backend
	// Change adds the prefixes of add and drops one copy of each prefix of
	// remove, in one atomic transaction; on error nothing changed.
	Change(ctx context.Context, add, remove []netip.Prefix) error
}

// Verifier is a Backend that can tell whether what is in force still equals
// what it last applied (something else may edit or delete its rules).
type Verifier interface {
	Backend
	// Verify returns nil when enforcement is intact, an error wrapping
	// ErrDrift when it differs (the caller repairs it with Apply), or one
	// wrapping ErrForeign when another instance owns the enforcement objects
	// (the caller must not take them over).
	Verify(ctx context.Context) error
}

// ErrDrift and ErrForeign classify Verify errors.
var (
	ErrDrift   = errors.New("enforcement differs from the fence set")
	ErrForeign = errors.New("enforcement objects belong to another driver instance")
)

// Limiter is a Backend that bounds what one request may cost it: the driver
// calls CheckChange with a Fence request's prefixes before storing
// anything, and refuses the request with INVALID_ARGUMENT on an error.
type Limiter interface {
	CheckChange(add []netip.Prefix) error
}

// Reader is a Backend that reads back what is in force: ListClusterFence
// then reports the stored fences the backend enforces now, not merely the
// ones the driver stored (the Ceph backend reads the OSD map's blocklist).
type Reader interface {
	// InForce returns the prefixes of the backend's set in force now.
	InForce(ctx context.Context) ([]netip.Prefix, error)
}
