package fencing

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/audit"
	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// ackFault is the driver fault this spec injects: Fence is acknowledged
// before the storage enforces it (driver/fault).
const ackFault = "ack-before-enforce"

// redeployDriver rolls the driver StatefulSet out with faults and waits
// until the new pod is the controller's Connected endpoint; the old pod's
// log is kept first.
func (w *world) redeployDriver(ctx context.Context, faults []string) {
	w.logs.refresh(ctx)
	Expect(w.k.RedeployDriver(ctx, faults)).To(Succeed())
}

var _ = Describe("a driver that acknowledges before it enforces", Ordered, ContinueOnFailure, func() {
	fencingCase("FENCING-008", func(ctx SpecContext, w *world, tc e2e.Case) {
		c := w.newCase(ctx, tc, false)
		// Registered before the redeploy: a redeploy that fails half-way
		// must not leave the faulty driver to the cases after this one.
		DeferCleanup(func(ctx SpecContext) { w.redeployDriver(ctx, nil) }, NodeTimeout(10*time.Minute))
		w.redeployDriver(ctx, []string{ackFault})
		c.event("driver redeployed with --fault=%s (lease holder %s)", ackFault, w.k.LeaseHolder(ctx))
		c.startWriters(ctx, map[string]string{c.id + "-a": w.a, c.id + "-b": w.b})

		name := "fenceproof-" + c.id
		DeferCleanup(func(ctx SpecContext) { _ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout) })
		ack := c.fenceB(ctx, name, w.bCIDRs)
		c.observe(ctx, observeWindow)
		ev := c.collect(ctx)
		r := c.oracleRun(ev)
		c.unfence(ctx, name, w.bCIDRs, false)

		if *flagAckFault == "fail" {
			Expect(r.OK()).To(BeTrue(), "oracle: first violation %v", r.First())
			return
		}
		// The exact offending write: the first audit record from B's CIDRs
		// after the ack, found by a plain scan of the audit log.
		var want *fencekind.Accepted
		for _, rec := range fencekind.ParseLines[fencekind.Accepted](auditSince(ev.audit, c.start.UnixNano())) {
			if rec.TNs > ack && fencekind.InPrefixes(rec.Addr, w.bCIDRs) && (want == nil || rec.TNs < want.TNs) {
				rec := rec
				want = &rec
			}
		}
		Expect(want).NotTo(BeNil(), "the faulty driver let no write of B through after the ack: the fault did not bite (writers too slow?)")
		Expect(r.OK()).To(BeFalse(), "the oracle passed a driver that acknowledges before it enforces")
		v := r.First()
		Expect(v.Kind).To(Equal(audit.KindWriteAfterFence))
		Expect([]any{v.Client, v.Addr, v.Seq, v.TNs}).To(Equal([]any{want.Client, want.Addr, want.Seq, want.TNs}),
			"the oracle's first violation is not the first write of B after the ack")
		Expect(slices.Contains([]string{c.id + "-b"}, v.Client)).To(BeTrue())
		c.figure("first offending write (oracle)", "%s", v.String())
		c.figure("offending write after the ack (ms)", "%.1f", v.DeltaMs)
		c.event("oracle named the offending write: client %s addr %s seq %d, %.1f ms after the ack", v.Client, v.Addr, v.Seq, v.DeltaMs)
		c.saveCaseLogs(ev)
	}, SpecTimeout(12*time.Minute))
})
