// Package isolation is the data-plane isolation end-to-end suite (seed 002):
// application specs become NetworkPolicies, a model predicts the
// reachability matrix from the policies in the cluster, probes in 9 pods and
// one container outside the cluster measure it over fresh TCP and UDP
// connections (cmd/probe), and the report diffs them under reports/; all of
// it is the package isolation (the repository's isolation/), this suite
// only deploys the topology and runs the cases.
//
//	make e2e-isolation               # creates or reuses the kind cluster, runs, cleans up
//	go test ./suites/isolation -args --kubeconfig=PATH   # an existing cluster
//
// Without FENCEPROOF_E2E=1 or --kubeconfig, `go test ./...` skips it and
// says why.
package isolation

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"

	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/isolation"
)

var (
	flagFixtures  = flag.String("isolation.fixtures", "../../fixtures/isolation", "directory of the topology, cases, app specs and the wrong policy")
	flagReports   = flag.String("isolation.reports", "../../reports", "where the JUnit and Markdown reports are written")
	flagParallel  = flag.Int("isolation.parallel", 48, "probes run at once")
	flagTimeout   = flag.Duration("isolation.probe-timeout", time.Second, "connection timeout of one probe")
	flagSettle    = flag.Duration("isolation.settle", 20*time.Second, "how long disagreeing cells are re-probed while the network plugin programs policies")
	flagProfile   = flag.String("isolation.profile", "auto", "network plugin profile of the model: upstream, cilium, or auto (cilium when kube-system has a cilium DaemonSet)")
	flagWrong     = flag.String("isolation.wrong-policy", envOr("ISOLATION_WRONG_POLICY", "expect"), "the wrong-policy spec: expect (it must show exactly its cell) or fail (a plain case, so the suite fails and shows the cell); default $ISOLATION_WRONG_POLICY")
	flagKeepNS    = flag.Bool("isolation.keep-namespaces", false, "keep the suite's namespaces and pods after the run")
	flagProbePath = flag.String("isolation.probe-command", "/usr/local/bin/probe", "path of the probe binary in "+e2e.ProbeImage)
)

var (
	cfg     *envconf.Config
	cluster *e2e.Cluster
	world   *testWorld
	report  = &suiteReport{}
)

func TestMain(m *testing.M) {
	cfg = e2e.MustParseFlags()
	os.Exit(m.Run())
}

func TestIsolation(t *testing.T) {
	if !e2e.Enabled(cfg) {
		t.Skip("data-plane isolation e2e suite skipped: it needs a cluster. Set " + e2e.EnvEnable +
			"=1 to create or reuse the kind cluster, or pass -args --kubeconfig=PATH; `make e2e-isolation` does it for you")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "data-plane isolation")
}

// TestCaseTable: every case of the table has exactly one spec with its ID
// and labels, and every spec is a case of the table (no cluster needed).
func TestCaseTable(t *testing.T) { e2e.TestTable(t, cfg, isolationCases(), "data-plane isolation") }

// testWorld is the deployed topology and what probes and predicts on it.
type testWorld struct {
	topo    isolation.Topology
	cases   []isolation.PortProto
	names   []string
	ips     map[string]netip.Addr
	peers   []isolation.Peer
	probes  []isolation.ProbeEndpoint
	profile isolation.Profile
	cs      kubernetes.Interface
	runner  isolation.Runner
	// outside holds the workloads outside the cluster (external peers).
	outside *outside
}

type suiteReport struct {
	mu sync.Mutex
	r  isolation.Report
}

func (s *suiteReport) add(c isolation.CaseResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r.Cases = append(s.r.Cases, c)
}

func logf(format string, args ...any) {
	GinkgoWriter.Printf(time.Now().Format("15:04:05")+" "+format+"\n", args...)
}

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	// The iso-* namespaces are fixed: a second run on the cluster waits.
	cluster, err = e2e.Setup(ctx, cfg, e2e.Options{Log: logf, World: "isolation"})
	Expect(err).NotTo(HaveOccurred())

	topo, err := isolation.LoadTopology(filepath.Join(*flagFixtures, "topology.yaml"))
	Expect(err).NotTo(HaveOccurred())
	cases, err := topo.Cases()
	Expect(err).NotTo(HaveOccurred())

	// Exec is an API request: lift client-go's default 5 QPS so probes run
	// in parallel.
	rc := rest.CopyConfig(cluster.Config.Client().RESTConfig())
	rc.QPS, rc.Burst = 1000, 2000
	cs, err := kubernetes.NewForConfig(rc)
	Expect(err).NotTo(HaveOccurred())

	profile, err := detectProfile(ctx, cs, *flagProfile)
	Expect(err).NotTo(HaveOccurred())
	logf("network plugin profile of the model: %s", profile.Name)

	start := time.Now()
	// The out-of-cluster workloads first: when they cannot run (auto mode,
	// not kind), the topology loses them and the report says why.
	out, err := startOutside(ctx, cs, rc.Host, topo)
	Expect(err).NotTo(HaveOccurred())
	if !out.on() {
		logf("out-of-cluster workload %s: its cells are dropped and its cases skipped", out.why)
		topo = topo.WithoutExternal()
	}
	// What AfterSuite cleans up, should the rest of the setup fail.
	world = &testWorld{outside: out, cs: cs, topo: topo}
	var pods []*corev1.Pod
	Expect(deleteNamespaces(ctx, cs, topo)).To(Succeed(), "remove namespaces left by an earlier run")
	for _, ns := range topo.Namespaces {
		_, err := envfuncs.CreateNamespace(ns.Name, envfuncs.WithLabels(ns.Labels))(ctx, cluster.Config)
		Expect(err).NotTo(HaveOccurred())
		for _, p := range ns.Pods {
			pod := e2e.ProbePod(ns.Name, p.Name, "", p.Labels)
			pod.Spec.Containers[0].Image = *flagProbeImage
			// The reply names the client address the pod saw.
			pod.Spec.Containers[0].Command = append(pod.Spec.Containers[0].Command, "--reply-peer")
			pod.Spec.Containers[0].Command[0] = *flagProbePath
			pods = append(pods, pod)
		}
	}
	running, err := e2e.CreatePodsAndWait(ctx, cs, 3*time.Minute, pods...)
	Expect(err).NotTo(HaveOccurred())
	ips := map[string]netip.Addr{}
	var probes []isolation.ProbeEndpoint
	for _, p := range running {
		ip, err := netip.ParseAddr(p.Status.PodIP)
		Expect(err).NotTo(HaveOccurred())
		name := p.Namespace + "/" + p.Name
		ips[name] = ip
		logf("  %-20s %-15s on %s", name, ip, p.Spec.NodeName)
	}
	for name, ext := range out.byPeer {
		ips[name] = ext.IP
	}
	for _, n := range topo.PeerNames() {
		if ext, ok := out.byPeer[n]; ok {
			probes = append(probes, isolation.ProbeEndpoint{Name: n, Container: ext.Container, IP: ext.IP})
			continue
		}
		ns, pod := splitName(n)
		probes = append(probes, isolation.ProbeEndpoint{Name: n, Namespace: ns, Pod: pod, IP: ips[n]})
	}
	peers, err := topo.Peers(ips)
	Expect(err).NotTo(HaveOccurred())
	logf("deployed %d probe pods in %d namespaces in %s", len(running), len(topo.Namespaces), time.Since(start).Round(time.Millisecond))

	world = &testWorld{
		topo: topo, cases: cases, names: topo.PeerNames(), ips: ips, peers: peers, probes: probes,
		profile: profile, cs: cs, outside: out,
		runner: isolation.Runner{
			Prober: isolation.ByRunner{
				Pod:       &isolation.ExecProber{Config: rc, Client: cs, Command: *flagProbePath, Timeout: *flagTimeout},
				Container: &isolation.DockerProber{Command: *flagProbePath, Timeout: *flagTimeout},
			},
			Parallel: *flagParallel,
			Settle:   *flagSettle,
		},
	}
	// A plugin still enforcing rules of policies deleted before this run
	// (a reused cluster) would fail cases for reasons not theirs.
	expectDataPlaneFollowsPolicies(ctx, "before the first case")
	report.r = isolation.Report{Suite: "data-plane isolation", Target: fmt.Sprintf("%s; network plugin profile %s (ipBlock matches pod addresses: %v)", cluster.Kubeconfig, profile.Name, profile.IPBlockMatchesPods), Started: time.Now()}
	if out.on() {
		for name, ext := range out.byPeer {
			report.r.Notes = append(report.r.Notes, fmt.Sprintf("%s is outside the cluster: Docker container %s on network %s at %s (not a pod), routed to the pod CIDRs through the nodes: %v", name, ext.Container, ext.Network, ext.IP, out.routes))
		}
	} else {
		report.r.Notes = append(report.r.Notes, "no workload outside the cluster: "+out.why+"; the external cells and the ipblock-external cases did not run")
	}
}, NodeTimeout(25*time.Minute))

var _ = AfterSuite(func(ctx SpecContext) {
	if len(report.r.Cases) > 0 {
		fmt.Fprintf(os.Stderr, "\nisolation: full matrix time per case (%d pods x %d pods x %d port/protocols, first pass; goal < 60s):\n",
			len(world.names), len(world.names), len(world.cases))
		for _, c := range report.r.Cases {
			verdict := "PASS"
			if !c.Passed() {
				verdict = "FAIL"
			}
			fmt.Fprintf(os.Stderr, "  %-14s %-24s %8s  %s\n", c.ID, c.Name, c.MatrixTime.Round(time.Millisecond), verdict)
		}
		paths, err := report.r.WriteFiles(*flagReports, "isolation")
		Expect(err).NotTo(HaveOccurred())
		for _, p := range paths {
			abs, _ := filepath.Abs(p)
			logf("report: %s", abs)
			fmt.Fprintf(os.Stderr, "isolation report: %s\n", abs)
		}
	}
	if world != nil && !*flagKeepNS {
		start := time.Now()
		world.outside.stop(ctx)
		if world.cs != nil {
			Expect(deleteNamespaces(ctx, world.cs, world.topo)).To(Succeed())
		}
		logf("deleted the suite's namespaces and containers in %s", time.Since(start).Round(time.Millisecond))
	}
	Expect(cluster.Teardown(ctx)).To(Succeed())
}, NodeTimeout(10*time.Minute))

// deleteNamespaces deletes the topology's namespaces at once and waits
// until all are gone.
func deleteNamespaces(ctx context.Context, cs kubernetes.Interface, topo isolation.Topology) error {
	names := make([]string, len(topo.Namespaces))
	for i, ns := range topo.Namespaces {
		names[i] = ns.Name
	}
	return e2e.DeleteNamespaces(ctx, cs, 5*time.Minute, names...)
}

// detectProfile picks the model's network plugin profile.
func detectProfile(ctx context.Context, cs kubernetes.Interface, name string) (isolation.Profile, error) {
	if name != "auto" {
		return isolation.ProfileByName(name)
	}
	_, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "cilium", metav1.GetOptions{})
	switch {
	case err == nil:
		return isolation.Cilium, nil
	case apierrors.IsNotFound(err):
		return isolation.Upstream, nil
	}
	return isolation.Profile{}, fmt.Errorf("detect the network plugin: %w", err)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func splitName(n string) (ns, pod string) {
	for i := range n {
		if n[i] == '/' {
			return n[:i], n[i+1:]
		}
	}
	return "", n
}
