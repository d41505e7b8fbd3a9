package byofencing

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/fencing/judge"
	"github.com/fenceproof/fenceproof/fencing/networkfence"
	"github.com/fenceproof/fenceproof/fencing/report"
	"github.com/fenceproof/fenceproof/fencing/run"
	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// byoCases is the suite's case table; IDs are stable and never reused.
var byoCases = e2e.Cases{Suite: "byofencing", Prefix: "BYOFENCE", List: []e2e.Case{
	{ID: "BYOFENCE-001", Area: "fence", Cluster: e2e.Shared,
		Title: "fenceproof fencing given only names, against the vendor's world: PASS, its reports written, nothing left behind"},
	{ID: "BYOFENCE-002", Area: "rehearsal", Cluster: e2e.Exclusive,
		Title: "the DR rehearsal given only names: node cut, fenced, tainted out of service, the workload moved, restored, unfenced: PASS"},
	{ID: "BYOFENCE-004", Area: "interrupt", Cluster: e2e.Shared,
		Title: "SIGINT once the fence is acknowledged: INCOMPLETE (exit 3), the node unfenced and nothing left behind"},
	{ID: "BYOFENCE-003", Area: "driver-fault", Cluster: e2e.Shared,
		Title: "against the driver that acknowledges before it enforces, fencing the clients GetFenceClients reports: FAIL at the exact write, recomputed from the run's evidence"},
}}

// fencing runs `fenceproof fencing` as a user would, with names only, and
// returns its exit status and what it wrote.
func fencing(ctx SpecContext, id string, extra ...string) (int, result) {
	code := command(ctx, "fenceproof", fencingArgs(id, extra...)...)
	return code, readResult(id)
}

// fencingArgs are the names a user gives.
func fencingArgs(id string, extra ...string) []string {
	name := strings.ToLower(id)
	ns := fencekind.StorageNamespace
	args := []string{"--kubeconfig", cluster.Kubeconfig, "--class", fencekind.ClassName, "--node", fenced, "--namespace", name,
		"--reports", *flagReports, "--name", name, "--observe", "3s", "--image", fencekind.DefaultImages.Fenceproof, "--librados-image", fencekind.DefaultImages.Ceph}
	if *flagStorage == fencekind.StorageCeph {
		args = append(args, "--storage", run.StorageLibrados, "--ceph-configmap", ns+"/"+fencekind.CephConfigMap,
			"--ceph-secret", ns+"/"+fencekind.CephWriterKeys, "--ceph-user", fencekind.CephWriterUser, "--ceph-pool", fencekind.CephPool)
	} else {
		args = append(args, "--storage", run.StorageRefstore, "--refstore", ns+"/"+fencekind.RefstoreName)
	}
	return append(append([]string{"fencing"}, args...), extra...)
}

// readResult reads the run's result.json and checks its reports exist.
func readResult(id string) result {
	dir := filepath.Join(*flagReports, strings.ToLower(id))
	var r result
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	Expect(err).NotTo(HaveOccurred(), "the run wrote no result.json")
	Expect(json.Unmarshal(b, &r)).To(Succeed())
	r.dir = dir
	for _, f := range []string{"report.md", "report.html", "timeline.svg", "junit.xml", "evidence/input.json"} {
		Expect(filepath.Join(dir, f)).To(BeAnExistingFile())
	}
	AddReportEntry(id+" report", filepath.Join(dir, "report.md"))
	return r
}

// result is what result.json holds.
type result struct {
	Status, Reason string
	Meta           report.Meta
	Steps          []report.Step
	Result         *judge.Result
	Leftovers      []string
	dir            string
}

// nothingLeft: the run's namespace, fences and taint are gone.
func nothingLeft(ctx SpecContext, name string) {
	dyn, err := dynamic.NewForConfig(cluster.Config.Client().RESTConfig())
	Expect(err).NotTo(HaveOccurred())
	l, err := dyn.Resource(networkfence.NetworkFenceGVR).List(ctx, metav1.ListOptions{LabelSelector: run.LabelRun + "=" + name})
	Expect(err).NotTo(HaveOccurred())
	Expect(l.Items).To(BeEmpty(), "NetworkFences of run %s left", name)
	n, err := cluster.Clientset.CoreV1().Nodes().Get(ctx, fenced, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(n.Spec.Taints).NotTo(ContainElement(HaveField("Key", run.OutOfServiceTaint.Key)))
	Eventually(func() error {
		_, err := cluster.Clientset.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		return err
	}).WithContext(ctx).WithTimeout(3*time.Minute).WithPolling(2*time.Second).ShouldNot(Succeed(), "namespace %s left", name)
}

func passes(r result) {
	Expect(r.Status).To(Equal("PASS"), "reason %q; first %v", r.Reason, r.Result.First())
	Expect(r.Leftovers).To(BeEmpty())
	for _, c := range judge.Checks {
		Expect(r.Result.Checks[c.ID]).To(BeElementOf(judge.Severity(""), judge.SevNote), "check %s", c.ID)
	}
}

var _ = Describe("fenceproof fencing on the vendor's world", Ordered, func() {
	byoCases.It("BYOFENCE-001", func(ctx SpecContext) {
		code, r := fencing(ctx, "BYOFENCE-001")
		passes(r)
		Expect(code).To(Equal(0))
		Expect(r.Meta.CIDRs).NotTo(BeEmpty())
		// The verdict again, from the evidence alone.
		Expect(command(ctx, "fenceproof", "fencing", "judge", r.dir)).To(Equal(0))
		nothingLeft(ctx, "byofence-001")
	}, SpecTimeout(12*time.Minute))

	byoCases.It("BYOFENCE-002", func(ctx SpecContext) {
		release, err := cluster.Exclusive(ctx)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(release()).To(Succeed()) })
		code, r := fencing(ctx, "BYOFENCE-002", "--rehearsal")
		passes(r)
		Expect(code).To(Equal(0))
		var kinds []string
		for _, s := range r.Steps {
			kinds = append(kinds, s.Kind)
		}
		Expect(kinds).To(ContainElements(report.StepCut, report.StepAck, report.StepNotReady, report.StepTaint, report.StepMoved,
			report.StepRestore, report.StepUnfenceOK, report.StepUntaint))
		n, err := cluster.Clientset.CoreV1().Nodes().Get(ctx, fenced, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Status.Conditions).To(ContainElement(And(HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionTrue))))
		nothingLeft(ctx, "byofence-002")
	}, SpecTimeout(25*time.Minute))

	byoCases.It("BYOFENCE-004", func(ctx SpecContext) {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "fenceproof"), fencingArgs("BYOFENCE-004", "--observe", "2m")...)
		acked, once := make(chan struct{}), sync.Once{}
		w := prefixWriter{prefix: "[fenceproof] ", onLine: func(line string) {
			if strings.Contains(line, "s] "+report.StepAck+" ") {
				once.Do(func() { close(acked) })
			}
		}}
		cmd.Stdout, cmd.Stderr = &w, &w
		Expect(cmd.Start()).To(Succeed())
		select {
		case <-acked:
		case <-ctx.Done():
			cmd.Process.Kill()
			Fail("the fence was never acknowledged")
		}
		Expect(cmd.Process.Signal(os.Interrupt)).To(Succeed())
		logf("SIGINT sent after the ack")
		err := cmd.Wait()
		Expect(cmd.ProcessState.ExitCode()).To(Equal(3), "exit status after SIGINT (%v)", err)
		r := readResult("BYOFENCE-004")
		Expect(r.Status).To(Equal("INCOMPLETE"))
		Expect(r.Reason).To(ContainSubstring("interrupted"))
		Expect(r.Leftovers).To(BeEmpty())
		var kinds []string
		for _, s := range r.Steps {
			kinds = append(kinds, s.Kind)
		}
		Expect(kinds).To(ContainElement(report.StepUnfenceOK), "cleanup unfenced")
		nothingLeft(ctx, "byofence-004")
	}, SpecTimeout(12*time.Minute))

	// Last: the world is removed after it, so the faulty driver is not
	// rolled back.
	byoCases.It("BYOFENCE-003", func(ctx SpecContext) {
		Expect(world(ctx, "ack-before-enforce")).To(Equal(0), "fenceworld up --driver-fault ack-before-enforce")
		code, r := fencing(ctx, "BYOFENCE-003", "--cidrs-from", "clients")
		Expect(r.Status).To(Equal("FAIL"), "reason %q", r.Reason)
		Expect(code).To(Equal(1))
		for _, c := range r.Meta.CIDRs {
			Expect(c).To(Or(HaveSuffix("/32"), HaveSuffix("/128")), "GetFenceClients reports hosts")
		}
		first := r.Result.First()
		Expect(first).NotTo(BeNil())
		Expect(first.Check).To(Equal("write-after-ack"))
		// The exact write, recomputed from the evidence with a plain scan:
		// the fenced node's earliest acknowledged write that started after
		// the ack plus the bound and ended before the unfence minus it.
		in, err := report.ReadInput(r.dir)
		Expect(err).NotTo(HaveOccurred())
		b := int64(in.Bounds[in.FencedNode])
		var want *contract.Attempt
		for _, l := range in.Logs {
			for i, a := range l.Attempts {
				if l.Node == in.FencedNode && a.Outcome == contract.OutcomeOK && a.SendNs-b > in.Fence.AckNs && a.TNs+b < in.Fence.UnfenceNs &&
					(want == nil || a.SendNs < want.SendNs) {
					want = &l.Attempts[i]
				}
			}
		}
		Expect(want).NotTo(BeNil(), "the faulty driver let no write through after the ack")
		Expect([]any{first.Writer, first.Seq, first.StartNs, first.EndNs}).To(Equal([]any{want.Client, want.Seq, want.SendNs, want.TNs}))
		Expect(in.Records).To(ContainElement(And(HaveField("Writer", want.Client), HaveField("Seq", want.Seq), HaveField("Intact", true))),
			"the offending write is on the storage (read back)")
		raw, err := os.ReadFile(filepath.Join(r.dir, "evidence", "writer-"+want.Client+"-"+fenced+".log"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(raw)).To(ContainSubstring(`"seq":` + jsonNumber(want.Seq)))
		AddReportEntry("BYOFENCE-003 first offending write", first.String())
		nothingLeft(ctx, "byofence-003")
	}, SpecTimeout(15*time.Minute))
})

func jsonNumber(v uint64) string { b, _ := json.Marshal(v); return string(b) }
