package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fenceproof/fenceproof/fencing/networkfence"
	"github.com/fenceproof/fenceproof/fencing/report"
	"github.com/fenceproof/fenceproof/rulebook"
)

// Labels and annotations of what a run creates.
const (
	LabelRun    = "fenceproof.io/fencing-run" // on every object a run creates; its value is the run's id
	LabelWriter = "fenceproof.io/writer"      // on a writer's pods: the writer id
	LabelRole   = "fenceproof.io/role"        // writer, reader, agent
	partOf      = "app.kubernetes.io/part-of"
)

// Status is how a run ended; its exit status is that of fenceproof
// sanity's verdict of the same meaning.
type Status string

const (
	StatusPass        Status = "PASS"
	StatusFail        Status = "FAIL"
	StatusIncomplete  Status = "INCOMPLETE"  // undecidable, interrupted, or the setup failed
	StatusUnreachable Status = "UNREACHABLE" // the API server did not answer
	StatusUsage       Status = "USAGE"       // a name given does not exist, or the flags contradict the cluster
)

// ExitCode is the command's exit status: fenceproof sanity's (rulebook).
func (s Status) ExitCode() int {
	switch s {
	case StatusPass:
		return rulebook.ExitConforms
	case StatusFail:
		return rulebook.ExitNotConform
	case StatusUsage:
		return rulebook.ExitUsage
	case StatusUnreachable:
		return rulebook.ExitUnreachable
	}
	return rulebook.ExitIncomplete
}

// Outcome is what a run produced: the report's Run and the files written.
type Outcome struct {
	report.Run
	Reports []string
}

// runner is one run in progress.
type runner struct {
	cfg   Config
	name  string
	start time.Time
	cs    kubernetes.Interface
	dyn   dynamic.Interface
	nf    networkfence.Fences

	mu    sync.Mutex
	steps []report.Step
	out   Outcome

	// What cleanup must know beyond the labels: whether the node is cut
	// off, and how to restore it.
	cut             bool
	cutCmd, restore string
	writers         []*writerSpec
	agents          map[string]string // node -> agent pod
}

// failure ends a run early with a status and a reason.
type failure struct {
	status Status
	err    error
}

func (f *failure) Error() string { return f.err.Error() }

func fail(status Status, format string, args ...any) error {
	return &failure{status, fmt.Errorf(format, args...)}
}

// setup marks err (if any) as a setup failure: INCOMPLETE.
func setup(err error, what string) error {
	if err == nil {
		return nil
	}
	var f *failure
	if errors.As(err, &f) {
		return err
	}
	return &failure{StatusIncomplete, fmt.Errorf("%s: %w", what, err)}
}

// Cleanup removes what run cfg.Name left on the cluster (a run that was
// killed): it restores cfg.Node with cfg.RestoreCommand when given, lifts
// the run's fences, removes its taint, deletes its objects.
func Cleanup(ctx context.Context, cfg Config) *Outcome {
	r := &runner{cfg: cfg, name: cfg.Name, start: time.Now(), agents: map[string]string{}}
	if err := r.connect(ctx); err != nil {
		var f *failure
		errors.As(err, &f)
		r.out.Status, r.out.Reason = string(f.status), f.err.Error()
		return &r.out
	}
	r.cut, r.restore = cfg.RestoreCommand != "", cfg.RestoreCommand
	r.cleanup()
	r.out.Status = string(StatusPass)
	if len(r.out.Leftovers) > 0 {
		r.out.Status = string(StatusIncomplete)
	}
	return &r.out
}

// Run runs cfg (validated) until ctx ends or the run is done, cleans up,
// and writes the reports.
func Run(ctx context.Context, cfg Config) *Outcome {
	r := &runner{cfg: cfg, name: cfg.Name, start: time.Now(), agents: map[string]string{}}
	if r.name == "" {
		b := make([]byte, 3)
		rand.Read(b)
		r.name = "fp-" + time.Now().UTC().Format("0102-1504") + "-" + hex.EncodeToString(b)
	}
	r.out.Meta = report.Meta{Name: r.name, Driver: cfg.Driver, Class: cfg.Class, Node: cfg.Node, Namespace: cfg.Namespace,
		Storage: cfg.Storage, Mode: "fence", CIDRsFrom: cfg.CIDRsFrom, StartNs: r.start.UnixNano()}
	if cfg.Rehearsal {
		r.out.Meta.Mode = "rehearsal"
	}
	r.step(report.StepInfo, "run %s: fence %s through %s, %s writers, reports in %s", r.name, cfg.Node, r.via(), cfg.Storage, r.reportDir())
	err := r.connect(ctx)
	if err == nil {
		err = r.checkNames(ctx)
	}
	if err == nil {
		runCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		err = r.main(runCtx)
		cancel()
		if ctx.Err() != nil {
			err = fail(StatusIncomplete, "interrupted (%v)", context.Cause(ctx))
		} else if runCtx.Err() != nil && err != nil {
			err = fail(StatusIncomplete, "the run's budget (--timeout %s) ran out: %v", cfg.Timeout, err)
		}
		r.cleanup()
	}
	r.finish(err)
	return &r.out
}

func (r *runner) via() string {
	if r.cfg.Class != "" {
		return "NetworkFenceClass " + r.cfg.Class
	}
	return "driver " + r.cfg.Driver
}

// step prints and records one progress line, now.
func (r *runner) step(kind, format string, args ...any) int64 {
	return r.stepAt(time.Now(), kind, format, args...)
}

// connect builds the clients and checks that the API server answers and
// the names given exist.
func (r *runner) connect(ctx context.Context) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = r.cfg.Kubeconfig
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fail(StatusUsage, "kubeconfig: %v", err)
	}
	rc.QPS, rc.Burst = 50, 100
	r.out.Meta.Cluster = rc.Host
	if r.cs, err = kubernetes.NewForConfig(rc); err != nil {
		return fail(StatusUsage, "kubeconfig: %v", err)
	}
	if r.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return fail(StatusUsage, "kubeconfig: %v", err)
	}
	r.nf = networkfence.Fences{Client: r.dyn}
	rc.Timeout = 30 * time.Second // the version probe only: reset below
	probe, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fail(StatusUsage, "kubeconfig: %v", err)
	}
	rc.Timeout = 0
	v, err := probe.Discovery().ServerVersion()
	if err != nil {
		return fail(StatusUnreachable, "the API server at %s does not answer: %v", rc.Host, err)
	}
	r.step(report.StepInfo, "cluster %s (Kubernetes %s)", rc.Host, v.GitVersion)
	return nil
}

// checkNames checks the nodes, the class or driver and the CSIAddonsNodes.
func (r *runner) checkNames(ctx context.Context) error {
	if _, err := r.cs.CoreV1().Nodes().Get(ctx, r.cfg.Node, metav1.GetOptions{}); err != nil {
		return fail(StatusUsage, "--node %s: %v", r.cfg.Node, err)
	}
	peer, err := r.peerNode(ctx)
	if err != nil {
		return err
	}
	r.cfg.PeerNode, r.out.Meta.PeerNode = peer, peer
	if _, err := r.nf.Client.Resource(networkfence.NetworkFenceGVR).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return fail(StatusUsage, "the cluster has no NetworkFence API (csi-addons' CRDs): %v", err)
	}
	driver := r.cfg.Driver
	if r.cfg.Class != "" {
		c, err := r.nf.Client.Resource(networkfence.NetworkFenceClassGVR).Get(ctx, r.cfg.Class, metav1.GetOptions{})
		if err != nil {
			return fail(StatusUsage, "--class %s: %v", r.cfg.Class, err)
		}
		prov, _, _ := unstructured.NestedString(c.Object, "spec", "provisioner")
		if driver != "" && prov != driver {
			return fail(StatusUsage, "--class %s is for driver %q, not --driver %q", r.cfg.Class, prov, driver)
		}
		driver = prov
		r.out.Meta.Driver = prov
	}
	state, err := networkfence.DriverNodes(ctx, r.dyn, driver)
	if err != nil {
		return fail(StatusIncomplete, "CSIAddonsNodes: %v", err)
	}
	if len(state) == 0 {
		return fail(StatusUsage, "no CSIAddonsNode of driver %q: is its csi-addons sidecar deployed?", driver)
	}
	r.step(report.StepInfo, "driver %s: CSIAddonsNodes %s", driver, strings.Join(state, "; "))
	return nil
}

// peerNode is --peer-node, or the first other schedulable, Ready node
// without the control-plane role.
func (r *runner) peerNode(ctx context.Context) (string, error) {
	if r.cfg.PeerNode != "" {
		if r.cfg.PeerNode == r.cfg.Node {
			return "", fail(StatusUsage, "--peer-node must differ from --node")
		}
		if _, err := r.cs.CoreV1().Nodes().Get(ctx, r.cfg.PeerNode, metav1.GetOptions{}); err != nil {
			return "", fail(StatusUsage, "--peer-node %s: %v", r.cfg.PeerNode, err)
		}
		return r.cfg.PeerNode, nil
	}
	nodes, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "!node-role.kubernetes.io/control-plane"})
	if err != nil {
		return "", fail(StatusIncomplete, "listing nodes: %v", err)
	}
	var names []string
	for _, n := range nodes.Items {
		if n.Name != r.cfg.Node && !n.Spec.Unschedulable && nodeReady(&n) {
			names = append(names, n.Name)
		}
	}
	if len(names) == 0 {
		return "", fail(StatusUsage, "no other schedulable Ready worker than %s: give --peer-node", r.cfg.Node)
	}
	sort.Strings(names)
	return names[0], nil
}

// finish sets the status from err and the judge's result, and writes the
// reports.
func (r *runner) finish(err error) {
	o := &r.out
	o.Meta.EndNs = time.Now().UnixNano()
	var f *failure
	switch {
	case errors.As(err, &f):
		o.Status, o.Reason = string(f.status), f.err.Error()
	case err != nil:
		o.Status, o.Reason = string(StatusIncomplete), err.Error()
	case o.Result != nil:
		o.Status = string(o.Result.Verdict)
	default:
		o.Status, o.Reason = string(StatusIncomplete), "no verdict"
	}
	if len(o.Leftovers) > 0 && o.Status == string(StatusPass) {
		o.Status, o.Reason = string(StatusIncomplete), "cleanup left: "+strings.Join(o.Leftovers, "; ")
	}
	r.mu.Lock()
	o.Steps = append([]report.Step(nil), r.steps...)
	r.mu.Unlock()
	if o.Status != string(StatusUsage) {
		paths, werr := report.Write(r.reportDir(), &o.Run)
		if werr != nil {
			fmt.Fprintf(r.cfg.Out, "writing the reports: %v\n", werr)
		}
		o.Reports = paths
	}
}

func (r *runner) reportDir() string { return r.cfg.Reports + "/" + r.name }

// ignoreNotFound is err unless the object was not there.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
