package calibrate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fenceproof/fenceproof/sim"
)

// Comparison is an experiment's real runs and the simulated runs of each
// one's schedule, side by side: Sim[i] are Real[i]'s, one per seed.
type Comparison struct {
	Exp     *Experiment
	Real    []*Timeline
	Sim     [][]*Timeline
	Results []CheckResult
	// Problems lists every check beyond its tolerance.
	Problems []string
	// Gap names the known model gap that excuses some failing checks
	// (knownGaps), "" when none.
	Gap string
}

// Pass reports whether every check passed, gaps aside.
func (c *Comparison) Pass() bool { return len(c.Unexcused()) == 0 }

// Unexcused lists the failing checks no known gap covers.
func (c *Comparison) Unexcused() []string {
	g := knownGaps[c.Exp.Name]
	var out []string
	for _, r := range c.Results {
		if !r.Pass && !slices.Contains(g.checks, r.Check.Name) {
			out = append(out, r.Problem)
		}
	}
	return out
}

// knownGap is a difference between the model and Ceph that this
// calibration shows and whose fix belongs to the model: the checks it
// makes fail, and why.
type knownGap struct {
	checks []string
	why    string
}

// knownGaps are the model's known gaps, by experiment. A gap's checks may
// fail; every other check must pass. When a gap's checks pass, the gap is
// closed and its entry goes (TestShippedModelPasses says so).
var knownGaps = map[string]knownGap{}

// Compare judges the simulated runs against the real ones: sims[i] are
// the simulated runs of reals[i]'s schedule.
func Compare(e *Experiment, reals []*Timeline, sims [][]*Timeline) *Comparison {
	c := &Comparison{Exp: e, Real: reals, Sim: sims}
	if g, ok := knownGaps[e.Name]; ok {
		c.Gap = g.why
	}
	for i := range e.Checks {
		r := e.Checks[i].run(reals, sims)
		c.Results = append(c.Results, r)
		if !r.Pass {
			c.Problems = append(c.Problems, r.Problem)
		}
	}
	return c
}

// Run simulates each real run's schedule with seeds 1..Seeds and
// compares; a perturbation (adjust) changes the model's parameters first.
func Run(e *Experiment, reals []*Timeline, adjust func(*sim.Params)) (*Comparison, error) {
	if len(reals) == 0 {
		return nil, fmt.Errorf("%s: no real run", e.Name)
	}
	var sims [][]*Timeline
	for _, real := range reals {
		if real.Experiment != e.Name {
			return nil, fmt.Errorf("timeline of %q given for experiment %q", real.Experiment, e.Name)
		}
		if real.Config != nil && !maps.Equal(real.Config, e.CephConfig()) {
			return nil, fmt.Errorf("%s: the run of %s had other Ceph settings than the experiment declares: a run of another experiment", e.Name, real.Started)
		}
		var runs []*Timeline
		for seed := uint64(1); seed <= Seeds; seed++ {
			s, err := Simulate(e, real, adjust, seed)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", e.Name, err)
			}
			runs = append(runs, s)
		}
		sims = append(sims, runs)
	}
	return Compare(e, reals, sims), nil
}
