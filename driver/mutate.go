package driver

import (
	"context"
	"maps"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/store"
)

// raceWindow is how long the race fault sleeps between reading and writing
// the fence set, wide enough for concurrent mutations to interleave.
const raceWindow = 20 * time.Millisecond

// mutate applies change to the fence set: serialised, committed to the store
// before the backend, rolled back in the store if the backend fails (see the
// package comment). change gets a copy of the current set to modify and
// returns it, or a status error, in which case nothing happens.
func (d *Driver) mutate(ctx context.Context, change func(store.State) (store.State, error)) error {
	switch {
	case d.faults.Race:
		// Unserialised read-modify-write: concurrent mutations lose updates.
	case d.faults.InternalOnContention:
		if !d.mu.TryLock() {
			return status.Error(codes.Internal, "another mutation is in flight")
		}
		defer d.mu.Unlock()
	default:
		d.mu.Lock()
		defer d.mu.Unlock()
	}
	cur := *d.state.Load()
	next, err := change(cur.Clone())
	if err != nil {
		return err
	}
	if d.faults.Race {
		time.Sleep(raceWindow)
	}
	if maps.Equal(cur, next) {
		return nil
	}
	if err := d.store.Set(next); err != nil {
		return status.Errorf(codes.Unknown, "commit to state store failed, nothing changed: %v", err)
	}
	if delay := d.faults.AckBeforeEnforce; delay > 0 && adds(cur, next) {
		d.state.Store(&next)
		go d.enforceLater(delay)
		return nil
	}
	if err := d.backend.Apply(ctx, prefixes(next)); err != nil {
		if rerr := d.store.Set(cur); rerr != nil {
			d.log.Error("store rollback failed; store is ahead of enforcement until the next change or restart", "err", rerr)
			return status.Errorf(codes.Unknown, "backend update failed (%v) and store rollback failed (%v)", err, rerr)
		}
		return status.Errorf(codes.Unknown, "backend update failed, nothing changed: %v", err)
	}
	d.state.Store(&next)
	return nil
}

// adds reports whether next holds a key cur does not.
func adds(cur, next store.State) bool {
	for k := range next {
		if _, ok := cur[k]; !ok {
			return true
		}
	}
	return false
}

// enforceLater is the ack-before-enforce fault: after delay it applies
// whatever set is stored by then.
func (d *Driver) enforceLater(delay time.Duration) {
	select {
	case <-d.done:
		return
	case <-time.After(delay):
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	select {
	case <-d.done:
		return
	default:
	}
	ps := prefixes(*d.state.Load())
	if err := d.backend.Apply(context.Background(), ps); err != nil {
		d.log.Error("fault ack-before-enforce: late apply failed", "err", err)
		return
	}
	d.log.Warn("fault ack-before-enforce: fences enforced late", "delay", delay, "count", len(ps))
}
