package run

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fenceproof/fenceproof/fencing/judge"
	"github.com/fenceproof/fenceproof/fencing/networkfence"
	"github.com/fenceproof/fenceproof/fencing/report"
)

// fence fences the node through a NetworkFence and returns once it is
// acknowledged (its status Succeeded, seen by this process: the ack).
func (r *runner) fence(ctx context.Context) (judge.Fence, error) {
	f := judge.Fence{Name: "fenceproof-" + r.name}
	cidrs, err := r.fenceCIDRs(ctx)
	if err != nil {
		return f, err
	}
	f.CIDRs = cidrs
	r.out.Meta.CIDRs = cidrs
	obj := networkfence.FenceVia(f.Name, r.fenceVia(), networkfence.Fenced, cidrs)
	obj.SetLabels(merge(obj.GetLabels(), map[string]string{LabelRun: r.name}))
	if _, err := r.nf.Client.Resource(networkfence.NetworkFenceGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return f, setup(err, "creating NetworkFence "+f.Name)
	}
	f.CreatedNs = r.step(report.StepFence, "NetworkFence %s created: Fenced %v", f.Name, cidrs)
	t, st, err := r.nf.Watch(ctx, f.Name, func(s networkfence.FenceStatus) bool {
		return s.Result == networkfence.Succeeded && s.Message == networkfence.FenceOKMessage
	}, fenceTimeout)
	if err != nil {
		return f, fail(StatusIncomplete, "the fence was not acknowledged: %v", err)
	}
	f.AckNs = t.UnixNano()
	r.stepAt(t, report.StepAck, "NetworkFence %s: %s (%s) after %.3f s: the fence's acknowledgement", f.Name, st.Result, st.Message, float64(f.AckNs-f.CreatedNs)/1e9)
	return f, nil
}

// unfence lifts the fence and waits until the unfence is acknowledged.
func (r *runner) unfence(ctx context.Context, f *judge.Fence) error {
	t0 := time.Now()
	if err := r.nf.SetState(ctx, f.Name, networkfence.Unfenced); err != nil {
		return setup(err, "unfencing "+f.Name)
	}
	f.UnfenceNs = r.stepAt(t0, report.StepUnfence, "NetworkFence %s: fenceState Unfenced", f.Name)
	t, _, err := r.nf.Watch(ctx, f.Name, func(s networkfence.FenceStatus) bool {
		return s.Result == networkfence.Succeeded && s.Message == networkfence.UnfenceOKMessage
	}, fenceTimeout)
	if err != nil {
		return fail(StatusIncomplete, "the unfence was not acknowledged: %v", err)
	}
	f.UnfenceAckNs = r.stepAt(t, report.StepUnfenceOK, "NetworkFence %s: unfence acknowledged after %.3f s", f.Name, t.Sub(t0).Seconds())
	return nil
}

func (r *runner) fenceVia() networkfence.Via {
	if r.cfg.Class != "" {
		return networkfence.Via{Class: r.cfg.Class}
	}
	ns, name := splitName(r.cfg.Secret)
	return networkfence.Via{Driver: r.cfg.Driver, SecretName: name, SecretNamespace: ns, Parameters: r.cfg.Params}
}

// fenceCIDRs are the node's addresses, or the clients the driver reports
// on it (GetFenceClients, through the class's CSIAddonsNode status).
func (r *runner) fenceCIDRs(ctx context.Context) ([]string, error) {
	n, err := r.cs.CoreV1().Nodes().Get(ctx, r.cfg.Node, metav1.GetOptions{})
	if err != nil {
		return nil, setup(err, "node "+r.cfg.Node)
	}
	nodeCIDRs, err := networkfence.NodeCIDRs(n)
	if err != nil || r.cfg.CIDRsFrom == CIDRsFromNode {
		return nodeCIDRs, setup(err, "the node's addresses")
	}
	var cidrs []string
	var seen []string
	deadline := time.Now().Add(fenceTimeout)
	for len(cidrs) == 0 {
		// csi-addons (v0.14.0) asks the driver for its clients only when a
		// CSIAddonsNode's annotations change (or hourly): poke it.
		_ = r.nf.RefreshDriverNodes(ctx, r.out.Meta.Driver)
		clients, err := r.nf.FenceClients(ctx, "", r.cfg.Class)
		seen = seen[:0]
		for _, c := range clients {
			seen = append(seen, fmt.Sprintf("%s %v", c.ID, c.CIDRs))
			for _, cidr := range c.CIDRs {
				if p, perr := netip.ParsePrefix(cidr); perr == nil && within(p, nodeCIDRs) && !slices.Contains(cidrs, cidr) {
					cidrs = append(cidrs, cidr)
				}
			}
		}
		if len(cidrs) > 0 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fail(StatusIncomplete, "GetFenceClients through class %s reports no client on %s (%v) after %s: %v; clients: %s",
				r.cfg.Class, r.cfg.Node, nodeCIDRs, fenceTimeout, err, strings.Join(seen, ", "))
		}
		time.Sleep(2 * time.Second)
	}
	slices.Sort(cidrs)
	r.step(report.StepInfo, "GetFenceClients: clients on %s: %v (of %s)", r.cfg.Node, cidrs, strings.Join(seen, ", "))
	return cidrs, nil
}

// within reports whether prefix p lies inside one of the node's CIDRs.
func within(p netip.Prefix, nodeCIDRs []string) bool {
	for _, c := range nodeCIDRs {
		if n, err := netip.ParsePrefix(c); err == nil && n.Bits() <= p.Bits() && n.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// stepAt is step with the time t the event happened.
func (r *runner) stepAt(t time.Time, kind, format string, args ...any) int64 {
	s := report.Step{AtNs: t.UnixNano(), Kind: kind, What: fmt.Sprintf(format, args...)}
	r.mu.Lock()
	r.steps = append(r.steps, s)
	r.mu.Unlock()
	fmt.Fprintf(r.cfg.Out, "[%7.1fs] %-10s %s\n", t.Sub(r.start).Seconds(), kind, s.What)
	return s.AtNs
}
