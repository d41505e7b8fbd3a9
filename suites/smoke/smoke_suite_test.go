// Package smoke is the smoke end-to-end spec of the offline kind cluster: it
// proves that NetworkPolicy is enforced between pods on different nodes.
//
//	make e2e-smoke                     # creates or reuses the cluster, runs this, cleans up
//	go test ./suites/smoke -args --kubeconfig=$HOME/.kube/config   # any existing cluster
//	FENCEPROOF_E2E=1 go test ./suites/smoke   # creates or reuses kind cluster $CLUSTER
//
// Without --kubeconfig (or $KUBECONFIG) the suite creates the kind cluster
// itself through e2e-framework's kind provider (see internal/e2e).
package smoke

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/fenceproof/fenceproof/internal/e2e"
)

var (
	cfg     *envconf.Config
	cluster *e2e.Cluster
)

func TestMain(m *testing.M) {
	cfg = e2e.MustParseFlags()
	os.Exit(m.Run())
}

func TestSmoke(t *testing.T) {
	if !e2e.Enabled(cfg) {
		t.Skip(e2e.SkipReason)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "smoke")
}

// TestCaseTable: every case of the table has exactly one spec with its ID
// and labels, and every spec is a case of the table (no cluster needed).
func TestCaseTable(t *testing.T) { e2e.TestTable(t, cfg, smokeCases, "smoke") }

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	cluster, err = e2e.Setup(ctx, cfg, e2e.Options{Log: func(format string, args ...any) {
		GinkgoWriter.Printf(time.Now().Format("15:04:05")+" "+format+"\n", args...)
	}})
	Expect(err).NotTo(HaveOccurred())
}, NodeTimeout(20*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	Expect(cluster.Teardown(ctx)).To(Succeed())
}, NodeTimeout(5*time.Minute))
