package fencing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/internal/fencekind"
)

var createOpts = metav1.CreateOptions{}

// Generous bounds for a loaded 2-core machine; nothing asserts speed.
const (
	crTimeout     = 2 * time.Minute // a NetworkFence reaching its result
	podTimeout    = 3 * time.Minute // pods Running, writers writing
	observeWindow = 3 * time.Second // writers keep writing after a change before the logs are read
)

// driverLogs keeps the last copy of every driver pod's log, by pod name
// and UID (a StatefulSet's replacement pod has the old one's name), so
// that the log of a deleted pod (case 3) still reaches the oracle.
type driverLogs struct {
	mu   sync.Mutex
	k    fencekind.Cluster
	seen map[string][]byte
}

// refresh fetches the log of every current driver pod.
func (d *driverLogs) refresh(ctx context.Context) {
	pods, err := d.k.DriverPods(ctx)
	if err != nil {
		logf("driver logs: %v", err)
		return
	}
	for _, p := range pods {
		b, err := d.k.PodLogs(ctx, p.Namespace, p.Name, "driver", false)
		if err != nil {
			continue
		}
		key := p.Name + "-" + string(p.UID)
		d.mu.Lock()
		if len(b) >= len(d.seen[key]) {
			d.seen[key] = b
		}
		d.mu.Unlock()
	}
}

func (d *driverLogs) all(ctx context.Context) map[string][]byte {
	d.refresh(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range d.seen {
		out[k] = v
	}
	return out
}

func values(m map[string][]byte) [][]byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// event is one line of a case's timeline.
type event struct {
	At   time.Duration
	What string
}

// fcase is one running case: its namespace, writers and timeline.
type fcase struct {
	w *world
	// name is the case's ID and title; id is the ID in lower case, for the
	// names of the case's objects; ns is its namespace.
	name, id, ns string
	start        time.Time
	mu           sync.Mutex
	events       []event
	writers      map[string]string // writer id (pod name) -> node
	figures      []figure
	fenced       []string // every CIDR the case fenced (reset unfences them if it fails)
}

// figure is one measured value of a case for the report.
type figure struct{ Name, Value string }

func (c *fcase) event(format string, args ...any) {
	e := event{At: time.Since(c.start), What: fmt.Sprintf(format, args...)}
	c.mu.Lock()
	c.events = append(c.events, e)
	c.mu.Unlock()
	logf("[%s +%7.3fs] %s", c.id, e.At.Seconds(), e.What)
}

func (c *fcase) figure(name, format string, args ...any) {
	c.mu.Lock()
	c.figures = append(c.figures, figure{name, fmt.Sprintf(format, args...)})
	c.mu.Unlock()
}

// newCase starts case tc: its own namespace (deleted when the spec ends),
// and, with writers, writer pods "<id>-a" on worker A and "<id>-b" on
// worker B, returned once both have had writes accepted.
func (w *world) newCase(ctx context.Context, tc e2e.Case, writers bool) *fcase {
	id := strings.ToLower(tc.ID)
	c := &fcase{w: w, id: id, name: tc.Text(), ns: id, start: time.Now(), writers: map[string]string{}}
	Expect(e2e.DeleteNamespace(ctx, w.k.CS, c.ns, podTimeout)).To(Succeed())
	Expect(e2e.CreateNamespace(ctx, w.k.CS, c.ns, map[string]string{"app.kubernetes.io/part-of": "fenceproof"})).To(Succeed())
	Expect(w.store.prepare(ctx, w, c.ns)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		report.add(c)
		if CurrentSpecReport().Failed() {
			c.reset(ctx)
		}
		// Deleted without waiting (the next case has its own namespace);
		// AfterSuite waits until every case namespace is gone.
		err := w.k.CS.CoreV1().Namespaces().Delete(ctx, c.ns, metav1.DeleteOptions{})
		if !apierrors.IsNotFound(err) {
			Expect(err).NotTo(HaveOccurred())
		}
		w.caseNamespaces = append(w.caseNamespaces, c.ns)
	}, NodeTimeout(crTimeout+2*time.Minute))
	c.event("case starts (namespace %s)", c.ns)
	if writers {
		c.startWriters(ctx, map[string]string{id + "-a": w.a, id + "-b": w.b})
	}
	return c
}

// reset lifts whatever a failed case may have left fenced (its own fences
// and worker B's addresses), so that the next case starts unfenced:
// deleting a fenced CR does not unfence (case 6), and unfencing what is not
// fenced succeeds. It runs after the case's own cleanups (which restore the
// faithful driver after the fault case).
func (c *fcase) reset(ctx context.Context) {
	w := c.w
	cidrs := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(c.fenced), w.bCIDRs...))))
	name := "fenceproof-" + c.id + "-reset"
	// A reset CR of an earlier failed run would keep its old result.
	_ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout)
	_, err := w.fences.Create(ctx, fencekind.NetworkFenceGVR, fencekind.Fence(name, fencekind.ClassName, fencekind.Unfenced, cidrs))
	if err != nil {
		logf("[%s] reset: %v", c.id, err)
		return
	}
	st, werr := w.fences.Status(ctx, name)
	for t0 := time.Now(); werr == nil && st.Message != fencekind.UnfenceOKMessage && time.Since(t0) < crTimeout; st, werr = w.fences.Status(ctx, name) {
		time.Sleep(500 * time.Millisecond)
	}
	c.event("failed case reset: Unfenced %v: %s %s", cidrs, st.Result, st.Message)
	_ = w.fences.Delete(ctx, fencekind.NetworkFenceGVR, name, crTimeout)
}

// startWriters creates writer pods (id -> node) and waits until each has
// had a write accepted.
func (c *fcase) startWriters(ctx context.Context, ws map[string]string) {
	w := c.w
	var pods = make([]string, 0, len(ws))
	for id, node := range ws {
		c.writers[id] = node
		pods = append(pods, id)
		_, err := w.k.CS.CoreV1().Pods(c.ns).Create(ctx, w.store.writerPod(w, c.ns, id, node), createOpts)
		Expect(err).NotTo(HaveOccurred())
	}
	sort.Strings(pods)
	for _, id := range pods {
		Eventually(func(g Gomega) {
			ok := 0
			for _, a := range c.attempts(ctx, id) {
				if a.Outcome == fencekind.OutcomeOK {
					ok++
				}
			}
			g.Expect(ok).To(BeNumerically(">=", 5), "writer %s has no accepted writes yet", id)
		}).WithContext(ctx).WithTimeout(podTimeout).WithPolling(time.Second).Should(Succeed())
	}
	c.event("writers %s are writing", strings.Join(pods, ", "))
}

// attempts returns a writer's log (its pod's standard output).
func (c *fcase) attempts(ctx context.Context, id string) []fencekind.Attempt {
	b, err := c.w.k.PodLogs(ctx, c.ns, id, "writer", false)
	if err != nil {
		return nil
	}
	return fencekind.ParseLines[fencekind.Attempt](b)
}

// auditLog reads the storage's log of accepted writes of this run.
func (w *world) auditLog(ctx context.Context) []byte {
	var b []byte
	Eventually(func() error {
		var err error
		b, err = w.store.log(ctx, w, acceptedLog)
		return err
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
	return b
}

// waitResult waits for a NetworkFence result and records it.
func (c *fcase) waitResult(ctx context.Context, name, result string) fencekind.FenceStatus {
	_, st, err := c.w.fences.WaitResult(ctx, name, result, crTimeout)
	Expect(err).NotTo(HaveOccurred())
	c.event("NetworkFence %s: %s (%s)", name, st.Result, st.Message)
	return st
}

// observe lets the writers write for a while after a change (so that the
// logs hold what happened after it); it asserts nothing by itself.
func (c *fcase) observe(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// bWrites returns the audit records from worker B's fenced CIDRs accepted
// in (from, to] (unix ns; to 0 = no end).
func (w *world) bWrites(audit []fencekind.Accepted, from, to int64) []fencekind.Accepted {
	var out []fencekind.Accepted
	for _, r := range audit {
		if r.TNs > from && (to == 0 || r.TNs <= to) && fencekind.InPrefixes(r.Addr, w.bCIDRs) {
			out = append(out, r)
		}
	}
	return out
}

// lostWrites counts what a writer that must be undisturbed lost in
// [from, to]: attempts that were not accepted, and acknowledged writes
// missing from the audit log.
func lostWrites(atts []fencekind.Attempt, audit []fencekind.Accepted, id string, from, to int64) (lost, total int, reasons []string) {
	have := map[uint64]bool{}
	for _, r := range audit {
		if r.Client == id {
			have[r.Seq] = true
		}
	}
	for _, a := range atts {
		if a.TNs < from || a.TNs > to {
			continue
		}
		total++
		switch {
		case a.Outcome != fencekind.OutcomeOK:
			lost++
			reasons = append(reasons, fmt.Sprintf("seq %d %s %s", a.Seq, a.Outcome, a.Reason))
		case !have[a.Seq]:
			lost++
			reasons = append(reasons, fmt.Sprintf("seq %d acknowledged but not in the audit log", a.Seq))
		}
	}
	return lost, total, reasons
}

// saveEvidence copies the storage's accepted, refused and enforcement logs
// of the run and every driver log under reports/<reportBase>/.
func (w *world) saveEvidence(ctx context.Context) {
	dir := filepath.Join(*flagReports, reportBase())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		logf("evidence: %v", err)
		return
	}
	for _, l := range []storageLog{acceptedLog, refusedLog, enforceLog} {
		b, err := w.store.log(ctx, w, l)
		if err != nil {
			logf("evidence: %v", err)
			continue
		}
		_ = os.WriteFile(filepath.Join(dir, string(l)), b, 0o644)
	}
	for pod, b := range w.logs.all(ctx) {
		_ = os.WriteFile(filepath.Join(dir, "driver-"+pod+".log"), b, 0o644)
	}
}

// reportBase is the base name of the suite's reports: fencing for
// refstore, fencing-<storage> for any other storage.
func reportBase() string {
	if *flagStorage != "refstore" {
		return "fencing-" + *flagStorage
	}
	return "fencing"
}

// caseDir is where the case's evidence goes: reports/<reportBase>/<ID>/.
func (c *fcase) caseDir() string {
	return filepath.Join(*flagReports, reportBase(), strings.ToUpper(c.id))
}

// saveCaseLogs writes the case's writer logs into its caseDir.
func (c *fcase) saveCaseLogs(ev *evidence) {
	dir := c.caseDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	for id, b := range ev.writers {
		_ = os.WriteFile(filepath.Join(dir, "writer-"+id+".log"), b, 0o644)
	}
}

// eventually is Eventually with the suite's polling and a generous timeout.
func eventually(ctx context.Context, f func(g Gomega), timeout time.Duration, desc ...any) {
	Eventually(f).WithContext(ctx).WithTimeout(timeout).WithPolling(500*time.Millisecond).Should(Succeed(), desc...)
}
