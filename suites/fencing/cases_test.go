package fencing

import (
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// fencingCases is the suite's case table. Its IDs are stable: reports,
// CI history and -ginkgo.focus=FENCING-003 refer to them, and a removed
// case's ID is never reused. TestCaseTable checks it against the specs.
var fencingCases = e2e.Cases{Suite: "fencing", Prefix: "FENCING", List: []e2e.Case{
	{ID: "FENCING-001", Area: "fence", Cluster: e2e.Shared,
		Title: "fence through a NetworkFence CR: no write from worker B accepted after the ack, worker A undisturbed, CR Succeeded"},
	{ID: "FENCING-002", Area: "unfence", Cluster: e2e.Shared,
		Title: "unfence (fenceState Unfenced): worker B is served again, the audit shows the gap and the resumption"},
	{ID: "FENCING-003", Area: "driver-restart", Cluster: e2e.Shared,
		Title: "the driver pod is deleted while worker B is fenced: B stays fenced throughout and after it returns"},
	{ID: "FENCING-004", Area: "fence-clients", Cluster: e2e.Shared,
		Title: "GetFenceClients through the NetworkFenceClass: the CSIAddonsNode lists the clients, and fencing exactly worker B's clients cuts them off"},
	{ID: "FENCING-005", Area: "bad-input", Cluster: e2e.Shared,
		Title: "bad input through the CR: a malformed CIDR, a missing secret, an unknown class give a clear result, nothing fenced, nothing lost"},
	{ID: "FENCING-006", Area: "cr-deletion", Cluster: e2e.Shared,
		Title: "deleting a fenced CR: csi-addons v0.14.0 removes its finalizer without an unfence, so worker B stays fenced"},
	{ID: "FENCING-007", Area: "rehearsal", Cluster: e2e.Exclusive,
		Title: "DR rehearsal: worker B cut off, fenced through the CR, declared out of service; its StatefulSet writer moves, and the stale writer never gets a write accepted after the ack"},
	{ID: "FENCING-008", Area: "driver-fault", Cluster: e2e.Shared,
		Title: "ack-before-enforce: the oracle fails and names the exact offending write of worker B"},
}}

// fencingCase registers the case id as a spec whose body gets the deployed
// world (the cluster, the controller and the storage with its driver) and
// the case's declaration: the world is a parameter, so the same body runs
// on every storage. decorators follow the body (SpecTimeout).
func fencingCase(id string, body func(ctx SpecContext, w *world, tc e2e.Case), decorators ...any) bool {
	tc := fencingCases.Case(id)
	args := append([]any{Label(fencingCases.Labels(tc)...), Offset(1), func(ctx SpecContext) { body(ctx, deployed, tc) }}, decorators...)
	return It(tc.Text(), args...)
}

// The cases through csi-addons run in this order; the fault case
// (fault_test.go) and the rehearsal (rehearsal_test.go) are containers of
// their own, which Ginkgo orders at random with this one (-ginkgo.seed
// replays an order). Each case creates its namespace, writers and fences
// itself and registers their cleanup beside them.
var _ = Describe("fencing through csi-addons", Ordered, ContinueOnFailure, func() {
	fencingCase("FENCING-001", func(ctx SpecContext, w *world, tc e2e.Case) {
		c := w.newCase(ctx, tc, true)
		name := "fenceproof-" + c.id
		DeferCleanup(func(ctx SpecContext) { _ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout) })
		ack := c.fenceB(ctx, name, w.bCIDRs)
		c.checkFenced(ctx, ack, 0)
		c.unfence(ctx, name, w.bCIDRs, false)
	}, SpecTimeout(8*time.Minute))

	fencingCase("FENCING-002", func(ctx SpecContext, w *world, tc e2e.Case) {
		c := w.newCase(ctx, tc, true)
		name := "fenceproof-" + c.id
		ack := c.fenceB(ctx, name, w.bCIDRs)
		c.checkFenced(ctx, ack, 0)
		un := c.unfence(ctx, name, w.bCIDRs, false)
		bID := c.id + "-b"
		var resumed int64
		eventually(ctx, func(g Gomega) {
			for _, r := range w.bWrites(fencekind.ParseLines[fencekind.Accepted](w.auditLog(ctx)), un, 0) {
				if r.Client == bID {
					resumed = r.TNs
					return
				}
			}
			g.Expect(resumed).NotTo(BeZero(), "worker B's writer is not served after the unfence")
		}, time.Minute)
		audit := fencekind.ParseLines[fencekind.Accepted](w.auditLog(ctx))
		var lastBefore int64
		for _, r := range w.bWrites(audit, 0, ack) {
			if r.Client == bID {
				lastBefore = max(lastBefore, r.TNs)
			}
		}
		Expect(w.bWrites(audit, ack, un)).To(BeEmpty(), "B written while fenced")
		c.event("B's first accepted write after the unfence: %+.1f ms after the unfence started", float64(resumed-un)/1e6)
		c.figure("gap in B's accepted writes (s)", "%.2f (last %d ns, next %d ns)", float64(resumed-lastBefore)/1e9, lastBefore, resumed)
		c.figure("unfence start → B served again (ms)", "%.1f", float64(resumed-un)/1e6)
		Expect(w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout)).To(Succeed())
		c.saveCaseLogs(c.collect(ctx))
	}, SpecTimeout(8*time.Minute))

	fencingCase("FENCING-003", func(ctx SpecContext, w *world, tc e2e.Case) {
		c := w.newCase(ctx, tc, true)
		name := "fenceproof-" + c.id
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
			g.Expect(w.bWrites(fencekind.ParseLines[fencekind.Accepted](w.auditLog(ctx)), un, 0)).NotTo(BeEmpty(), "B not served after the unfence")
		}, time.Minute)
		c.event("worker B served again after the unfence through the replacement driver")
	}, SpecTimeout(12*time.Minute))

	fencingCase("FENCING-004", func(ctx SpecContext, w *world, tc e2e.Case) {
		c := w.newCase(ctx, tc, true)
		bID := c.id + "-b"
		bPod, err := w.k.CS.CoreV1().Pods(c.ns).Get(ctx, bID, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		bClient := w.store.clientID(bID, bPod.Status.PodIP)
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
		name := "fenceproof-" + c.id
		DeferCleanup(func(ctx SpecContext) { _ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout) })
		ack := c.fenceB(ctx, name, cidrs)
		c.checkFenced(ctx, ack, 0)
		c.unfence(ctx, name, cidrs, false)
	}, SpecTimeout(8*time.Minute))

	fencingCase("FENCING-005", func(ctx SpecContext, w *world, tc e2e.Case) {
		c := w.newCase(ctx, tc, true)
		t0 := time.Now()
		missing := "fenceproof-missing-secret"
		badCIDR, badSecret, badClass := "fenceproof-"+c.id+"-cidr", "fenceproof-"+c.id+"-secret", "fenceproof-"+c.id+"-class"
		DeferCleanup(func(ctx SpecContext) {
			for _, n := range []string{badCIDR, badSecret, badClass} {
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
		_, err = w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence(badCIDR, fencekind.ClassName, fencekind.Fenced, []string{"100.64.0.7:0"}))
		Expect(err).NotTo(HaveOccurred())
		st := c.waitResult(ctx, badCIDR, fencekind.Failed)
		Expect(st.Message).To(And(ContainSubstring("InvalidArgument"), ContainSubstring("100.64.0.7:0")))
		c.figure("malformed CIDR: status", "%s: %s", st.Result, st.Message)

		// A class naming a secret that does not exist: the sidecar cannot
		// read it and answers InvalidArgument; Failed, naming the secret.
		_, err = w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence(badSecret, missing, fencekind.Fenced, w.bCIDRs))
		Expect(err).NotTo(HaveOccurred())
		st = c.waitResult(ctx, badSecret, fencekind.Failed)
		Expect(st.Message).To(ContainSubstring("no-such-secret"))
		c.figure("missing secret: status", "%s: %s", st.Result, st.Message)

		// An unknown class: csi-addons v0.14.0 returns the lookup error from
		// Reconcile before it writes any status (networkfence_controller.go,
		// getNetworkFenceInstance), so the CR keeps an empty result while
		// the controller retries with backoff. That is the behaviour tested.
		_, err = w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence(badClass, "no-such-class", fencekind.Fenced, w.bCIDRs))
		Expect(err).NotTo(HaveOccurred())
		c.event("NetworkFence %s created with class no-such-class", badClass)
		Consistently(func(g Gomega) {
			st, err := w.fences.Status(ctx, badClass)
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

	fencingCase("FENCING-006", func(ctx SpecContext, w *world, tc e2e.Case) {
		// networkfence_controller.go (v0.14.0), Reconcile: when the CR has a
		// deletion timestamp it only removes the finalizer
		// csiaddons.openshift.io/network-fence and returns; no
		// UnfenceClusterNetwork is sent. The fence outlives its CR; an
		// operator must unfence with an Unfenced CR before deleting.
		c := w.newCase(ctx, tc, true)
		name := "fenceproof-" + c.id
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
			g.Expect(w.bWrites(fencekind.ParseLines[fencekind.Accepted](w.auditLog(ctx)), un, 0)).NotTo(BeEmpty(), "B not served after the explicit unfence")
		}, time.Minute)
		c.event("worker B served again after an explicit Unfenced CR")
	}, SpecTimeout(8*time.Minute))
})
