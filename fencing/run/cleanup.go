package run

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fenceproof/fenceproof/fencing/networkfence"
	"github.com/fenceproof/fenceproof/fencing/report"
)

// cleanupTimeout bounds the cleanup (it runs after an interruption too).
const cleanupTimeout = 12 * time.Minute

// cleanup undoes what the run did, in the order that never leaves a node
// fenced nor a split brain: the cut node restored (and Ready, so that its
// kubelet stops the pods the taint deleted), then every fence of the run
// lifted, then the taint removed, then the workloads, the agents' log
// directories and the namespace deleted. What it cannot undo goes to
// Outcome.Leftovers.
func (r *runner) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	left := &r.out.Leftovers
	if r.cut {
		if err := r.hook(ctx, "restore", r.restore); err != nil {
			*left = append(*left, fmt.Sprintf("node %s may still be cut off: %v", r.cfg.Node, err))
		} else {
			r.step(report.StepRestore, "node %s restored (cleanup)", r.cfg.Node)
			if err := r.waitReady(ctx, true); err != nil {
				r.step(report.StepCleanup, "%v; unfencing anyway", err)
			}
		}
		r.cut = false
	}
	*left = append(*left, r.liftFences(ctx)...)
	*left = append(*left, r.untaint(ctx)...)
	*left = append(*left, r.removeAgentLogs(ctx)...)
	*left = append(*left, r.deleteObjects(ctx)...)
	for _, l := range *left {
		r.step(report.StepCleanup, "LEFT: %s", l)
	}
	r.step(report.StepCleanup, "cleanup done")
}

// liftFences unfences every NetworkFence of the run still Fenced, then
// deletes every one that is not (csi-addons v0.14.0 does not unfence on
// deletion: a fenced CR is kept, and named, rather than deleted).
func (r *runner) liftFences(ctx context.Context) []string {
	var left []string
	l, err := r.nf.Client.Resource(networkfence.NetworkFenceGVR).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + r.name})
	if err != nil {
		return []string{fmt.Sprintf("NetworkFences of run %s: %v (lift them: fenceState Unfenced)", r.name, err)}
	}
	for _, o := range l.Items {
		name := o.GetName()
		state, _, _ := unstructured.NestedString(o.Object, "spec", "fenceState")
		if state == networkfence.Fenced {
			r.step(report.StepCleanup, "unfencing %s", name)
			if err := r.nf.SetState(ctx, name, networkfence.Unfenced); err != nil {
				left = append(left, fmt.Sprintf("node %s STILL FENCED by NetworkFence %s: %v", r.cfg.Node, name, err))
				continue
			}
			if _, _, err := r.nf.Watch(ctx, name, func(s networkfence.FenceStatus) bool {
				return s.Result == networkfence.Succeeded && s.Message == networkfence.UnfenceOKMessage
			}, fenceTimeout); err != nil {
				left = append(left, fmt.Sprintf("node %s MAY STILL BE FENCED: NetworkFence %s not unfenced: %v", r.cfg.Node, name, err))
				continue
			}
			r.step(report.StepUnfenceOK, "NetworkFence %s unfenced (cleanup)", name)
		}
		if err := r.nf.Delete(ctx, networkfence.NetworkFenceGVR, name, time.Minute); err != nil {
			left = append(left, fmt.Sprintf("NetworkFence %s (unfenced) not deleted: %v", name, err))
		}
	}
	return left
}

// untaint removes the out-of-service taint from every node the run
// tainted (its annotation names the run).
func (r *runner) untaint(ctx context.Context) []string {
	nodes, err := r.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{fmt.Sprintf("nodes tainted by run %s: %v (remove the taint %s)", r.name, err, OutOfServiceTaint.Key)}
	}
	var left []string
	for _, n := range nodes.Items {
		if n.Annotations[annotationTaint] != r.name {
			continue
		}
		if err := r.setTaint(ctx, n.Name, false); err != nil {
			left = append(left, fmt.Sprintf("node %s keeps the taint %s: %v", n.Name, OutOfServiceTaint.Key, err))
			continue
		}
		r.step(report.StepUntaint, "taint removed from %s (cleanup)", n.Name)
	}
	return left
}

// deleteObjects deletes the run's workloads, claims, secrets and agents,
// and the namespace if the run created it.
func (r *runner) deleteObjects(ctx context.Context) []string {
	var left []string
	sel := metav1.ListOptions{LabelSelector: LabelRun + "=" + r.name}
	bg := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &bg}
	ns := r.cfg.Namespace
	for what, err := range map[string]error{
		"statefulsets": r.cs.AppsV1().StatefulSets(ns).DeleteCollection(ctx, del, sel),
		"pods":         r.cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}, sel),
		"claims":       r.cs.CoreV1().PersistentVolumeClaims(ns).DeleteCollection(ctx, del, sel),
		"secrets":      r.cs.CoreV1().Secrets(ns).DeleteCollection(ctx, del, sel),
	} {
		if ignoreNotFound(err) != nil {
			left = append(left, fmt.Sprintf("%s of run %s in %s: %v", what, r.name, ns, err))
		}
	}
	if n, err := r.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil && n.Labels[LabelRun] == r.name {
		if err := ignoreNotFound(r.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})); err != nil {
			left = append(left, fmt.Sprintf("namespace %s: %v", ns, err))
		}
	}
	return left
}
