package isolation

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/isolation/probeline"
)

// BatchProber runs many probes from one source with one exec of
// `probe connect-all` (each still a fresh connection), instead of one exec
// per cell: a matrix row costs one exec. Results are in the order of reqs;
// an error means the batch could not be run at all.
type BatchProber interface {
	ProbeBatch(ctx context.Context, from ProbeEndpoint, reqs []ProbeRequest) ([]ProbeResult, error)
}

// maxBatch bounds the targets of one exec (its argument list).
const maxBatch = 256

// batchArgs are `probe connect-all`'s arguments for reqs.
func batchArgs(command string, timeout time.Duration, reqs []ProbeRequest) []string {
	args := []string{command, "connect-all", "--timeout", timeout.String(), "--parallel", strconv.Itoa(len(reqs))}
	for _, r := range reqs {
		args = append(args, target(r))
	}
	return args
}

func target(r ProbeRequest) string {
	return strings.ToLower(string(r.Case.Protocol)) + ":" + net.JoinHostPort(r.To.IP.String(), strconv.Itoa(int(r.Case.Port)))
}

// parseBatch reads connect-all's lines and checks they answer reqs, in order.
func parseBatch(out []byte, reqs []ProbeRequest) ([]ProbeResult, error) {
	lines, err := probeline.ParseAll(out)
	if err != nil {
		return nil, err
	}
	if len(lines) != len(reqs) {
		return nil, fmt.Errorf("probe connect-all printed %d lines for %d targets", len(lines), len(reqs))
	}
	res := make([]ProbeResult, len(reqs))
	for i, l := range lines {
		if want := target(reqs[i]); l.Proto+":"+l.To != want {
			return nil, fmt.Errorf("probe connect-all line %d answers %s:%s, want %s", i, l.Proto, l.To, want)
		}
		res[i] = ProbeResult{Reachable: l.OK, Reply: l.Reply, Error: l.Error}
	}
	return res, nil
}

// ProbeBatch dispatches a batch on its source, like Probe; a prober without
// batches runs the requests one by one.
func (b ByRunner) ProbeBatch(ctx context.Context, from ProbeEndpoint, reqs []ProbeRequest) ([]ProbeResult, error) {
	p := b.Pod
	if from.Container != "" {
		p = b.Container
	}
	if bp, ok := p.(BatchProber); ok {
		return bp.ProbeBatch(ctx, from, reqs)
	}
	out := make([]ProbeResult, len(reqs))
	for i, r := range reqs {
		res, err := b.Probe(ctx, r)
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	return out, nil
}
