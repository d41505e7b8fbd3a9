package driver

import (
	"context"
	"errors"
	"time"

	"github.com/fenceproof/fenceproof/driver/backend"
)

// DefaultReconcileInterval is how often enforcement is compared with the
// store when Options.ReconcileInterval is 0: the bound on how long drift
// (a deleted table, an edited set) can last.
const DefaultReconcileInterval = 5 * time.Second

// probeVerifyEvery rate-limits the verification Probe runs.
const probeVerifyEvery = time.Second

// startReconciler runs reconcile every interval until Stop, when the backend
// can verify itself.
func (d *Driver) startReconciler() {
	v, ok := d.backend.(backend.Verifier)
	every := d.o.ReconcileInterval
	if every == 0 {
		every = DefaultReconcileInterval
	}
	if !ok || every < 0 {
		return
	}
	d.stopLoop, d.loopDone, d.kick = make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
	go func() {
		defer close(d.loopDone)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-d.stopLoop:
				return
			case <-t.C:
				d.reconcile(v)
			case <-d.kick:
				d.reconcile(v)
			}
		}
	}()
}

// reconcile verifies enforcement and restores it from the store when it
// drifted. Probe answers not ready from the moment drift is seen until it is
// repaired; enforcement owned by another instance is reported, not taken.
func (d *Driver) reconcile(v backend.Verifier) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := v.Verify(ctx)
	if err == nil {
		d.setReady("")
		return
	}
	d.setReady(err.Error())
	if errors.Is(err, backend.ErrForeign) {
		return
	}
	d.log.Warn("enforcement drifted from the store; restoring it", "drift", err.Error())
	d.stateMu.RLock()
	ps := d.faults.Enforced(d.live.prefixes())
	d.stateMu.RUnlock()
	if err := d.backend.Apply(ctx, ps); err != nil {
		d.log.Error("restoring enforcement failed; will retry", "err", err)
		d.setReady("restore failed: " + err.Error())
		return
	}
	d.log.Info("enforcement restored", "fences", len(ps))
	d.setReady("")
}

// probeVerify is Probe's check: it verifies enforcement now, so Probe says
// not ready as soon as drift exists rather than at the next tick, and wakes
// the reconciler to repair it.
//
// Verify reads every set element back, so with a large set it is not free:
// Probe verifies at most once per probeVerifyEvery and answers from the
// last result in between.
func (d *Driver) probeVerify(ctx context.Context) {
	v, ok := d.backend.(backend.Verifier)
	if !ok || d.kick == nil {
		return
	}
	d.mu.Lock()
	if time.Since(d.lastProbeVerify) < probeVerifyEvery {
		d.mu.Unlock()
		return
	}
	err := v.Verify(ctx)
	d.lastProbeVerify = time.Now()
	d.mu.Unlock()
	if err == nil {
		d.setReady("")
		return
	}
	d.setReady(err.Error())
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// setReady records why the driver is not ready ("" = ready), logging changes.
func (d *Driver) setReady(reason string) {
	prev := d.notReady.Load()
	switch {
	case reason == "" && prev != nil:
		d.notReady.Store(nil)
		d.log.Info("ready again: enforcement equals the store")
	case reason != "" && (prev == nil || *prev != reason):
		d.notReady.Store(&reason)
		d.log.Warn("not ready: enforcement differs from the store", "reason", reason)
	}
}

// Ready reports whether enforcement is known to equal the store, and why not.
func (d *Driver) Ready() (bool, string) {
	if r := d.notReady.Load(); r != nil {
		return false, *r
	}
	return true, ""
}
