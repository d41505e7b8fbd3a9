package fencing

import (
	"context"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// fenceB fences worker B's CIDRs through a NetworkFence CR named name and
// waits for Succeeded; it returns the driver's ack (the FenceClusterNetwork
// return time in the driver log) and records the figures of the fence.
func (c *fcase) fenceB(ctx context.Context, name string, cidrs []string) int64 {
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
// Unfenced one, as after case 6's deletion) and waits for Succeeded;
// returns the driver's UnfenceClusterNetwork start time.
func (c *fcase) unfence(ctx context.Context, name string, cidrs []string, create bool) int64 {
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
		for _, r := range fencekind.RPCs(values(w.logs.all(ctx)), rpc) {
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
	Expect(bWrites(audit, ack, until)).To(BeEmpty(), "writes from worker B accepted after the ack")

	bID, aID := c.id+"-b", c.id+"-a"
	var lastB, firstRefusal int64
	for _, r := range bWrites(audit, 0, ack) {
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

var _ = Describe("fencing through csi-addons", Ordered, ContinueOnFailure, func() {
	It("1. fence through a NetworkFence CR: no write from worker B accepted after the ack, worker A undisturbed, CR Succeeded", func(ctx SpecContext) {
		c := newCase(ctx, "c1", "1. fence via NetworkFence CR", true)
		name := "fenceproof-c1"
		DeferCleanup(func(ctx SpecContext) { _ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout) })
		ack := c.fenceB(ctx, name, w.bCIDRs)
		c.checkFenced(ctx, ack, 0)
		c.unfence(ctx, name, w.bCIDRs, false)
	}, SpecTimeout(8*time.Minute))

	It("2. unfence (fenceState Unfenced): worker B is served again, the audit shows the gap and the resumption", func(ctx SpecContext) {
		c := newCase(ctx, "c2", "2. unfence", true)
		ack := c.fenceB(ctx, "fenceproof-c2", w.bCIDRs)
		c.checkFenced(ctx, ack, 0)
		un := c.unfence(ctx, "fenceproof-c2", w.bCIDRs, false)
		bID := c.id + "-b"
		var resumed int64
		eventually(ctx, func(g Gomega) {
			for _, r := range bWrites(fencekind.ParseLines[fencekind.Accepted](auditLog(ctx)), un, 0) {
				if r.Client == bID {
					resumed = r.TNs
					return
				}
			}
			g.Expect(resumed).NotTo(BeZero(), "worker B's writer is not served after the unfence")
		}, time.Minute)
		audit := fencekind.ParseLines[fencekind.Accepted](auditLog(ctx))
		var lastBefore int64
		for _, r := range bWrites(audit, 0, ack) {
			if r.Client == bID {
				lastBefore = max(lastBefore, r.TNs)
			}
		}
		Expect(bWrites(audit, ack, un)).To(BeEmpty(), "B written while fenced")
		c.event("B's first accepted write after the unfence: %+.1f ms after the unfence started", float64(resumed-un)/1e6)
		c.figure("gap in B's accepted writes (s)", "%.2f (last %d ns, next %d ns)", float64(resumed-lastBefore)/1e9, lastBefore, resumed)
		c.figure("unfence start → B served again (ms)", "%.1f", float64(resumed-un)/1e6)
		Expect(w.fences.Delete(ctx, fencekind.NetworkFenceGVR, "fenceproof-c2", crTimeout)).To(Succeed())
		c.saveCaseLogs(c.collect(ctx))
	}, SpecTimeout(8*time.Minute))

	It("3. the driver pod is deleted while worker B is fenced: B stays fenced throughout and after it returns", func(ctx SpecContext) {
		c := newCase(ctx, "c3", "3. driver pod deleted while fenced", true)
		name := "fenceproof-c3"
		DeferCleanup(func(ctx SpecContext) { _ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout) })
		ack := c.fenceB(ctx, name, w.bCIDRs)
		pods, err := w.k.DriverPods(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(pods).To(HaveLen(1))
		old := pods[0]
		w.logs.refresh(ctx)
		Expect(w.k.CS.CoreV1().Pods(fencekind.StorageNamespace).Delete(ctx, old.Name, metav1.DeleteOptions{})).To(Succeed())
		c.event("driver pod %s (uid %s) deleted", old.Name, old.UID)
		Expect(w.k.WaitConnected(ctx, old.UID, 4*time.Minute)).To(Succeed())
		Expect(w.k.WaitStatefulSet(ctx, fencekind.StorageNamespace, fencekind.DriverName, 3*time.Minute)).To(Succeed())
		c.event("replacement driver pod Connected to the controller (lease holder %s)", w.k.LeaseHolder(ctx))
		c.checkFenced(ctx, ack, 0)
		// The replacement driver serves the CR: unfence through it.
		un := c.unfence(ctx, name, w.bCIDRs, false)
		eventually(ctx, func(g Gomega) {
			g.Expect(bWrites(fencekind.ParseLines[fencekind.Accepted](auditLog(ctx)), un, 0)).NotTo(BeEmpty(), "B not served after the unfence")
		}, time.Minute)
		c.event("worker B served again after the unfence through the replacement driver")
	}, SpecTimeout(12*time.Minute))

	It("4. GetFenceClients through the NetworkFenceClass: the CSIAddonsNode lists the clients, and fencing exactly worker B's clients cuts them off", func(ctx SpecContext) {
		c := newCase(ctx, "c4", "4. GetFenceClients → fence those clients", true)
		bID := c.id + "-b"
		bPod, err := w.k.CS.CoreV1().Pods(c.ns).Get(ctx, bID, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		// refstore knows its clients by the id they give; Ceph by user and
		// address (one user for every writer): client.writer@<pod IP>.
		bClient := bID
		if w.spec.Storage == fencekind.StorageCeph {
			bClient = "client." + fencekind.CephWriterUser + "@" + bPod.Status.PodIP
		}
		var clients []fencekind.ClientDetail
		eventually(ctx, func(g Gomega) {
			// v0.14.0 refreshes the client list only on an annotation change.
			g.Expect(w.fences.RefreshCSIAddonsNodes(ctx, fencekind.StorageNamespace)).To(Succeed())
			var err error
			clients, err = w.fences.FenceClients(ctx, fencekind.StorageNamespace, fencekind.ClassName)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(clients).To(ContainElement(HaveField("ID", bClient)), "CSIAddonsNode status lists no client %s", bClient)
		}, 2*time.Minute)
		var cidrs []string
		for _, cl := range clients {
			c.event("CSIAddonsNode lists client %s %v", cl.ID, cl.CIDRs)
			for _, cidr := range cl.CIDRs {
				if fencekind.InPrefixes(strings.Split(cidr, "/")[0], w.bCIDRs) && !slices.Contains(cidrs, cidr) {
					cidrs = append(cidrs, cidr)
				}
			}
		}
		Expect(cidrs).To(ContainElement(bPod.Status.PodIP+"/32"), "the clients on worker B include %s's pod IP", bID)
		name := "fenceproof-c4"
		DeferCleanup(func(ctx SpecContext) { _ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout) })
		ack := c.fenceB(ctx, name, cidrs)
		c.checkFenced(ctx, ack, 0)
		c.unfence(ctx, name, cidrs, false)
	}, SpecTimeout(8*time.Minute))

	It("5. bad input through the CR: a malformed CIDR, a missing secret, an unknown class give a clear result, nothing fenced, nothing lost", func(ctx SpecContext) {
		c := newCase(ctx, "c5", "5. bad input", true)
		t0 := time.Now()
		missing := "fenceproof-missing-secret"
		DeferCleanup(func(ctx SpecContext) {
			for _, n := range []string{"fenceproof-c5-cidr", "fenceproof-c5-secret", "fenceproof-c5-class"} {
				_ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, n, crTimeout)
				_ = w.fences.RemoveFinalizers(ctx, fencekind.NetworkFenceGVR, n)
			}
			// The controller must drop the broken class from the
			// CSIAddonsNode when it goes, or no later driver pod could
			// be connected (see README, csi-addons behaviours).
			Expect(w.fences.Delete(ctx, fencekind.NetworkFenceClassGVR, missing, crTimeout)).To(Succeed())
			eventually(ctx, func(g Gomega) {
				on, err := w.fences.ClassOnNodes(ctx, fencekind.StorageNamespace, missing)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(on).To(BeFalse(), "the CSIAddonsNode still lists the deleted class %s", missing)
			}, crTimeout)
		}, NodeTimeout(6*time.Minute))
		_, err := w.fences.Create(ctx, fencekind.NetworkFenceClassGVR, fencekind.Class(missing, "no-such-secret", fencekind.StorageNamespace))
		Expect(err).NotTo(HaveOccurred())

		// A malformed CIDR (the CRD accepts any string): the driver answers
		// InvalidArgument and the controller reports Failed with its message.
		_, err = w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence("fenceproof-c5-cidr", fencekind.ClassName, fencekind.Fenced, []string{"100.64.0.7:0"}))
		Expect(err).NotTo(HaveOccurred())
		st := c.waitResult(ctx, "fenceproof-c5-cidr", fencekind.Failed)
		Expect(st.Message).To(And(ContainSubstring("InvalidArgument"), ContainSubstring("100.64.0.7:0")))
		c.figure("malformed CIDR: status", "%s: %s", st.Result, st.Message)

		// A class naming a secret that does not exist: the sidecar cannot
		// read it and answers InvalidArgument; Failed, naming the secret.
		_, err = w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence("fenceproof-c5-secret", missing, fencekind.Fenced, w.bCIDRs))
		Expect(err).NotTo(HaveOccurred())
		st = c.waitResult(ctx, "fenceproof-c5-secret", fencekind.Failed)
		Expect(st.Message).To(ContainSubstring("no-such-secret"))
		c.figure("missing secret: status", "%s: %s", st.Result, st.Message)

		// An unknown class: csi-addons v0.14.0 returns the lookup error from
		// Reconcile before it writes any status (networkfence_controller.go,
		// getNetworkFenceInstance), so the CR keeps an empty result while
		// the controller retries with backoff. That is the behaviour tested.
		_, err = w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence("fenceproof-c5-class", "no-such-class", fencekind.Fenced, w.bCIDRs))
		Expect(err).NotTo(HaveOccurred())
		c.event("NetworkFence fenceproof-c5-class created with class no-such-class")
		Consistently(func(g Gomega) {
			st, err := w.fences.Status(ctx, "fenceproof-c5-class")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(st.Result).To(BeEmpty())
			g.Expect(st.Finalizers).To(BeEmpty(), "the controller never got past the class lookup")
		}).WithContext(ctx).WithTimeout(6 * time.Second).WithPolling(time.Second).Should(Succeed())
		c.figure("unknown class: status", "no result (v0.14.0 writes none; the controller retries)")

		// Nothing fenced: no FenceClusterNetwork succeeded, both writers
		// served (they wrote all along, the window above included).
		ev := c.collect(ctx)
		for _, r := range fencekind.RPCs(values(ev.drivers), "FenceClusterNetwork") {
			Expect(r.TNs).To(BeNumerically("<", t0.UnixNano()), "a FenceClusterNetwork succeeded during the bad-input case: %v", r.CIDRs)
		}
		audit := ev.accepted()
		for _, id := range []string{c.id + "-a", c.id + "-b"} {
			lost, total, reasons := lostWrites(ev.attempts(id), audit, id, t0.UnixNano(), ev.until)
			c.figure("writes lost by "+id, "%d of %d", lost, total)
			Expect(lost).To(BeZero(), "%s lost writes: %v", id, reasons)
		}
		c.saveCaseLogs(ev)
	}, SpecTimeout(8*time.Minute))

	It("6. deleting a fenced CR: csi-addons v0.14.0 removes its finalizer without an unfence, so worker B stays fenced", func(ctx SpecContext) {
		// networkfence_controller.go (v0.14.0), Reconcile: when the CR has a
		// deletion timestamp it only removes the finalizer
		// csiaddons.openshift.io/network-fence and returns; no
		// UnfenceClusterNetwork is sent. The fence outlives its CR; an
		// operator must unfence with an Unfenced CR before deleting.
		c := newCase(ctx, "c6", "6. delete a fenced CR", true)
		name := "fenceproof-c6"
		ack := c.fenceB(ctx, name, w.bCIDRs)
		st, err := w.fences.Status(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Finalizers).To(ContainElement(fencekind.Finalizer))
		tDel := time.Now()
		Expect(w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout)).To(Succeed())
		c.event("NetworkFence %s deleted; gone (finalizer removed by the controller)", name)
		c.checkFenced(ctx, ack, 0)
		for _, r := range fencekind.RPCs(values(w.logs.all(ctx)), "UnfenceClusterNetwork") {
			Expect(r.StartNs).To(BeNumerically("<", tDel.UnixNano()), "an UnfenceClusterNetwork reached the driver after the CR was deleted: %v", r.CIDRs)
		}
		c.figure("UnfenceClusterNetwork calls caused by the deletion", "0")
		un := c.unfence(ctx, name+"-unfence", w.bCIDRs, true)
		DeferCleanup(func(ctx SpecContext) { _ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name+"-unfence", crTimeout) })
		eventually(ctx, func(g Gomega) {
			g.Expect(bWrites(fencekind.ParseLines[fencekind.Accepted](auditLog(ctx)), un, 0)).NotTo(BeEmpty(), "B not served after the explicit unfence")
		}, time.Minute)
		c.event("worker B served again after an explicit Unfenced CR")
	}, SpecTimeout(8*time.Minute))
})
