package calibrate

import (
	"fmt"
	"slices"

	"github.com/fenceproof/fenceproof/sim"
)

// Comparison is an experiment's real and simulated runs side by side.
type Comparison struct {
	Exp       *Experiment
	Real, Sim *Timeline
	Results   []CheckResult
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

// Compare judges the simulated run against the real one.
func Compare(e *Experiment, real, simulated *Timeline) *Comparison {
	c := &Comparison{Exp: e, Real: real, Sim: simulated}
	if g, ok := knownGaps[e.Name]; ok {
		c.Gap = g.why
	}
	for i := range e.Checks {
		r := e.Checks[i].run(real, simulated)
		c.Results = append(c.Results, r)
		if !r.Pass {
			c.Problems = append(c.Problems, r.Problem)
		}
	}
	return c
}

// Run simulates an experiment against its real timeline and compares; a
// perturbation (adjust) changes the model's parameters first.
func Run(e *Experiment, real *Timeline, adjust func(*sim.Params)) (*Comparison, error) {
	if real.Experiment != e.Name {
		return nil, fmt.Errorf("timeline of %q given for experiment %q", real.Experiment, e.Name)
	}
	s, err := Simulate(e, real, adjust)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", e.Name, err)
	}
	return Compare(e, real, s), nil
}
