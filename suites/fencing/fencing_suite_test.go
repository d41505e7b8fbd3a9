// Package fencing is the end-to-end fencing suite: a NetworkFence CR travels
// from the Kubernetes API through the real csi-addons controller and
// sidecar (v0.14.0, auth enabled) to the reference driver, which hands the
// fenced set to the reference storage service (refstore) before it
// acknowledges; writer pods on both workers write all the time, and the
// write-audit oracle proves from refstore's audit log and the driver's RPC
// log that no write from a fenced source was accepted after the ack.
//
//	make e2e-fencing                                   # creates or reuses the kind cluster, runs, cleans up
//	make rehearse-kind                                 # only the DR rehearsal, with its timeline
//	go test ./suites/fencing -args --kubeconfig=PATH   # an existing cluster
//
// Every case has a stable ID (FENCING-001 ...; the table in cases_test.go),
// labels (suite, area, cluster use) and a body that takes the deployed world
// as a parameter; the world's storage (storage_test.go) is the only part
// that knows what the writers write to, so the same cases run on another
// storage. Without FENCEPROOF_E2E=1 or --kubeconfig, `go test ./...` skips
// the cases and runs the suite's unit tests (its case table included).
package fencing

import (
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/internal/fencekind"
)

var (
	flagReports    = flag.String("fencing.reports", "../../reports", "where reports/fencing.md and reports/fencing/ (audit logs, driver logs, timelines) are written")
	flagDeploy     = flag.String("fencing.csi-addons-deploy", fencekind.DeployDir(), "directory with csi-addons' crds.yaml and rbac.yaml (make cluster-image copies them from the module)")
	flagImage      = flag.String("fencing.image", envOr("FENCING_IMAGE", fencekind.DefaultImages.Fenceproof), "image with the fenceproof binary (refstore, driver, writer); default $FENCING_IMAGE")
	flagController = flag.String("fencing.controller-image", fencekind.DefaultImages.Controller, "csi-addons controller image")
	flagSidecar    = flag.String("fencing.sidecar-image", fencekind.DefaultImages.Sidecar, "csi-addons sidecar image")
	flagAckFault   = flag.String("fencing.ack-before-enforce", envOr("FENCING_ACK_BEFORE_ENFORCE", "expect"), "the ack-before-enforce spec: expect (the oracle must name the exact offending write) or fail (a plain case, so the suite fails and shows it); default $FENCING_ACK_BEFORE_ENFORCE")
	flagCut        = flag.String("fencing.cut", "kubelet-stop", "how the rehearsal cuts worker B off (kind node containers): kubelet-stop (B loses the control plane but its pods keep writing: the split brain), docker-pause or docker-disconnect")
	flagKeep       = flag.Bool("fencing.keep", false, "keep the deployed world after the run")
	flagStorage    = flag.String("fencing.storage", envOr("FENCING_STORAGE", "refstore"), "the storage the cases fence: "+storageNames()+"; default $FENCING_STORAGE")
)

var (
	cfg     *envconf.Config
	cluster *e2e.Cluster
	// deployed is the world BeforeSuite deployed; every case gets it as a
	// parameter.
	deployed *world
	report   = &suiteReport{}
)

// world is what BeforeSuite deployed: the cluster, the csi-addons
// controller and the storage with the driver that fences it.
type world struct {
	k           fencekind.Cluster
	fences      fencekind.Fences
	spec        fencekind.World
	store       storage
	storageNode string   // runs the storage side (the control plane)
	a, b        string   // worker A (never fenced) and worker B (fenced)
	bCIDRs      []string // B's pod CIDR and node IP
	logs        *driverLogs
	startedAt   time.Time
	// caseNamespaces are deleted when their case ends; AfterSuite waits
	// until they are gone.
	caseNamespaces []string
}

func TestMain(m *testing.M) {
	cfg = e2e.MustParseFlags()
	os.Exit(m.Run())
}

func TestFencing(t *testing.T) {
	if !e2e.Enabled(cfg) {
		t.Skip("fencing e2e suite skipped: it needs a cluster. Set " + e2e.EnvEnable +
			"=1 to create or reuse the kind cluster, or pass -args --kubeconfig=PATH; `make e2e-fencing` does it for you")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "fencing end to end")
}

// TestCaseTable: every case of the table has exactly one spec with its ID
// and labels, and every spec is a case of the table (no cluster needed).
func TestCaseTable(t *testing.T) { e2e.TestTable(t, cfg, fencingCases, "fencing end to end") }

func logf(format string, args ...any) {
	GinkgoWriter.Printf(time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	start := time.Now()
	var err error
	// One fencing world per cluster (its namespaces are fixed; the Ceph run
	// deploys the same ones): a second run waits for this one in Setup.
	cluster, err = e2e.Setup(ctx, cfg, e2e.Options{Log: logf, World: "fencing"})
	Expect(err).NotTo(HaveOccurred())
	rc := cluster.Config.Client().RESTConfig()
	dyn, err := dynamic.NewForConfig(rc)
	Expect(err).NotTo(HaveOccurred())
	res, err := resources.New(rc)
	Expect(err).NotTo(HaveOccurred())
	k := fencekind.Cluster{CS: cluster.Clientset, Dyn: dyn, Res: res,
		Log: slog.New(slog.NewTextHandler(GinkgoWriter, nil))}

	cp, err := cluster.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	Expect(err).NotTo(HaveOccurred())
	Expect(cp.Items).NotTo(BeEmpty(), "the storage side runs on a control-plane node")
	workers, err := e2e.WorkerNodes(ctx, cluster.Clientset)
	Expect(err).NotTo(HaveOccurred())
	Expect(len(workers)).To(BeNumerically(">=", 2), "the suite needs two workers")

	store, err := storageNamed(*flagStorage)
	Expect(err).NotTo(HaveOccurred())
	runID := time.Now().UTC().Format("20060102-150405") + "-" + randHex(3)
	w := &world{
		k: k, fences: fencekind.Fences{Client: dyn}, store: store,
		storageNode: cp.Items[0].Name, a: workers[0], b: workers[1],
		spec: fencekind.World{
			Images:      fencekind.Images{Fenceproof: *flagImage, Controller: *flagController, Sidecar: *flagSidecar},
			StorageNode: cp.Items[0].Name, RunID: runID,
		},
		logs:      &driverLogs{k: k, seen: map[string][]byte{}},
		startedAt: start,
	}
	// From here on AfterSuite removes what was deployed, should this fail.
	deployed = w
	w.bCIDRs, err = k.NodeAddrs(ctx, w.b)
	Expect(err).NotTo(HaveOccurred())
	logf("run %s: storage %s on node %s, worker A %s (never fenced), worker B %s (fenced: %v)", runID, store.name(), w.storageNode, w.a, w.b, w.bCIDRs)

	Expect(store.uninstall(ctx, w)).To(Succeed(), "remove what an earlier run left")
	Expect(k.InstallUpstream(ctx, *flagDeploy)).To(Succeed())
	Expect(store.install(ctx, w)).To(Succeed())
	logf("deployed: csi-addons controller, driver + sidecar (lease holder %s), %s, in %s",
		k.LeaseHolder(ctx), store, time.Since(start).Round(time.Millisecond))
	report.start(fmt.Sprintf("%s; storage %s on node %s, worker A %s, worker B %s (fenced CIDRs %v); run %s",
		cluster.Kubeconfig, store, w.storageNode, w.a, w.b, w.bCIDRs, runID))
}, NodeTimeout(20*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if w := deployed; w != nil {
		w.saveEvidence(ctx)
		paths, err := report.write(*flagReports, w)
		Expect(err).NotTo(HaveOccurred())
		for _, p := range paths {
			abs, _ := filepath.Abs(p)
			fmt.Fprintf(os.Stderr, "fencing report: %s\n", abs)
		}
		Expect(e2e.DeleteNamespaces(ctx, w.k.CS, podTimeout, w.caseNamespaces...)).To(Succeed())
		if !*flagKeep {
			t0 := time.Now()
			Expect(w.store.uninstall(ctx, w)).To(Succeed())
			logf("removed the fencing world in %s", time.Since(t0).Round(time.Millisecond))
		}
	}
	Expect(cluster.Teardown(ctx)).To(Succeed())
}, NodeTimeout(10*time.Minute))

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
