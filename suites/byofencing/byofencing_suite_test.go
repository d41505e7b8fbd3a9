// Package byofencing is the end-to-end suite of `fenceproof fencing` on a
// cluster where fenceproof did not deploy the driver: a separate command
// (cmd/fenceworld, as a storage vendor deploys theirs) puts the real
// csi-addons controller, the reference driver with the csi-addons sidecar
// and a single-node Ceph on the kind cluster; the cases then run the
// fenceproof binary as a user would, giving it only names (kubeconfig,
// NetworkFenceClass, node, namespace, storage kind and the Ceph names), and
// check its exit status, its reports and, for the faulty driver, that it
// names the exact offending write, recomputed here from its evidence.
//
//	make e2e-byo-fencing                                 # creates or reuses the kind cluster
//	go test ./suites/byofencing -args --kubeconfig=PATH  # an existing cluster (kind: the rehearsal's default cut)
package byofencing

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/fenceproof/fenceproof/internal/e2e"
)

var (
	flagReports = flag.String("byofencing.reports", "../../reports/byo-fencing", "where the runs' reports and the deployed world's manifests go")
	flagStorage = flag.String("byofencing.storage", "ceph", "the world's storage: ceph (librados writers) or refstore")
)

var (
	cfg     *envconf.Config
	cluster *e2e.Cluster
	// bin holds the fenceproof and fenceworld binaries built for the run.
	bin string
	// fenced and peer are the workers: the node fenced, the other one.
	fenced, peer string
)

func TestMain(m *testing.M) {
	cfg = e2e.MustParseFlags()
	os.Exit(m.Run())
}

func TestBYOFencing(t *testing.T) {
	if !e2e.Enabled(cfg) {
		t.Skip(e2e.SkipReason)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "fencing on your own cluster")
}

// TestCaseTable: the case table against the specs (no cluster needed).
func TestCaseTable(t *testing.T) { e2e.TestTable(t, cfg, byoCases, "fencing on your own cluster") }

func logf(format string, args ...any) {
	GinkgoWriter.Printf(time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	// Built first: under make e2e this overlaps the wait for the world.
	dir, t0 := GinkgoT().TempDir(), time.Now()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", dir+"/", "../../cmd/fenceproof", "../../cmd/fenceworld").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build: %s", out)
	logf("built fenceproof and fenceworld in %s", time.Since(t0).Round(time.Millisecond))
	// The world's namespaces and the csi-addons controller are the fencing
	// suite's: one world per cluster at a time.
	cluster, err = e2e.Setup(ctx, cfg, e2e.Options{Log: logf, World: "fencing"})
	Expect(err).NotTo(HaveOccurred())
	workers, err := e2e.WorkerNodes(ctx, cluster.Clientset)
	Expect(err).NotTo(HaveOccurred())
	Expect(len(workers)).To(BeNumerically(">=", 2), "the suite needs two workers")
	peer, fenced = workers[0], workers[1]
	bin = dir
	// Nothing of an earlier run: a vendor's world starts from nothing.
	Expect(command(ctx, "fenceworld", "down", "--kubeconfig", cluster.Kubeconfig)).To(Equal(0))
	Expect(world(ctx)).To(Equal(0), "fenceworld up")
}, NodeTimeout(20*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if cluster != nil && bin != "" {
		Expect(command(ctx, "fenceworld", "down", "--kubeconfig", cluster.Kubeconfig)).To(Equal(0), "fenceworld down")
	}
	Expect(cluster.Teardown(ctx)).To(Succeed())
}, NodeTimeout(8*time.Minute))

// world deploys (or re-deploys the driver of) the vendor's world with the
// driver faults given.
func world(ctx SpecContext, faults ...string) int {
	args := []string{"up", "--kubeconfig", cluster.Kubeconfig, "--storage", *flagStorage, "--manifests", filepath.Join(*flagReports, "world")}
	for _, f := range faults {
		args = append(args, "--driver-fault", f)
	}
	return command(ctx, "fenceworld", args...)
}

// command runs one of the built binaries, its output into the spec's log,
// and returns its exit status.
func command(ctx SpecContext, name string, args ...string) int {
	logf("$ %s %s", name, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	w := prefixWriter{prefix: "[" + name + "] "}
	cmd.Stdout, cmd.Stderr = &w, &w
	t0 := time.Now()
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	logf("%s exited %d after %s (%v)", name, code, time.Since(t0).Round(time.Millisecond), err)
	return code
}

// prefixWriter writes each line to GinkgoWriter with a prefix (and hands
// it to onLine, if set).
type prefixWriter struct {
	prefix string
	onLine func(string)
	mu     sync.Mutex
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			return len(b), nil
		}
		fmt.Fprintf(GinkgoWriter, "%s%s\n", p.prefix, p.buf[:i])
		if p.onLine != nil {
			p.onLine(string(p.buf[:i]))
		}
		p.buf = p.buf[i+1:]
	}
}
