package driver

import (
	"context"
	"maps"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// The driver's broken modes: the ways of mutating and enforcing that the
// mutate and enforce hooks select (faults race, internal-on-contention and
// ack-before-enforce). The faithful path is mutateBatched and commit.

// raceWindow is how long the race fault sleeps between reading and writing
// the fence set, wide enough for concurrent mutations to interleave.
const raceWindow = 20 * time.Millisecond

// mutateRacy is an unserialised read-modify-write: it reads a snapshot,
// sleeps, then overwrites the set with snapshot+change, so concurrent
// mutations lose updates (but never corrupt memory).
func (d *Driver) mutateRacy(ctx context.Context, change func(*txn) error) error {
	d.stateMu.RLock()
	snap, seq := maps.Clone(d.live), d.maxSeq
	d.stateMu.RUnlock()
	t := newTxn(snap, seq)
	if err := change(t); err != nil {
		return err
	}
	time.Sleep(raceWindow)
	// A mutation whose client gave up is dropped all the same: the fault
	// is the lost update, and nothing else.
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	next := snap
	for k := range t.del {
		delete(next, k)
	}
	for k, e := range t.put {
		next[k] = e
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	full := newTxn(d.live, d.maxSeq)
	for _, k := range full.Blocks() {
		if _, ok := next[k]; !ok {
			full.remove(k)
		}
	}
	for k, e := range next {
		full.set(k, e)
	}
	return d.commit(ctx, full.diff())
}

// contentionWindow is how long the fail-on-contention mode holds the
// mutation lock, so that concurrent requests reliably find it held.
const contentionWindow = 5 * time.Millisecond

// mutateOrFail applies a change alone, failing with INTERNAL when another
// mutation holds the lock.
func (d *Driver) mutateOrFail(ctx context.Context, change func(*txn) error) error {
	if !d.mu.TryLock() {
		return status.Error(codes.Internal, "another mutation is in flight")
	}
	defer d.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return status.FromContextError(err).Err()
	}
	// Hold the lock long enough that requests sent at once meet it.
	time.Sleep(contentionWindow)
	t := newTxn(d.live, d.maxSeq)
	if err := change(t); err != nil {
		return err
	}
	return d.commit(ctx, t.diff())
}

// enforceLater applies, after delay, whatever set is stored by then, as a
// whole: the fences were acknowledged before they were enforced.
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
	d.stateMu.Lock()
	ps := d.faults.Enforced(d.live.prefixes())
	d.stateMu.Unlock()
	if err := d.backend.Apply(context.Background(), ps); err != nil {
		d.log.Error("fault ack-before-enforce: late apply failed", "err", err)
		return
	}
	d.log.Warn("fault ack-before-enforce: fences enforced late", "delay", delay, "count", len(ps))
}

// applying runs a mutation of the RPC's blocks. The faithful driver runs it
// in the request, which drops it if the client gave up before its turn (see
// runBatch); under late-fence or late-unfence it runs in the background,
// detached from the client, and the request returns when the client gives
// up: the work lands later, behind the client's back. Under ignore-cancel it
// runs in the background too, at once but one block at a time, as a driver
// that sends the storage one command per block and does not stop when its
// client gives up.
func (d *Driver) applying(ctx context.Context, rpc string, blocks []cidr.Block, mutation func(context.Context, []cidr.Block) error) error {
	late, oneByOne := d.faults.Late(rpc), d.faults.OneByOne(rpc)
	if late == 0 && !oneByOne {
		return mutation(ctx, blocks)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(late)
		bg := context.WithoutCancel(ctx)
		if !oneByOne {
			done <- mutation(bg, blocks)
			return
		}
		for _, b := range blocks {
			if err := mutation(bg, []cidr.Block{b}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	}
}
