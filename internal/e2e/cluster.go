// Package e2e holds what the kind-based end-to-end suites (suites/smoke,
// suites/isolation, ...) share: flags, creating or reusing the offline kind
// cluster through sigs.k8s.io/e2e-framework, loading our images, probe pods
// and running commands in pods.
//
// A suite wires it up like this (Ginkgo v2):
//
//	var cfg *envconf.Config
//	var cluster *e2e.Cluster
//
//	func TestMain(m *testing.M) {
//		cfg = e2e.MustParseFlags() // e2e-framework flags: --kubeconfig, --namespace, ...
//		os.Exit(m.Run())
//	}
//
//	var _ = BeforeSuite(func(ctx SpecContext) {
//		var err error
//		cluster, err = e2e.Setup(ctx, cfg, e2e.Options{})
//		Expect(err).NotTo(HaveOccurred())
//	}, NodeTimeout(15*time.Minute))
//
//	var _ = AfterSuite(func(ctx SpecContext) { Expect(cluster.Teardown(ctx)).To(Succeed()) })
//
// Which cluster is used:
//   - --kubeconfig PATH (or $KUBECONFIG): that existing cluster; nothing is
//     created or deleted. Our images must already be there (`make cluster`
//     loads them) unless Options.LoadImages is set.
//   - otherwise a kind cluster named $CLUSTER (default "fenceproof") is
//     created from the node image of `make cluster-image` through
//     e2e-framework's kind provider, or reused when it already exists. A
//     cluster this package created is deleted by Teardown unless
//     KEEP_CLUSTER=1.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"
	"sigs.k8s.io/e2e-framework/support"
	"sigs.k8s.io/e2e-framework/support/kind"
)

// Image names of our own images, built by `make cluster-image` and loaded
// into the cluster with `kind load image-archive`. Pods using them must set
// imagePullPolicy Never or IfNotPresent: nothing can be pulled.
const (
	FenceproofImage = "fenceproof:dev"
	ProbeImage      = "fenceproof-probe:dev"
	// NodeImage is the kind node image built by `make cluster-image`.
	NodeImage = "fenceproof/kind-node:v1.32.4"
	// DefaultClusterName is the kind cluster name when $CLUSTER is unset.
	DefaultClusterName = "fenceproof"
)

var (
	parseOnce sync.Once
	parsedCfg *envconf.Config
	parseErr  error
)

// ParseFlags registers and parses e2e-framework's flags (--kubeconfig,
// --namespace, --labels, ...) on the global flag set and returns the
// resulting configuration. Call it from TestMain before m.Run, so that
// `go test ./suites/x -args --kubeconfig=...` is accepted; it is safe to call
// more than once (later calls return the first result).
func ParseFlags() (*envconf.Config, error) {
	parseOnce.Do(func() { parsedCfg, parseErr = envconf.NewFromFlags() })
	return parsedCfg, parseErr
}

// MustParseFlags is ParseFlags that exits the test binary with status 2 on a
// flag error.
func MustParseFlags() *envconf.Config {
	cfg, err := ParseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	return cfg
}

// Options tune Setup. The zero value is what the suites normally want.
type Options struct {
	// ClusterName of the kind cluster to create or reuse; default $CLUSTER,
	// else DefaultClusterName.
	ClusterName string
	// LoadImages loads our image archives even into a cluster given by
	// --kubeconfig (it must then be a kind cluster named ClusterName).
	// Clusters that Setup creates or reuses through kind always get them.
	LoadImages bool
	// ReadyTimeout bounds the wait for nodes, Cilium and CoreDNS; default 10m.
	ReadyTimeout time.Duration
	// Log receives progress lines; default: standard error.
	Log func(format string, args ...any)
	// World names the singleton world the suite deploys (fixed namespaces),
	// if any: Setup holds its lock exclusively until Teardown, so a second
	// run of a suite deploying the same world waits for this one (see
	// ClusterLock).
	World string
}

// Cluster is the cluster a suite runs against.
type Cluster struct {
	// Name of the kind cluster ("" for a cluster given only by kubeconfig).
	Name string
	// Kubeconfig is the path of its kubeconfig file.
	Kubeconfig string
	// Created is true when Setup created the cluster (Teardown deletes it).
	Created bool
	// Config is the e2e-framework configuration, with its client.
	Config *envconf.Config
	// Clientset is a client-go clientset for the same cluster.
	Clientset kubernetes.Interface

	ctx  context.Context // holds the provider for envfuncs.DestroyCluster
	log  func(format string, args ...any)
	lock *ClusterLock // held shared from Setup to Teardown (with the world's, if any)
}

// Setup creates or reuses the cluster (see the package documentation),
// waits until it is ready (all nodes Ready, Cilium and CoreDNS available) and
// makes sure our images are loaded. It prints what it does and how long it took.
func Setup(ctx context.Context, cfg *envconf.Config, opts Options) (*Cluster, error) {
	start := time.Now()
	if cfg == nil {
		cfg = envconf.New()
	}
	if opts.Log == nil {
		opts.Log = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05")+" e2e: "+format+"\n", args...)
		}
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 10 * time.Minute
	}
	if opts.ClusterName == "" {
		opts.ClusterName = envOr("CLUSTER", DefaultClusterName)
	}
	c := &Cluster{Config: cfg, ctx: ctx, log: opts.Log}

	kubeconfig := cfg.KubeconfigFile()
	if kubeconfig == "" {
		kubeconfig = os.Getenv("KUBECONFIG")
	}
	if kubeconfig != "" {
		opts.Log("using the existing cluster of kubeconfig %s", kubeconfig)
		cfg.WithKubeconfigFile(kubeconfig)
		c.Kubeconfig = kubeconfig
		if opts.LoadImages {
			c.Name = opts.ClusterName
			if err := c.loadImages(ctx); err != nil {
				return nil, err
			}
		}
	} else {
		if err := c.createOrReuse(ctx, opts); err != nil {
			return nil, err
		}
	}

	t := time.Now()
	lock, err := LockShared(ctx, c.Kubeconfig, opts.World)
	if err != nil {
		return nil, err
	}
	c.lock = lock
	if d := time.Since(t); d > time.Second {
		why := "another suite had the cluster to itself"
		if opts.World != "" {
			why += ", or another run had the world " + opts.World
		}
		opts.Log("waited %s for the cluster lock (%s)", d.Round(time.Second), why)
	}
	cs, err := kubernetes.NewForConfig(cfg.Client().RESTConfig())
	if err != nil {
		c.lock.Unlock()
		return nil, fmt.Errorf("e2e: client for %s: %w", c.Kubeconfig, err)
	}
	c.Clientset = cs
	if err := WaitClusterReady(ctx, cs, opts.ReadyTimeout, opts.Log); err != nil {
		c.lock.Unlock()
		return nil, err
	}
	opts.Log("cluster ready in %s", time.Since(start).Round(time.Second))
	return c, nil
}

// createOrReuse runs e2e-framework's kind provider with our node image, our
// kind binary and the docker wrapper (see fixtures/cluster/README.md).
func (c *Cluster) createOrReuse(ctx context.Context, opts Options) error {
	paths, err := findPaths()
	if err != nil {
		return err
	}
	// The provider shells out to kind, and kind to docker: our wrapper first.
	os.Setenv("PATH", paths.dockerWrapper+string(os.PathListSeparator)+os.Getenv("PATH"))

	c.Name = opts.ClusterName
	provider := kind.NewProvider()
	exists := kindClusterExists(paths.kind, c.Name)
	if exists {
		opts.Log("reusing kind cluster %s", c.Name)
	} else {
		opts.Log("creating kind cluster %s from %s (takes about a minute when warm)", c.Name, NodeImage)
	}
	create := envfuncs.CreateClusterWithConfig(provider, c.Name, paths.kindConfig,
		kind.WithImage(NodeImage), kind.WithPath(paths.kind))
	ctx, err = create(ctx, c.Config)
	if err != nil {
		return fmt.Errorf("e2e: kind cluster %s: %w (is the node image built? run `make cluster-image`)", c.Name, err)
	}
	c.ctx = ctx
	c.Created = !exists
	c.Kubeconfig = c.Config.KubeconfigFile()
	// As cluster.sh up: before any suite (see the file: a kube-apiserver bug).
	res, err := resources.New(c.Config.Client().RESTConfig())
	if err != nil {
		return fmt.Errorf("e2e: %w", err)
	}
	dir, file := filepath.Split(paths.anchor)
	if err := decoder.DecodeEachFile(ctx, os.DirFS(dir), file, decoder.CreateIgnoreAlreadyExists(res)); err != nil {
		return fmt.Errorf("e2e: apply %s: %w", paths.anchor, err)
	}
	return c.loadImages(ctx)
}

// loadImages loads the archives `make cluster-image` wrote for our images
// from this checkout's sources (.cache/own-images, a link into the cache).
func (c *Cluster) loadImages(ctx context.Context) error {
	paths, err := findPaths()
	if err != nil {
		return err
	}
	archives, _ := filepath.Glob(filepath.Join(paths.ownImages, "*.tar"))
	if len(archives) == 0 {
		return fmt.Errorf("e2e: no image archives in %s: run `make cluster-image`", paths.ownImages)
	}
	os.Setenv("PATH", paths.dockerWrapper+string(os.PathListSeparator)+os.Getenv("PATH"))
	k := kind.NewCluster(c.Name).WithPath(paths.kind)
	for _, a := range archives {
		c.log("loading %s into %s", filepath.Base(a), c.Name)
		if err := k.(support.E2EClusterProviderWithImageLoader).LoadImageArchive(ctx, a); err != nil {
			return fmt.Errorf("e2e: %w", err)
		}
	}
	return nil
}

// Teardown deletes the cluster when Setup created it, unless KEEP_CLUSTER=1.
// It is safe on a nil Cluster (a failed Setup).
func (c *Cluster) Teardown(ctx context.Context) error {
	if c == nil {
		return nil
	}
	_ = c.lock.Unlock()
	if !c.Created {
		return nil
	}
	if os.Getenv("KEEP_CLUSTER") == "1" {
		c.log("KEEP_CLUSTER=1: keeping cluster %s (kubeconfig %s)", c.Name, c.Kubeconfig)
		return nil
	}
	c.log("deleting kind cluster %s", c.Name)
	_, err := envfuncs.DestroyCluster(c.Name)(c.ctx, c.Config)
	return err
}

// Exclusive has the cluster to this suite alone until release is called:
// it waits until no other suite holds the cluster lock (see ClusterLock).
// For a spec that disrupts every pod of a node.
func (c *Cluster) Exclusive(ctx context.Context) (release func() error, err error) {
	t := time.Now()
	release, err = c.lock.Exclusive(ctx)
	if err == nil && time.Since(t) > time.Second {
		c.log("waited %s for the other suites to finish before taking the cluster alone", time.Since(t).Round(time.Second))
	}
	return release, err
}

// WaitClusterReady waits until at least one node exists and all are Ready,
// and the Cilium agents and CoreDNS are available.
func WaitClusterReady(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, logf func(string, ...any)) error {
	checks := []struct {
		what string
		ok   func(context.Context) (bool, error)
	}{
		{"all nodes Ready", func(ctx context.Context) (bool, error) {
			nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil || len(nodes.Items) == 0 {
				return false, nil
			}
			for _, n := range nodes.Items {
				if !nodeReady(&n) {
					return false, nil
				}
			}
			return true, nil
		}},
		{"Cilium agents available", func(ctx context.Context) (bool, error) {
			ds, err := cs.AppsV1().DaemonSets("kube-system").Get(ctx, "cilium", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			return ds.Status.DesiredNumberScheduled > 0 && ds.Status.NumberAvailable == ds.Status.DesiredNumberScheduled, nil
		}},
		{"CoreDNS available", func(ctx context.Context) (bool, error) {
			d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
			if err != nil || d.Spec.Replicas == nil {
				return false, nil
			}
			return d.Status.AvailableReplicas == *d.Spec.Replicas, nil
		}},
	}
	for _, chk := range checks {
		t0 := time.Now()
		err := wait.PollUntilContextTimeout(ctx, 2*time.Second, timeout, true, chk.ok)
		if err != nil {
			return fmt.Errorf("e2e: waiting for %s: %w", chk.what, err)
		}
		if logf != nil {
			logf("ready: %s (%s)", chk.what, time.Since(t0).Round(time.Second))
		}
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WorkerNodes returns the names of the nodes without the control-plane
// role, sorted by name (kind names them <cluster>-worker, -worker2, ...).
func WorkerNodes(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!node-role.kubernetes.io/control-plane"})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	return names, nil
}

// paths are the files of the repository and the build cache Setup uses.
type paths struct {
	kind, kindConfig, anchor, dockerWrapper, ownImages string
}

// findPaths locates the repository (from this source file, so it works from
// any suite directory) and the cache ($FENCEPROOF_CACHE, else
// /var/cache/fenceproof for root, else ~/.cache/fenceproof).
func findPaths() (paths, error) {
	p, err := findRepoPaths()
	if err != nil {
		return p, err
	}
	if _, err := os.Stat(p.kind); err != nil {
		return p, fmt.Errorf("e2e: no kind binary at %s: run `make cluster-image` (or pass --kubeconfig for an existing cluster)", p.kind)
	}
	return p, nil
}

// CacheDir is the build cache of the offline cluster: $FENCEPROOF_CACHE,
// else /var/cache/fenceproof for root, else ~/.cache/fenceproof (as
// fixtures/cluster/lib.sh).
func CacheDir() string {
	if c := os.Getenv("FENCEPROOF_CACHE"); c != "" {
		return c
	}
	if os.Geteuid() == 0 {
		return "/var/cache/fenceproof"
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "/var/cache/fenceproof"
	}
	return filepath.Join(d, "fenceproof")
}

// findRepoPaths is findPaths without requiring the kind binary.
func findRepoPaths() (paths, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return paths{}, errors.New("e2e: cannot locate the repository")
	}
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	cache := CacheDir()
	p := paths{
		kind:          filepath.Join(cache, "out", "kind", "kind"),
		kindConfig:    filepath.Join(repo, "fixtures", "cluster", "kind-config.yaml"),
		anchor:        filepath.Join(repo, "fixtures", "cluster", "vap-param-anchor.yaml"),
		dockerWrapper: filepath.Join(repo, "fixtures", "cluster", "docker-wrapper"),
		ownImages:     filepath.Join(repo, ".cache", "own-images"),
	}
	return p, nil
}

// kindClusterExists tells whether kind cluster name exists with every node
// container running; a cluster with stopped nodes is deleted (see below).
func kindClusterExists(kindPath, name string) bool {
	out, err := exec.Command(kindPath, "get", "clusters").Output()
	if err != nil {
		return false
	}
	found := false
	for _, l := range strings.Split(string(out), "\n") {
		found = found || strings.TrimSpace(l) == name
	}
	if !found {
		return false
	}
	// A cluster whose node containers stopped (dockerd or the machine
	// restarted; kind does not start them again) would never become
	// Ready: delete it so that it is created anew, as cluster.sh does.
	states, err := exec.Command("docker", "ps", "-a", "--filter", "label=io.x-k8s.kind.cluster="+name,
		"--format", "{{.State}}").Output()
	if err == nil && len(strings.Fields(string(states))) > 0 && allRunning(string(states)) {
		return true
	}
	exec.Command(kindPath, "delete", "cluster", "--name", name).Run()
	return false
}

// allRunning tells whether every line of docker's {{.State}} output is
// "running".
func allRunning(states string) bool {
	for _, s := range strings.Fields(states) {
		if s != "running" {
			return false
		}
	}
	return true
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// EnvEnable is the environment variable that enables the e2e suites.
const EnvEnable = "FENCEPROOF_E2E"

// Enabled reports whether the e2e suites should run: $FENCEPROOF_E2E=1 (the
// make targets set it) or an explicit --kubeconfig flag. Without either,
// `go test ./...` (make test) skips them instead of creating a cluster.
func Enabled(cfg *envconf.Config) bool {
	return os.Getenv(EnvEnable) == "1" || (cfg != nil && cfg.KubeconfigFile() != "")
}

// SkipReason says how to run a skipped suite.
const SkipReason = "e2e suite skipped: set " + EnvEnable + "=1 (to create or reuse the kind cluster) or pass -args --kubeconfig=PATH; `make e2e-smoke` does it for you"
