// Package csiproxyadmission is the end-to-end spec of the csi-proxy pipe
// admission policy (fixtures/csiproxy/admission-policy.yaml): on a real
// kube-apiserver it admits and rejects exactly the right pods, by
// server-side dry-run (no pod runs; the pods would need Windows nodes).
//
//	make e2e-csiproxy-admission                                   # creates or reuses the kind cluster
//	go test ./suites/csiproxyadmission -args --kubeconfig=PATH    # any cluster; only its API server is used
//
// It applies the policy, its binding and parameter ConfigMap under their
// fixture names, works in a namespace of its own, and removes all of it.
package csiproxyadmission

import (
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/fenceproof/fenceproof/internal/e2e"
)

var (
	cfg     *envconf.Config
	cluster *e2e.Cluster
	cs      kubernetes.Interface
)

func TestMain(m *testing.M) {
	cfg = e2e.MustParseFlags()
	os.Exit(m.Run())
}

func TestAdmission(t *testing.T) {
	if !e2e.Enabled(cfg) {
		t.Skip(e2e.SkipReason)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "csi-proxy admission policy")
}

// TestCaseTable: every case of the table has exactly one spec with its ID
// and labels, and every spec is a case of the table (no cluster needed).
func TestCaseTable(t *testing.T) { e2e.TestTable(t, cfg, admissionCases, "csi-proxy admission policy") }

func logf(format string, args ...any) {
	GinkgoWriter.Printf(time.Now().Format("15:04:05")+" "+format+"\n", args...)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	// Admission needs only the API server: with a kubeconfig, use it as is
	// (no wait for nodes); otherwise create or reuse the kind cluster.
	if kc := cfg.KubeconfigFile(); kc != "" {
		rc, err := clientcmd.BuildConfigFromFlags("", kc)
		Expect(err).NotTo(HaveOccurred())
		cs, err = kubernetes.NewForConfig(rc)
		Expect(err).NotTo(HaveOccurred())
		logf("using the API server of %s", kc)
		return
	}
	var err error
	cluster, err = e2e.Setup(ctx, cfg, e2e.Options{Log: logf})
	Expect(err).NotTo(HaveOccurred())
	cs = cluster.Clientset
}, NodeTimeout(20*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if cluster != nil {
		Expect(cluster.Teardown(ctx)).To(Succeed())
	}
}, NodeTimeout(5*time.Minute))
