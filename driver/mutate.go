package driver

import (
	"context"
	"errors"
	"maps"
	"net/netip"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/driver/store"
)

// txn is a change to the fence set, staged over a read-only base: only the
// keys it touches are copied, so a mutation costs what it changes.
type txn struct {
	parent *txn     // a batch's combined txn, or nil
	base   fenceSet // read-only; used when parent is nil
	put    fenceSet
	del    map[cidr.Block]bool
	seq    uint64
}

func newTxn(base fenceSet, maxSeq uint64) *txn {
	return &txn{base: base, put: fenceSet{}, del: map[cidr.Block]bool{}, seq: maxSeq}
}

// child stages one request of a batch on top of t.
func (t *txn) child() *txn {
	return &txn{parent: t, put: fenceSet{}, del: map[cidr.Block]bool{}, seq: t.seq}
}

// merge folds a child's edits into t.
func (t *txn) merge(c *txn) {
	for k := range c.del {
		t.remove(k)
	}
	for k, e := range c.put {
		t.set(k, e)
	}
	t.seq = c.seq
}

// below reads what t is staged on.
func (t *txn) below(k cidr.Block) (store.Entry, bool) {
	if t.parent != nil {
		return t.parent.get(k)
	}
	e, ok := t.base[k]
	return e, ok
}

func (t *txn) get(k cidr.Block) (store.Entry, bool) {
	if t.del[k] {
		return store.Entry{}, false
	}
	if e, ok := t.put[k]; ok {
		return e, true
	}
	return t.below(k)
}

func (t *txn) set(k cidr.Block, e store.Entry) { delete(t.del, k); t.put[k] = e }

func (t *txn) remove(k cidr.Block) {
	delete(t.put, k)
	if _, ok := t.below(k); ok {
		t.del[k] = true
	}
}

func (t *txn) nextSeq() uint64 { t.seq++; return t.seq }

// The fence set as the fault hooks see it (fault.Fences).

// Has reports whether the txn holds the block.
func (t *txn) Has(k cidr.Block) bool { _, ok := t.get(k); return ok }

// Remove removes the block.
func (t *txn) Remove(k cidr.Block) { t.remove(k) }

// Blocks lists every block the txn sees: the whole set, for fault hooks
// only.
func (t *txn) Blocks() []cidr.Block {
	var src []cidr.Block
	if t.parent != nil {
		src = t.parent.Blocks()
	} else {
		for k := range t.base {
			src = append(src, k)
		}
	}
	var out []cidr.Block
	for _, k := range src {
		if !t.del[k] {
			if _, ok := t.put[k]; !ok {
				out = append(out, k)
			}
		}
	}
	for k := range t.put {
		out = append(out, k)
	}
	return out
}

// diff is what a txn changes relative to its base: records to write, keys
// to delete, and the prefixes that enter and leave the set.
type diff struct {
	put        fenceSet
	del        []cidr.Block
	add, unset []netip.Prefix
}

func (t *txn) diff() diff {
	var d diff
	d.put = fenceSet{}
	for k, e := range t.put {
		old, ok := t.base[k]
		if ok && old == e {
			continue
		}
		d.put[k] = e
		if !ok && k.Enforced() {
			d.add = append(d.add, k.Prefix)
		}
	}
	for k := range t.del {
		d.del = append(d.del, k)
		if k.Enforced() {
			d.unset = append(d.unset, k.Prefix)
		}
	}
	return d
}

func (d diff) empty() bool { return len(d.put) == 0 && len(d.del) == 0 }

// inverse undoes d on base.
func (d diff) inverse(base fenceSet) (put fenceSet, del []cidr.Block) {
	put = fenceSet{}
	for k := range d.put {
		if e, ok := base[k]; ok {
			put[k] = e
		} else {
			del = append(del, k)
		}
	}
	for _, k := range d.del {
		put[k] = base[k]
	}
	return put, del
}

// mutate applies change to the fence set: serialised, committed to the store
// before the backend, rolled back in the store if the backend fails (see the
// package comment). change stages its edits on a txn, or returns a status
// error, in which case nothing happens. The cost is that of the change: the
// store writes the touched records, an Incremental backend gets the
// prefixes that entered and left the set.
func (d *Driver) mutate(ctx context.Context, size int, change func(*txn) error) error {
	switch d.faults.Mutate() {
	case fault.Racy:
		return d.mutateRacy(ctx, change)
	case fault.FailOnContention:
		return d.mutateOrFail(ctx, change)
	}
	return d.mutateBatched(ctx, size, change)
}

// mreq is one mutation waiting for a batch.
type mreq struct {
	ctx      context.Context // the request's: a mutation its client gave up on is not applied
	change   func(*txn) error
	size     int       // CIDRs it names
	deadline time.Time // the caller's deadline; zero if none
	done     chan error
}

// DefaultMaxBatchCIDRs bounds the CIDRs one group commit carries (a request
// naming more is committed alone): 64 concurrent requests of ~50k CIDRs
// each (the 1 MiB bound) must not become one 3M-element nftables
// transaction that fails all 64 when each alone would pass.
const DefaultMaxBatchCIDRs = 1 << 16

// takeBatch removes from the front of q the requests of the next batch: at
// least one, then as many as fit in limit CIDRs, in arrival order.
func takeBatch(q *[]*mreq, limit int) []*mreq {
	n, total := 0, 0
	for n < len(*q) && (n == 0 || total+(*q)[n].size <= limit) {
		total += (*q)[n].size
		n++
	}
	batch := (*q)[:n:n]
	*q = (*q)[n:]
	return batch
}

// mutateBatched is group commit: a mutation queues itself, and whoever
// holds d.mu next runs the queued mutations in order on one combined txn
// and commits them with one store transaction and one backend change
// (batches of at most d.maxBatchCIDRs CIDRs; the leader commits batch
// after batch until its own is done). Each mutation sees the ones before
// it, exactly as if serialised; one whose change fails is left out; a
// failed commit fails the batch. Under concurrent clients this amortises
// the fsync and the netlink batch.
func (d *Driver) mutateBatched(ctx context.Context, size int, change func(*txn) error) error {
	r := &mreq{ctx: ctx, change: change, size: size, done: make(chan error, 1)}
	r.deadline, _ = ctx.Deadline()
	d.qmu.Lock()
	d.queue = append(d.queue, r)
	d.qmu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		select {
		case err := <-r.done: // committed, by an earlier leader or by us
			return err
		default:
		}
		d.qmu.Lock()
		batch := takeBatch(&d.queue, d.maxBatchCIDRs)
		d.qmu.Unlock()
		d.runBatch(ctx, batch)
	}
}

// runBatch stages and commits one batch; d.mu is held. Every request of
// the batch is answered exactly once, even if a change panics (the others
// then get INTERNAL), so no waiter is left blocked.
func (d *Driver) runBatch(ctx context.Context, batch []*mreq) {
	answered := 0
	defer func() {
		if p := recover(); p != nil {
			for _, m := range batch[answered:] {
				m.done <- status.Error(codes.Internal, "the batch this request was committed in failed internally (see the driver log)")
			}
			panic(p)
		}
	}()
	combined := newTxn(d.live, d.maxSeq)
	ok := make([]bool, len(batch))
	errs := make([]error, len(batch))
	for i, m := range batch {
		// A mutation whose client gave up (deadline, cancel) before its
		// turn is dropped, never applied late: the client may already have
		// sent the request that follows it (an Unfence after an abandoned
		// Fence), and that one must not be overtaken.
		if err := m.ctx.Err(); err != nil {
			errs[i] = status.FromContextError(err).Err()
			continue
		}
		c := combined.child()
		if errs[i] = m.change(c); errs[i] == nil {
			combined.merge(c)
			ok[i] = true
		}
	}
	if n := int64(len(batch)); n > d.maxBatch.Load() {
		d.maxBatch.Store(n)
	}
	cidrs := 0
	for _, m := range batch {
		cidrs += m.size
	}
	if len(batch) > 1 && int64(cidrs) > d.maxBatchSize.Load() {
		d.maxBatchSize.Store(int64(cidrs))
	}
	cctx, cancel := batchContext(ctx, batch)
	err := d.commit(cctx, combined.diff())
	cancel()
	for i, m := range batch {
		if ok[i] {
			errs[i] = err
		}
		m.done <- errs[i]
		answered++
	}
}

// batchContext is the context a batch commits under: not cancelled with
// the leader's request (the batch carries others), but bounded by the
// earliest deadline among its requests, so a slow backend (a Ceph mon)
// never applies a change after one of its callers gave up: the batch
// fails and is rolled back instead.
func batchContext(ctx context.Context, batch []*mreq) (context.Context, context.CancelFunc) {
	var first time.Time
	for _, m := range batch {
		if !m.deadline.IsZero() && (first.IsZero() || m.deadline.Before(first)) {
			first = m.deadline
		}
	}
	if first.IsZero() {
		return context.WithoutCancel(ctx), func() {}
	}
	return context.WithDeadline(context.WithoutCancel(ctx), first)
}

// commit writes a diff to the store, then the backend, then the in-memory
// set. d.mu is held.
func (d *Driver) commit(ctx context.Context, df diff) error {
	if df.empty() {
		return nil
	}
	if err := d.store.Update(df.put.records(), blockKeys(df.del)); err != nil {
		return status.Errorf(codes.Unknown, "commit to state store failed, nothing changed: %v", err)
	}
	if delay := d.faults.EnforceDelay(); delay > 0 && len(df.add) > 0 {
		d.setLive(df)
		go d.enforceLater(delay)
		return nil
	}
	if err := d.enforce(ctx, df); err != nil {
		put, del := df.inverse(d.live)
		if rerr := d.store.Update(put.records(), blockKeys(del)); rerr != nil {
			d.log.Error("store rollback failed; store is ahead of enforcement until the next change or restart", "err", rerr)
			return status.Errorf(codes.Unknown, "backend update failed (%v) and store rollback failed (%v)", err, rerr)
		}
		return status.Errorf(backendCode(err), "backend update failed, nothing changed: %v", err)
	}
	d.setLive(df)
	return nil
}

// backendCode is the gRPC code of a backend failure: DEADLINE_EXCEEDED or
// CANCELLED when the request's time ran out or its client gave up (a
// backend may refuse to start what it cannot finish in time), UNKNOWN
// otherwise.
func backendCode(err error) codes.Code {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Unknown
}

// setLive makes the in-memory fence set follow a committed diff.
func (d *Driver) setLive(df diff) {
	d.stateMu.Lock()
	for _, k := range df.del {
		delete(d.live, k)
	}
	for k, e := range df.put {
		d.live[k] = e
		d.maxSeq = max(d.maxSeq, e.Seq)
	}
	d.sorted = nil
	d.stateMu.Unlock()
}

// enforce hands a diff to the backend: as a Change when it is incremental,
// else as the whole next set.
func (d *Driver) enforce(ctx context.Context, df diff) error {
	if len(df.add) == 0 && len(df.unset) == 0 {
		return nil
	}
	if inc, ok := d.backend.(backend.Incremental); ok {
		return inc.Change(ctx, d.faults.Enforced(df.add), d.faults.Enforced(df.unset))
	}
	next := maps.Clone(d.live)
	for _, k := range df.del {
		delete(next, k)
	}
	for k, e := range df.put {
		next[k] = e
	}
	return d.backend.Apply(ctx, d.faults.Enforced(next.prefixes()))
}
