package isolation

// Probing: a reachability matrix measured by running a probe for every
// (source, destination, port/protocol) cell in parallel. The prober is an
// interface: in a cluster it execs the probe binary in the source pod
// (ExecProber) or in a container outside the cluster (DockerProber), in unit
// tests it is a fake. A BatchProber probes a whole row of the matrix with
// one exec.

import (
	"context"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ProbeEndpoint is a probe pod or a container outside the cluster.
type ProbeEndpoint struct {
	// Name is "namespace/pod", the matrix label.
	Name string
	// Namespace and Pod locate the pod that runs the client side.
	Namespace, Pod string
	// Container, when set, is a Docker container outside the cluster that
	// runs the client side instead of a pod (see ByRunner).
	Container string
	// IP is the address other pods connect to.
	IP netip.Addr
}

// ProbeRequest is one probe: a fresh connection from From to To.
type ProbeRequest struct {
	From, To ProbeEndpoint
	Case     PortProto
}

// ProbeResult is what one probe saw.
type ProbeResult struct {
	Reachable bool
	Reply     string
	Error     string
}

// Prober runs one probe. An error means the probe could not be run at all
// (exec failed, bad output), not that the target was unreachable.
type Prober interface {
	Probe(ctx context.Context, req ProbeRequest) (ProbeResult, error)
}

// Runner measures matrices.
type Runner struct {
	Prober Prober
	// Parallel is how many probes run at once (at least 1).
	Parallel int
	// Settle is how long cells that disagree with the expected matrix are
	// re-probed after the first pass, for policies the network plugin has
	// not programmed yet. Zero: one pass.
	Settle time.Duration
	// Interval between settle rounds; one second when zero.
	Interval time.Duration
}

// Stats describe one measurement.
type Stats struct {
	// Probes is the number of probes run, retries included.
	Probes int
	// Retries is how many cells were probed a second time.
	Retries int
	// Errors is how many probes could not be run.
	Errors int
	// Execs is how many probe commands ran (one per probe, or one per
	// batch with a BatchProber).
	Execs int
	// Rounds is the number of passes (1 + settle rounds).
	Rounds int
	// Disagreeing is, after each pass, how many cells disagreed with the
	// expected matrix (empty when there was none): it tells a network
	// that converged late from one that never did.
	Disagreeing []int
	// Duration of the whole measurement.
	Duration time.Duration
	// FirstPass is the duration of the full first pass over the matrix.
	FirstPass time.Duration
	// LastError is the last error a probe returned, for diagnosis.
	LastError string
}

// Run probes every cell. A cell that disagrees with expected (or whose
// probe failed) is retried once at once and the second result counts; when
// expected is nil only failed probes are retried. With Settle set, cells
// still disagreeing are re-probed until they agree or Settle has passed.
// Cells whose probe could not be run are Unknown.
func (r Runner) Run(ctx context.Context, peers []ProbeEndpoint, cases []PortProto, expected *Matrix) (*Matrix, Stats) {
	start := time.Now()
	names := make([]string, len(peers))
	for i, p := range peers {
		names[i] = p.Name
	}
	observed := NewMatrix(names, cases)
	var cells []cellIndex
	for c := range cases {
		for i := range peers {
			for j := range peers {
				cells = append(cells, cellIndex{c, i, j})
			}
		}
	}
	var st counters
	r.pass(ctx, peers, cases, expected, observed, cells, &st)
	stats := Stats{Rounds: 1, FirstPass: time.Since(start)}
	interval := r.Interval
	if interval <= 0 {
		interval = time.Second
	}
	for expected != nil {
		pending := disagreeing(expected, observed, cells)
		stats.Disagreeing = append(stats.Disagreeing, len(pending))
		if r.Settle <= 0 || len(pending) == 0 || time.Since(start)+interval > stats.FirstPass+r.Settle {
			break
		}
		select {
		case <-ctx.Done():
			pending = nil
		case <-time.After(interval):
		}
		if len(pending) == 0 {
			break
		}
		r.pass(ctx, peers, cases, expected, observed, pending, &st)
		stats.Rounds++
	}
	stats.Probes, stats.Retries, stats.Errors = int(st.probes.Load()), int(st.retries.Load()), int(st.errors.Load())
	stats.Execs = int(st.execs.Load())
	if e, ok := st.lastErr.Load().(string); ok {
		stats.LastError = e
	}
	stats.Duration = time.Since(start)
	return observed, stats
}

type cellIndex struct{ c, i, j int }

type counters struct {
	probes, retries, errors, execs atomic.Int64
	lastErr                        atomic.Value
}

func disagreeing(expected, observed *Matrix, cells []cellIndex) []cellIndex {
	var out []cellIndex
	for _, x := range cells {
		if observed.At(x.c, x.i, x.j) != expected.At(x.c, x.i, x.j) {
			out = append(out, x)
		}
	}
	return out
}

func (r Runner) pass(ctx context.Context, peers []ProbeEndpoint, cases []PortProto, expected, observed *Matrix, cells []cellIndex, st *counters) {
	if bp, ok := r.Prober.(BatchProber); ok {
		r.batchPass(ctx, bp, peers, cases, expected, observed, cells, st)
		return
	}
	n := max(r.Parallel, 1)
	work := make(chan cellIndex)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for x := range work {
				req := ProbeRequest{From: peers[x.i], To: peers[x.j], Case: cases[x.c]}
				v := r.probe(ctx, req, st)
				if v == Unknown || (expected != nil && v != expected.At(x.c, x.i, x.j)) {
					st.retries.Add(1)
					v = r.probe(ctx, req, st)
				}
				observed.SetAt(x.c, x.i, x.j, v)
			}
		}()
	}
	for _, x := range cells {
		if ctx.Err() != nil {
			break
		}
		work <- x
	}
	close(work)
	wg.Wait()
}

// batchPass probes the cells of each source with one batch (a matrix row
// per exec), sources in parallel; a cell that disagrees or failed is retried
// once in a second batch of its source, like pass does cell by cell.
func (r Runner) batchPass(ctx context.Context, bp BatchProber, peers []ProbeEndpoint, cases []PortProto, expected, observed *Matrix, cells []cellIndex, st *counters) {
	var groups [][]cellIndex
	bySource := map[int]int{}
	for _, x := range cells {
		g, ok := bySource[x.i]
		if !ok || len(groups[g]) == maxBatch {
			g = len(groups)
			bySource[x.i] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], x)
	}
	work := make(chan []cellIndex)
	var wg sync.WaitGroup
	for range min(max(r.Parallel, 1), len(groups)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for g := range work {
				vs := r.probeBatch(ctx, bp, peers, cases, g, st)
				var again []cellIndex
				var at []int // the index in g of each cell in again
				for k, x := range g {
					if vs[k] == Unknown || (expected != nil && vs[k] != expected.At(x.c, x.i, x.j)) {
						again, at = append(again, x), append(at, k)
					}
				}
				if len(again) > 0 {
					st.retries.Add(int64(len(again)))
					for k, v := range r.probeBatch(ctx, bp, peers, cases, again, st) {
						vs[at[k]] = v
					}
				}
				for k, x := range g {
					observed.SetAt(x.c, x.i, x.j, vs[k])
				}
			}
		}()
	}
	for _, g := range groups {
		if ctx.Err() != nil {
			break
		}
		work <- g
	}
	close(work)
	wg.Wait()
}

// probeBatch runs one batch of cells of one source; all Unknown when the
// batch could not be run.
func (r Runner) probeBatch(ctx context.Context, bp BatchProber, peers []ProbeEndpoint, cases []PortProto, g []cellIndex, st *counters) []Verdict {
	reqs := make([]ProbeRequest, len(g))
	for k, x := range g {
		reqs[k] = ProbeRequest{From: peers[x.i], To: peers[x.j], Case: cases[x.c]}
	}
	st.probes.Add(int64(len(g)))
	st.execs.Add(1)
	vs := make([]Verdict, len(g))
	res, err := bp.ProbeBatch(ctx, reqs[0].From, reqs)
	if err != nil {
		st.errors.Add(int64(len(g)))
		st.lastErr.Store(reqs[0].From.Name + " (a batch of " + strconv.Itoa(len(g)) + " probes): " + err.Error())
		return vs
	}
	for k := range g {
		vs[k] = VerdictOf(res[k].Reachable)
	}
	return vs
}

func (r Runner) probe(ctx context.Context, req ProbeRequest, st *counters) Verdict {
	st.probes.Add(1)
	st.execs.Add(1)
	res, err := r.Prober.Probe(ctx, req)
	if err != nil {
		st.errors.Add(1)
		st.lastErr.Store(req.From.Name + " -> " + req.To.Name + " " + req.Case.String() + ": " + err.Error())
		return Unknown
	}
	return VerdictOf(res.Reachable)
}
