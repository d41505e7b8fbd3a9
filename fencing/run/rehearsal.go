package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fenceproof/fenceproof/fencing/judge"
	"github.com/fenceproof/fenceproof/fencing/report"
)

// OutOfServiceTaint is Kubernetes' node.kubernetes.io/out-of-service
// taint (non-graceful node shutdown, GA in 1.28): on a NotReady node it
// has the pods force-deleted and their volumes detached, so that a
// StatefulSet's pod starts elsewhere. Safe only once the node is fenced:
// what the rehearsal proves.
var OutOfServiceTaint = corev1.Taint{Key: "node.kubernetes.io/out-of-service", Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// annotationTaint marks a node the run tainted (cleanup by run id).
const annotationTaint = "fenceproof.io/out-of-service-by"

// The kind defaults: the node is a Docker container whose kubelet stops,
// while its pods keep running and writing (the split brain fencing is for).
const (
	kindCut     = `docker exec "$1" systemctl stop kubelet`
	kindRestore = `docker exec "$1" systemctl start kubelet`
)

// cutCommands settles how the node is cut off and restored: the commands
// given, or, for a kind node container, stopping its kubelet.
func (r *runner) cutCommands(ctx context.Context) error {
	if r.cfg.CutCommand != "" {
		r.cutCmd, r.restore = r.cfg.CutCommand, r.cfg.RestoreCommand
		return nil
	}
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", `{{index .Config.Labels "io.x-k8s.kind.cluster"}}`, r.cfg.Node).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return fail(StatusUsage, "--rehearsal: node %s is not a kind node container here: give --cut-command and --restore-command", r.cfg.Node)
	}
	r.cutCmd, r.restore = kindCut, kindRestore
	return nil
}

// hook runs a cut or restore command with the node's name in $1 and $NODE.
func (r *runner) hook(ctx context.Context, what, command string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command, "fenceproof-"+what, r.cfg.Node)
	cmd.Env = append(os.Environ(), "NODE="+r.cfg.Node)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s command %q: %v: %s", what, command, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// rehearse is the DR rehearsal: the application writer app runs on the
// node; the node is cut off, fenced, goes NotReady, is tainted out of
// service; app must move to peer and write there; the node is restored,
// unfenced, the taint removed.
func (r *runner) rehearse(ctx context.Context, app *writerSpec, peer string) (judge.Fence, error) {
	var f judge.Fence
	// OnDelete: the running pod keeps its affinity; its replacement may
	// also run on peer.
	app.nodes = append(app.nodes, peer)
	setNodes(&app.sts.Spec.Template.Spec, app.nodes)
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"affinity": app.sts.Spec.Template.Spec.Affinity}}}})
	if _, err := r.cs.AppsV1().StatefulSets(r.cfg.Namespace).Patch(ctx, app.id, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return f, setup(err, "allowing "+app.id+" on "+peer)
	}
	r.cut = true // from here on cleanup restores first
	if err := r.hook(ctx, "cut", r.cutCmd); err != nil {
		return f, fail(StatusIncomplete, "%v", err)
	}
	r.step(report.StepCut, "node %s cut off (%s)", r.cfg.Node, r.cutCmd)
	f, err := r.fence(ctx)
	if err != nil {
		return f, err
	}
	if err := r.waitReady(ctx, false); err != nil {
		return f, err
	}
	r.step(report.StepNotReady, "node %s NotReady", r.cfg.Node)
	if err := r.setTaint(ctx, r.cfg.Node, true); err != nil {
		return f, setup(err, "tainting "+r.cfg.Node)
	}
	r.step(report.StepTaint, "node %s tainted %s=%s:%s", r.cfg.Node, OutOfServiceTaint.Key, OutOfServiceTaint.Value, OutOfServiceTaint.Effect)
	if err := r.waitMoved(ctx, app, peer, f.AckNs); err != nil {
		return f, err
	}
	r.observe(ctx, r.cfg.Observe)
	if err := r.hook(ctx, "restore", r.restore); err != nil {
		return f, fail(StatusIncomplete, "%v", err)
	}
	r.step(report.StepRestore, "node %s restored (%s)", r.cfg.Node, r.restore)
	if err := r.waitReady(ctx, true); err != nil {
		return f, err
	}
	r.cut = false
	r.step(report.StepInfo, "node %s Ready", r.cfg.Node)
	// The kubelet back stops the pods the taint deleted: the stale writer
	// must be gone before the fence is lifted, or it writes again.
	if err := r.waitStaleGone(ctx, app); err != nil {
		return f, err
	}
	if err := r.unfence(ctx, &f); err != nil {
		return f, err
	}
	if err := r.setTaint(ctx, r.cfg.Node, false); err != nil {
		return f, setup(err, "removing the taint from "+r.cfg.Node)
	}
	r.step(report.StepUntaint, "taint removed from %s", r.cfg.Node)
	return f, nil
}

// waitMoved waits until app runs on peer and has had writes acknowledged
// there after the ack.
func (r *runner) waitMoved(ctx context.Context, app *writerSpec, peer string, ack int64) error {
	deadline := time.Now().Add(nodeTimeout)
	for {
		p, err := r.cs.CoreV1().Pods(r.cfg.Namespace).Get(ctx, app.id+"-0", metav1.GetOptions{})
		if err == nil && p.Spec.NodeName == peer && p.Status.Phase == corev1.PodRunning {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fail(StatusFail, "the workload did not move: %s is not running on %s %s after the taint (%s)", app.id+"-0", peer, nodeTimeout, podState(p))
		}
		time.Sleep(time.Second)
	}
	a, err := r.waitWrites(ctx, app, peer, ack, 1, nodeTimeout)
	if err != nil {
		return err
	}
	r.step(report.StepMoved, "%s moved to %s: first write acknowledged there %.3f s after the ack", app.id, peer, float64(a.SendNs-ack)/1e9)
	return nil
}

// waitStaleGone waits until the application's stale incarnation on the
// fenced node has stopped: its pod object went with the taint, so what
// tells is its log there, which must not grow for staleQuiet (every
// contract writer logs each attempt, refused ones too, at least once a
// second).
func (r *runner) waitStaleGone(ctx context.Context, app *writerSpec) error {
	deadline := time.Now().Add(podTimeout)
	last, since := -1, time.Now()
	for {
		b, err := r.agentLog(ctx, r.cfg.Node, app.id)
		if n := len(b); err != nil || n != last {
			last, since = n, time.Now() // unread or grown: not (yet) quiet
		}
		if time.Since(since) >= staleQuiet {
			r.step(report.StepInfo, "the stale %s on %s has stopped (its log unchanged for %s)", app.id, r.cfg.Node, staleQuiet)
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fail(StatusIncomplete, "the stale %s on %s still writes %s after the restore", app.id, r.cfg.Node, podTimeout)
		}
		time.Sleep(time.Second)
	}
}

// staleQuiet is how long a writer's log must stay unchanged for it to be
// taken as stopped.
const staleQuiet = 4 * time.Second

// waitReady waits until the node's Ready condition is (or is not) True.
func (r *runner) waitReady(ctx context.Context, ready bool) error {
	deadline := time.Now().Add(nodeTimeout)
	for {
		n, err := r.cs.CoreV1().Nodes().Get(ctx, r.cfg.Node, metav1.GetOptions{})
		if err == nil && nodeReady(n) == ready {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fail(StatusIncomplete, "node %s: Ready is not %v after %s", r.cfg.Node, ready, nodeTimeout)
		}
		time.Sleep(time.Second)
	}
}

// setTaint adds or removes the out-of-service taint on node (and the
// annotation that names the run that set it).
func (r *runner) setTaint(ctx context.Context, node string, on bool) error {
	n, err := r.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == OutOfServiceTaint.Key })
	if on {
		n.Spec.Taints = append(n.Spec.Taints, OutOfServiceTaint)
		n.Annotations = merge(n.Annotations, map[string]string{annotationTaint: r.name})
	} else {
		delete(n.Annotations, annotationTaint)
	}
	_, err = r.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	return err
}
