package run

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fenceproof/fenceproof/fencing/clock"
	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/fencing/report"
)

// clockSamples is how many times each node's clock is read per measurement.
const clockSamples = 16

// startAgents starts the run's agent on each node and waits until each
// answers through the API server.
func (r *runner) startAgents(ctx context.Context, nodes ...string) error {
	for _, n := range nodes {
		p := r.agentPod(n)
		if _, err := r.cs.CoreV1().Pods(r.cfg.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return setup(err, "creating the agent on "+n)
		}
		r.agents[n] = p.Name
	}
	for _, n := range nodes {
		if _, err := r.waitPod(ctx, r.agents[n], podTimeout, false); err != nil {
			return setup(err, "agent on "+n)
		}
		var err error
		for t0 := time.Now(); time.Since(t0) < time.Minute; time.Sleep(time.Second) {
			if _, err = r.agentGet(ctx, n, "/time"); err == nil {
				break
			}
		}
		if err != nil {
			return setup(err, "agent on "+n+" does not answer through the API server's pod proxy")
		}
	}
	return nil
}

// agentGet is a GET of the agent on node through the API server's proxy.
func (r *runner) agentGet(ctx context.Context, node, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return r.cs.CoreV1().Pods(r.cfg.Namespace).ProxyGet("http", r.agents[node], strconv.Itoa(agentPort), path, nil).DoRaw(ctx)
}

// agentLog is writer id's log copy on node ("" when it wrote nothing there).
func (r *runner) agentLog(ctx context.Context, node, id string) ([]byte, error) {
	return r.agentGet(ctx, node, "/logs/"+r.name+"/"+id+".log")
}

// measureClocks bounds every agent node's clock against this process's.
func (r *runner) measureClocks(ctx context.Context, when string) (map[string]clock.Estimate, error) {
	out := map[string]clock.Estimate{}
	for node := range r.agents {
		e, err := clock.Measure(ctx, node, clockSamples, func(ctx context.Context) ([]byte, error) { return r.agentGet(ctx, node, "/time") })
		if err != nil {
			return nil, setup(err, "measuring the clock of "+node)
		}
		out[node] = e
		r.out.Meta.Clocks = append(r.out.Meta.Clocks, report.ClockEstimate{Node: node, When: when, OffsetNs: e.OffsetNs,
			UncertaintyNs: e.UncertaintyNs, BoundNs: int64(e.Bound()), Samples: e.Samples})
		r.step(report.StepInfo, "clock %s (%s the fence)", e, when)
	}
	return out, nil
}

// removeAgentLogs asks each agent to remove the run's log directory.
func (r *runner) removeAgentLogs(ctx context.Context) []string {
	l, err := r.cs.CoreV1().Pods(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + r.name + "," + LabelRole + "=agent"})
	if err != nil {
		return []string{fmt.Sprintf("the writers' logs of run %s on the nodes (%s/%s): %v", r.name, hostLogRoot, r.name, err)}
	}
	var left []string
	for _, p := range l.Items {
		node, pod := p.Spec.NodeName, p.Name
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := r.cs.CoreV1().RESTClient().Delete().Namespace(r.cfg.Namespace).Resource("pods").
			Name(fmt.Sprintf("http:%s:%d", pod, agentPort)).SubResource("proxy").Suffix("logs", r.name).Do(ctx).Error()
		cancel()
		if err != nil {
			left = append(left, fmt.Sprintf("%s:%s/%s (%v)", node, hostLogRoot, r.name, err))
		}
	}
	return left
}

// parseAttempts reads a writer's log: its contract.Attempt lines.
func parseAttempts(b []byte) []contract.Attempt {
	return slices.DeleteFunc(contract.ParseLines[contract.Attempt](b), func(a contract.Attempt) bool { return a.Client == "" || a.Outcome == "" })
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
