package run

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/fencing/judge"
	"github.com/fenceproof/fenceproof/fencing/report"
)

// Bounds of the waits: generous for a loaded cluster; nothing asserts speed.
const (
	podTimeout   = 4 * time.Minute
	fenceTimeout = 3 * time.Minute
	nodeTimeout  = 6 * time.Minute
	writingOK    = 5 // acknowledged writes a writer must have before the fence
)

// main is the run between connect and cleanup.
func (r *runner) main(ctx context.Context) error {
	t, err := r.prepare(ctx)
	if err != nil {
		return err
	}
	fenced, peer := r.cfg.Node, r.cfg.PeerNode
	var app *writerSpec
	if r.cfg.Rehearsal {
		if err := r.cutCommands(ctx); err != nil {
			return err
		}
		r.addWriter(t, r.name+"-peer", peer)
		app = r.addWriter(t, r.name+"-app", fenced)
	} else {
		r.addWriter(t, r.name+"-fenced", fenced)
		r.addWriter(t, r.name+"-peer", peer)
	}
	if err := r.startAgents(ctx, fenced, peer); err != nil {
		return err
	}
	if err := r.startWriters(ctx); err != nil {
		return err
	}
	before, err := r.measureClocks(ctx, "before")
	if err != nil {
		return err
	}
	var f judge.Fence
	if r.cfg.Rehearsal {
		f, err = r.rehearse(ctx, app, peer)
	} else {
		f, err = r.fenceAndLift(ctx)
	}
	if err != nil {
		return err
	}
	after, err := r.measureClocks(ctx, "after")
	if err != nil {
		return err
	}
	if err := r.stopWriters(ctx); err != nil {
		return err
	}
	in := judge.Input{FencedNode: fenced, Fence: f, Bounds: map[string]time.Duration{}}
	for node, e := range before {
		in.Bounds[node] = max(e.Bound(), after[node].Bound())
	}
	if app != nil {
		in.Moved = app.id
	}
	if err := r.collect(ctx, &in); err != nil {
		return err
	}
	r.out.Input = in
	r.out.Result = judge.Judge(in)
	res := r.out.Result
	r.step(report.StepVerdict, "%s: %d failed, %d undecidable, %d incomplete", res.Verdict, res.Count(judge.SevFail), res.Count(judge.SevUndecidable), res.Count(judge.SevIncomplete))
	if first := res.First(); first != nil {
		r.step(report.StepVerdict, "first: %s", first)
	}
	return nil
}

// prepare makes the namespace and the writers' template.
func (r *runner) prepare(ctx context.Context) (template, error) {
	ns, err := r.cs.CoreV1().Namespaces().Get(ctx, r.cfg.Namespace, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.cfg.Namespace,
			Labels: map[string]string{LabelRun: r.name, partOf: "fenceproof",
				// hostPath volumes (the writers' log copies, the agent).
				"pod-security.kubernetes.io/enforce": "privileged"}}}
		if _, err := r.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return template{}, setup(err, "creating namespace "+r.cfg.Namespace)
		}
		r.step(report.StepInfo, "namespace %s created", r.cfg.Namespace)
	case err != nil:
		return template{}, setup(err, "namespace "+r.cfg.Namespace)
	case ns.DeletionTimestamp != nil:
		return template{}, fail(StatusUsage, "namespace %s is being deleted", r.cfg.Namespace)
	}
	if r.cfg.PodTemplate != "" {
		t, err := loadTemplate(r.cfg.PodTemplate)
		if err != nil {
			return t, fail(StatusUsage, "--pod-template: %v", err)
		}
		return t, nil
	}
	resolved, err := r.resolveStorage(ctx)
	if err != nil {
		return template{}, err
	}
	return r.defaultTemplate(resolved), nil
}

// addWriter declares writer id, first on node.
func (r *runner) addWriter(t template, id, node string) *writerSpec {
	w := &writerSpec{id: id, nodes: []string{node}}
	w.sts = r.writerStatefulSet(t, id, w.nodes)
	r.writers = append(r.writers, w)
	return w
}

// startWriters creates the writers and waits until each has had writingOK
// writes acknowledged.
func (r *runner) startWriters(ctx context.Context) error {
	for _, w := range r.writers {
		if _, err := r.cs.AppsV1().StatefulSets(r.cfg.Namespace).Create(ctx, w.sts, metav1.CreateOptions{}); err != nil {
			return setup(err, "creating writer "+w.id)
		}
	}
	for _, w := range r.writers {
		p, err := r.waitPod(ctx, w.id+"-0", podTimeout, false)
		if err != nil {
			return setup(err, "writer "+w.id)
		}
		if p.Spec.NodeName != w.nodes[0] {
			return fail(StatusIncomplete, "writer %s runs on %s, not %s", w.id, p.Spec.NodeName, w.nodes[0])
		}
		if _, err := r.waitWrites(ctx, w, w.nodes[0], 0, writingOK, podTimeout); err != nil {
			return err
		}
		r.step(report.StepInfo, "writer %s writes on %s", w.id, w.nodes[0])
	}
	return nil
}

// waitWrites waits until writer w's log on node holds n acknowledged
// attempts that started after fromNs (its node's clock), and returns the
// first of them.
func (r *runner) waitWrites(ctx context.Context, w *writerSpec, node string, fromNs int64, n int, timeout time.Duration) (contract.Attempt, error) {
	deadline := time.Now().Add(timeout)
	var got []contract.Attempt
	for {
		got = got[:0]
		b, err := r.agentLog(ctx, node, w.id)
		if err == nil {
			for _, a := range parseAttempts(b) {
				if a.Outcome == contract.OutcomeOK && a.SendNs > fromNs {
					got = append(got, a)
				}
			}
		}
		if len(got) >= n {
			return got[0], nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p, _ := r.cs.CoreV1().Pods(r.cfg.Namespace).Get(ctx, w.id+"-0", metav1.GetOptions{})
			return contract.Attempt{}, fail(StatusIncomplete, "writer %s: %d acknowledged writes on %s after %s, want %d (log: %v; pod: %s; its last lines: %s)",
				w.id, len(got), node, timeout, n, err, podState(p), r.tail(ctx, w.id+"-0"))
		}
		time.Sleep(time.Second)
	}
}

// tail is the end of a pod's output, for error messages.
func (r *runner) tail(ctx context.Context, pod string) string {
	tail := int64(5)
	b, err := r.cs.CoreV1().Pods(r.cfg.Namespace).GetLogs(pod, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(string(b))
}

// fenceAndLift is the plain run: fence, let the writers write, unfence.
func (r *runner) fenceAndLift(ctx context.Context) (judge.Fence, error) {
	f, err := r.fence(ctx)
	if err != nil {
		return f, err
	}
	r.observe(ctx, r.cfg.Observe)
	return f, r.unfence(ctx, &f)
}

// observe lets the writers write for d.
func (r *runner) observe(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// stopWriters scales every writer to zero and waits until its pods are
// gone: every acknowledged write is then in its log.
func (r *runner) stopWriters(ctx context.Context) error {
	for _, w := range r.writers {
		patch := []byte(`{"spec":{"replicas":0}}`)
		if _, err := r.cs.AppsV1().StatefulSets(r.cfg.Namespace).Patch(ctx, w.id, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return setup(err, "stopping writer "+w.id)
		}
	}
	deadline := time.Now().Add(podTimeout)
	for {
		l, err := r.cs.CoreV1().Pods(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + r.name + "," + LabelRole + "=writer"})
		if err == nil && len(l.Items) == 0 {
			r.step(report.StepInfo, "writers stopped")
			return nil
		}
		if time.Now().After(deadline) {
			var left []string
			if l != nil {
				for _, p := range l.Items {
					left = append(left, p.Name+" "+podState(&p))
				}
			}
			return fail(StatusIncomplete, "writers not stopped after %s: %v %s", podTimeout, err, strings.Join(left, "; "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// writerNodes are the nodes writer w may have written from.
func (r *runner) writerNodes(w *writerSpec) []string {
	nodes := slices.Clone(w.nodes)
	if r.cfg.Rehearsal && !slices.Contains(nodes, r.cfg.PeerNode) {
		nodes = append(nodes, r.cfg.PeerNode)
	}
	return nodes
}
