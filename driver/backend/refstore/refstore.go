// Package refstore is the driver backend that enforces fences storage-side,
// the way Ceph's OSD blocklist does: Apply hands the complete fenced set to
// the reference storage service (refstore) over its admin API and
// returns only once refstore answers that the list is persisted, in force
// for every later write and that the open sessions of fenced sources are
// closed. The driver acknowledges the RPC after Apply returns, so an
// acknowledged fence is always already enforced.
//
// Apply retries connection failures (refstore restarting) until its context
// ends; a refusal of the content is returned at once. When a change fails,
// the previous list is put back at once (the change may have reached
// refstore before the failure, and the driver keeps its previous set). A background resync
// compares refstore's list with the last applied set every DefaultResync
// and re-applies it if refstore lost or changed it (e.g. its state file was
// wiped), so enforcement converges on the driver's store.
package refstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fenceproof/fenceproof/driver/backend"
	rs "github.com/fenceproof/fenceproof/refstore"
)

// DefaultResync is how often the backend checks refstore's list.
const DefaultResync = 10 * time.Second

// Backend is the refstore backend.
type Backend struct {
	c   *rs.AdminClient
	log *slog.Logger

	mu      sync.Mutex // serialises Apply and resync
	applied []string   // canonical set of the last successful Apply; nil before it
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

// New connects lazily to the admin endpoint (unix:///path.sock, or
// tcp://host:port with the token read from tokenFile) and checks refstore's
// list every DefaultResync.
func New(endpoint, tokenFile string, log *slog.Logger) (*Backend, error) {
	return NewWithResync(endpoint, tokenFile, DefaultResync, log)
}

// NewWithResync is New with another resync period.
func NewWithResync(endpoint, tokenFile string, resync time.Duration, log *slog.Logger) (*Backend, error) {
	token := ""
	if tokenFile != "" {
		raw, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("refstore token file: %w", err)
		}
		token = strings.TrimSpace(string(raw))
	}
	c, err := rs.NewAdminClient(endpoint, token)
	if err != nil {
		return nil, err
	}
	b := &Backend{c: c, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	go b.resyncLoop(resync)
	return b, nil
}

// Apply makes refstore's blocklist exactly fenced and returns once it is
// enforced.
func (b *Backend) Apply(ctx context.Context, fenced []netip.Prefix) error {
	want := make([]string, len(fenced))
	for i, p := range fenced {
		want[i] = p.String()
	}
	canon, err := rs.ParseCIDRs(want)
	if err != nil {
		return err
	}
	want = rs.Blocklist{Prefixes: canon}.Strings()
	b.mu.Lock()
	defer b.mu.Unlock()
	err = b.apply(ctx, want)
	if err != nil && b.applied != nil && !slices.Equal(b.applied, want) {
		// The change may have reached refstore before the failure (e.g. the
		// RPC's deadline expired while refstore answered). The driver keeps
		// its previous set, so put refstore back on it at once rather than
		// at the next resync: an acknowledged fence must not stay lifted.
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if rerr := b.apply(rctx, b.applied); rerr != nil {
			b.log.Error("refstore: restoring the previous blocklist after a failed change failed; the resync will retry", "err", rerr)
		}
		cancel()
	}
	return err
}

func (b *Backend) apply(ctx context.Context, want []string) error {
	wait := 50 * time.Millisecond
	for {
		res, err := b.c.SetBlocklist(ctx, want)
		if err == nil {
			if !slices.Equal(res.CIDRs, want) {
				return fmt.Errorf("refstore enforces %v, asked for %v", res.CIDRs, want)
			}
			b.applied = want
			return nil
		}
		var se *rs.StatusError
		if errors.As(err, &se) || ctx.Err() != nil {
			return err
		}
		b.log.Warn("refstore unreachable, retrying", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

func (b *Backend) resyncLoop(every time.Duration) {
	defer close(b.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.resync()
		}
	}
}

// resync re-applies the last applied set if refstore's list differs.
func (b *Backend) resync() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.applied == nil {
		return
	}
	got, err := b.c.Blocklist(ctx)
	if err != nil || slices.Equal(got.CIDRs, b.applied) {
		return
	}
	b.log.Warn("refstore blocklist drifted from the driver's; re-applying", "refstore", got.CIDRs, "driver", b.applied)
	if err := b.apply(ctx, b.applied); err != nil {
		b.log.Error("refstore resync failed", "err", err)
	}
}

// Peers returns backend.ErrNoView: refstore reports clients by id (Clients).
func (b *Backend) Peers(context.Context, []uint16) ([]netip.Addr, error) {
	return nil, backend.ErrNoView
}

// Clients returns refstore's open sessions that have named themselves.
func (b *Backend) Clients(ctx context.Context) ([]backend.Client, error) {
	cs, err := b.c.Clients(ctx)
	if err != nil {
		return nil, err
	}
	var out []backend.Client
	for _, c := range cs {
		if c.ID == "" {
			continue
		}
		ap, err := netip.ParseAddrPort(c.Addr)
		if err != nil {
			return nil, fmt.Errorf("refstore reports client %q at %q: %v", c.ID, c.Addr, err)
		}
		out = append(out, backend.Client{ID: c.ID, Addr: ap.Addr().Unmap()})
	}
	return out, nil
}

// Close stops the resync loop. Enforcement stays in place in refstore.
func (b *Backend) Close() error {
	b.once.Do(func() {
		close(b.stop)
		<-b.done
		b.c.Close()
	})
	return nil
}
