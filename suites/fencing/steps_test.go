package fencing

import (
	"context"
	"time"

	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// fenceB fences worker B's CIDRs through a NetworkFence CR named name and
// waits for Succeeded; it returns the driver's ack (the FenceClusterNetwork
// return time in the driver log) and records the figures of the fence.
func (c *fcase) fenceB(ctx context.Context, name string, cidrs []string) int64 {
	w := c.w
	t0, err := w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence(name, fencekind.ClassName, fencekind.Fenced, cidrs))
	Expect(err).NotTo(HaveOccurred())
	c.event("NetworkFence %s created: Fenced %v", name, cidrs)
	tOK, _, err := w.fences.WaitResult(ctx, name, fencekind.Succeeded, crTimeout)
	Expect(err).NotTo(HaveOccurred())
	c.event("NetworkFence %s: Succeeded", name)
	c.figure(figSucceeded, "%.2f", tOK.Sub(t0).Seconds())
	c.fenced = append(c.fenced, cidrs...)
	ack := c.ackOf(ctx, "FenceClusterNetwork", cidrs, t0)
	c.event("driver acknowledged FenceClusterNetwork (t_ns %d)", ack)
	return ack
}

// unfence sets a NetworkFence to Unfenced (or, when create, creates a new
// Unfenced one, as after FENCING-006's deletion) and waits for Succeeded;
// returns the driver's UnfenceClusterNetwork start time.
func (c *fcase) unfence(ctx context.Context, name string, cidrs []string, create bool) int64 {
	w := c.w
	t0 := time.Now()
	if create {
		_, err := w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence(name, fencekind.ClassName, fencekind.Unfenced, cidrs))
		Expect(err).NotTo(HaveOccurred())
	} else {
		Expect(w.fences.SetState(ctx, name, fencekind.Unfenced)).To(Succeed())
	}
	c.event("NetworkFence %s: fenceState Unfenced", name)
	eventually(ctx, func(g Gomega) {
		st, err := w.fences.Status(ctx, name)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(st.Result).To(Equal(fencekind.Succeeded))
		g.Expect(st.Message).To(Equal(fencekind.UnfenceOKMessage), "the Succeeded of the unfence, not the earlier fence")
	}, crTimeout)
	c.event("NetworkFence %s: Succeeded (%s)", name, "unfenced")
	var start int64
	eventually(ctx, func(g Gomega) {
		rpcs := fencekind.RPCs(values(w.logs.all(ctx)), "UnfenceClusterNetwork")
		for _, r := range rpcs {
			if r.TNs >= t0.Add(-time.Second).UnixNano() && fencekind.SameSet(r.CIDRs, cidrs) {
				start = r.StartNs
			}
		}
		g.Expect(start).NotTo(BeZero(), "no UnfenceClusterNetwork of %v in the driver log", cidrs)
	}, time.Minute)
	return start
}

// ackOf finds the return time of the driver's rpc for cidrs after t0.
func (c *fcase) ackOf(ctx context.Context, rpc string, cidrs []string, t0 time.Time) int64 {
	var ack int64
	eventually(ctx, func(g Gomega) {
		for _, r := range fencekind.RPCs(values(c.w.logs.all(ctx)), rpc) {
			if r.TNs >= t0.Add(-time.Second).UnixNano() && fencekind.SameSet(r.CIDRs, cidrs) {
				ack = r.TNs
				break
			}
		}
		g.Expect(ack).NotTo(BeZero(), "the driver log has no %s of %v: the RPC did not reach the driver", rpc, cidrs)
	}, time.Minute)
	return ack
}

// checkFenced asserts what a fence of B at ack must give, up to until
// (unix ns; 0 = now): no write from B's CIDRs accepted after the ack (the
// oracle), B's writer refused, A's writer undisturbed; and records figures.
func (c *fcase) checkFenced(ctx context.Context, ack int64, until int64) {
	c.observe(ctx, observeWindow)
	ev := c.collect(ctx)
	if until == 0 {
		until = ev.until
	}
	audit := ev.accepted()
	r := c.oracleRun(ev)
	c.enforcementFigure(r, ack)
	Expect(r.OK()).To(BeTrue(), "oracle: first violation %v", r.First())
	Expect(c.w.bWrites(audit, ack, until)).To(BeEmpty(), "writes from worker B accepted after the ack")

	bID, aID := c.id+"-b", c.id+"-a"
	var lastB, firstRefusal int64
	for _, r := range c.w.bWrites(audit, 0, ack) {
		lastB = max(lastB, r.TNs)
	}
	for _, a := range ev.attempts(bID) {
		if a.Outcome != fencekind.OutcomeOK && a.TNs >= ack && (firstRefusal == 0 || a.TNs < firstRefusal) {
			firstRefusal = a.TNs
		}
	}
	Expect(firstRefusal).NotTo(BeZero(), "worker B's writer %s saw no refusal after the ack: it stopped writing?", bID)
	c.figure(figLastB, "%.1f", float64(ack-lastB)/1e6)
	c.figure(figRefusal, "%.1f", float64(firstRefusal-ack)/1e6)
	c.event("first refusal seen by %s: %+.1f ms after the ack", bID, float64(firstRefusal-ack)/1e6)

	lost, total, reasons := lostWrites(ev.attempts(aID), audit, aID, ack, until)
	c.figure(figLost, "%d of %d", lost, total)
	c.figure("worker A throughput while B fenced (writes/s)", "%.1f", float64(total)/(float64(until-ack)/1e9))
	Expect(lost).To(BeZero(), "worker A's writer %s lost writes: %v", aID, reasons)
	c.saveCaseLogs(ev)
}
