// Package image is the end-to-end suite of the fenceproof image (make
// image) where vendors run it: `docker run` against a driver's socket on a
// host, and deploy/sanity-job as a Job on kind against the reference driver
// deployed with the real csi-addons sidecar, its socket in the kubelet
// plugin directory of a worker, as a vendor's driver keeps it.
//
//	make e2e-image                                   # creates or reuses the kind cluster, runs, cleans up
//	go test ./suites/image -args --kubeconfig=PATH   # an existing cluster with the image on its nodes
//
// The Job is rendered from deploy/sanity-job/example by kustomize and run by
// deploy/sanity-job/run.sh exactly as a vendor's CI runs it; the cases
// check what run.sh and the cluster say. Every case has a stable ID
// (IMAGE-001 ...; the table in cases_test.go).
package image

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/e2e-framework/pkg/envconf"

	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/internal/fencekind"
)

var (
	flagImage   = flag.String("image.name", os.Getenv("FENCEPROOF_IMAGE"), "the image under test, REPO:TAG (default $FENCEPROOF_IMAGE, else the tag make cluster-image built for this checkout: .cache/own-images/fenceproof-image.tag)")
	flagReports = flag.String("image.reports", "../../reports/image", "where each run's reports and logs go")
	flagFault   = flag.String("image.fault", "no-auth", "the --fault of the broken reference driver (driver/fault; one whose proof needs no suite flags)")
	flagSidecar = flag.String("image.sidecar-image", fencekind.DefaultImages.Sidecar, "csi-addons sidecar image")
	flagDriver  = flag.String("image.driver-image", fencekind.DefaultImages.Fenceproof, "image of the reference driver (the in-cluster driver under test)")
	flagDeploy  = flag.String("image.csi-addons-deploy", fencekind.DeployDir(), "directory with csi-addons' crds.yaml (make cluster-image copies it from the module)")
)

var (
	cfg     *envconf.Config
	cluster *e2e.Cluster
	k       fencekind.Cluster
	// image is the image under test; archive its docker-save archive on
	// this machine ("" when the image is only on the cluster's nodes).
	image, archive string
)

func TestMain(m *testing.M) {
	cfg = e2e.MustParseFlags()
	os.Exit(m.Run())
}

func TestImage(t *testing.T) {
	if !e2e.Enabled(cfg) {
		t.Skip(e2e.SkipReason)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "the fenceproof image")
}

// TestCaseTable: every case of the table has exactly one spec with its ID
// and labels, and every spec is a case of the table (no cluster needed).
func TestCaseTable(t *testing.T) { e2e.TestTable(t, cfg, imageCases, "the fenceproof image") }

func logf(format string, args ...any) {
	GinkgoWriter.Printf(time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	// One run at a time per cluster: the plugin directories on the nodes
	// have fixed names, as a driver's have.
	cluster, err = e2e.Setup(ctx, cfg, e2e.Options{Log: logf, World: "image"})
	Expect(err).NotTo(HaveOccurred())
	dyn, err := dynamic.NewForConfig(cluster.Config.Client().RESTConfig())
	Expect(err).NotTo(HaveOccurred())
	k = fencekind.Cluster{CS: cluster.Clientset, Dyn: dyn}
	image, archive, err = imageUnderTest()
	Expect(err).NotTo(HaveOccurred())
	logf("image under test: %s (archive %q)", image, archive)
	Expect(os.MkdirAll(*flagReports, 0o755)).To(Succeed())
}, NodeTimeout(20*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	Expect(cluster.Teardown(ctx)).To(Succeed())
}, NodeTimeout(5*time.Minute))

// imageUnderTest is --image.name, or the tag this checkout's build wrote
// with its archive.
func imageUnderTest() (string, string, error) {
	a, err := e2e.OwnImageArchive("fenceproof-image")
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(a); err != nil {
		a = ""
	}
	if *flagImage != "" {
		return *flagImage, a, nil
	}
	b, err := os.ReadFile(strings.TrimSuffix(a, ".tar") + ".tag")
	if a == "" || err != nil {
		return "", "", errors.New("no image under test: run `make cluster-image` (it builds the fenceproof image of this checkout) or give --image.name=REPO:TAG")
	}
	return strings.TrimSpace(string(b)), a, nil
}

// kubectl is the kubectl run.sh uses: the one make cluster-image built, else
// the one on PATH.
func kubectl() string {
	p := filepath.Join(e2e.CacheDir(), "out", "kubernetes", "kubectl")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p
	}
	return "kubectl"
}
