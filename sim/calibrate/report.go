package calibrate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/sim"
)

// Report is the calibration's outcome: every experiment's comparison, the
// perturbations' verdicts and the kind fencing replay.
type Report struct {
	Comparisons []*Comparison
	// Perturbed says, for each perturbation, which experiments reject it.
	Perturbed []PerturbationResult
	Fencing   *FencingReplay
	// Header says how the real runs were made (command, duration).
	Header string
}

// PerturbationResult is a perturbation and the experiments that reject it.
type PerturbationResult struct {
	Perturbation
	Rejected []string
	Err      error
}

// Pass reports whether the shipped model passes every experiment (known
// gaps aside), every perturbation is rejected and the replay agrees.
func (r *Report) Pass() bool {
	for _, c := range r.Comparisons {
		if !c.Pass() {
			return false
		}
	}
	for _, p := range r.Perturbed {
		if p.Err != nil || len(p.Rejected) == 0 {
			return false
		}
	}
	return r.Fencing == nil || len(r.Fencing.Problems) == 0
}

// Perturb runs every perturbation against the real timelines: the
// experiments whose checks it fails (known gaps aside) among those the
// shipped model passes - an experiment the shipped model fails too
// rejects nothing.
func Perturb(reals map[string][]*Timeline) []PerturbationResult {
	var out []PerturbationResult
	passes := map[string]bool{}
	for _, e := range Experiments {
		if real, ok := reals[e.Name]; ok {
			c, err := Run(e, real, nil)
			passes[e.Name] = err == nil && c.Pass()
		}
	}
	for _, p := range Perturbations {
		pr := PerturbationResult{Perturbation: p}
		for _, e := range Experiments {
			real, ok := reals[e.Name]
			if !ok || !passes[e.Name] {
				continue
			}
			c, err := Run(e, real, p.Adjust)
			if err != nil {
				pr.Err = err
				break
			}
			if !c.Pass() {
				pr.Rejected = append(pr.Rejected, e.Name)
			}
		}
		out = append(out, pr)
	}
	return out
}

// Markdown renders reports/calibration.md; plot names each experiment's
// SVG file (relative to the report).
func (r *Report) Markdown(plot func(e *Experiment) string) string {
	var b strings.Builder
	b.WriteString("# Simulator calibration\n\n")
	if r.Header != "" {
		b.WriteString(r.Header + "\n\n")
	}
	b.WriteString("Each experiment ran on a real Ceph (Debian's 16.2 daemons, `ceph/cluster`: OSDs in CRUSH host buckets on one machine, " +
		"3 mons, a mgr, BlueStore on sparse files) and in the simulator with the same layout, settings, data and actions; the simulator's " +
		"parameters are fixed in `sim/calibrate` (`Params`, `Platform`), not fitted. Times are seconds from the experiment's first action.\n\n")
	b.WriteString("| experiment | held out | checks | verdict |\n|---|---|---|---|\n")
	for _, c := range r.Comparisons {
		n := 0
		for _, res := range c.Results {
			if res.Pass {
				n++
			}
		}
		v := "pass"
		switch {
		case !c.Pass():
			v = "**FAIL**"
		case n < len(c.Results):
			v = "pass but for the known gap"
		}
		held := ""
		if c.Exp.HeldOut {
			held = "yes"
		}
		fmt.Fprintf(&b, "| [%s](#%s) | %s | %d/%d | %s |\n", c.Exp.Name, c.Exp.Name, held, n, len(c.Results), v)
	}
	if len(r.Perturbed) > 0 {
		b.WriteString("\n## Perturbed models\n\nEach must fail at least one experiment that the shipped model passes (known gaps aside) - the calibration's power:\n\n")
		b.WriteString("| perturbation | rejected by |\n|---|---|\n")
		for _, p := range r.Perturbed {
			by := strings.Join(p.Rejected, ", ")
			switch {
			case p.Err != nil:
				by = "error: " + p.Err.Error()
			case by == "":
				by = "**none: the calibration cannot tell it from the shipped model**"
			}
			fmt.Fprintf(&b, "| %s | %s |\n", p.Name, by)
		}
	}
	for _, c := range r.Comparisons {
		c.markdown(&b, plot)
	}
	if r.Fencing != nil {
		b.WriteString(r.Fencing.Markdown())
	}
	return b.String()
}

func (c *Comparison) markdown(b *strings.Builder, plot func(e *Experiment) string) {
	e := c.Exp
	fmt.Fprintf(b, "\n## %s\n\n", e.Name)
	if e.HeldOut {
		b.WriteString("**Held out**: never run or looked at while the model, its parameters and the tolerances were chosen.\n\n")
	}
	b.WriteString(e.Doc + "\n\n")
	fmt.Fprintf(b, "%d hosts x %d OSDs, 3 mons, pool of %d PGs (size %d, min_size %d, host failure domain), %d objects of %d KiB per PG (%.0f MB), the writer rewrites %.0f objects/s. ",
		e.Hosts, e.OSDsPerHost, e.PGs, e.Size, e.MinSize, e.Objects, e.ObjectKiB, e.DataMB(), e.WritesPerSec)
	fmt.Fprintf(b, "Real runs (%d), oldest first; the simulator plays each run's actions at that run's times, with %d seeds (the median judged, the seeds' range in brackets):\n\n", len(c.Real), Seeds)
	for i, r := range c.Real {
		fmt.Fprintf(b, "%d. %s", i+1, r.Source)
		if r.Machine != "" {
			fmt.Fprintf(b, ", %s", r.Machine)
		}
		if r.Started != "" {
			fmt.Fprintf(b, ", %s", r.Started)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nCeph settings: ")
	cfg := e.CephConfig()
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		kv = append(kv, fmt.Sprintf("`%s=%s`", k, cfg[k]))
	}
	b.WriteString(strings.Join(kv, ", ") + ".\n\n")
	if p := plot(e); p != "" {
		fmt.Fprintf(b, "![%s](%s)\n\n", e.Name, p)
	}
	b.WriteString("| action |")
	for i := range c.Real {
		fmt.Fprintf(b, " run %d (s) |", i+1)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(c.Real)) + "\n")
	for i, a := range c.Real[0].Actions {
		what := a.Do
		if len(a.Hosts) > 0 {
			what += fmt.Sprintf(" host %v", a.Hosts)
		}
		fmt.Fprintf(b, "| %s |", what)
		for _, r := range c.Real {
			at := "-"
			if i < len(r.Actions) {
				at = fmt.Sprintf("%.1f", r.Actions[i].At)
			}
			fmt.Fprintf(b, " %s |", at)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n| check | real, run by run | simulated median, run by run | allowed (the real range and its tolerance) | verdict | why |\n|---|---|---|---|---|---|\n")
	for _, r := range c.Results {
		ch := r.Check
		v := "ok"
		if !r.Pass {
			v = "**BEYOND**"
			if slices.Contains(knownGaps[e.Name].checks, ch.Name) {
				v = "**BEYOND** (known gap)"
			}
		}
		if len(ch.Order) > 0 {
			fmt.Fprintf(b, "| %s | %s | %s | an order a real run showed | %s | %s |\n", ch.Name, strings.Join(uniq(r.RealOrder), "; "), strings.Join(uniq(r.SimOrder), "; "), v, ch.Why)
			continue
		}
		rv, sv, allowed := r.Reals(), r.Sims(), r.Allowed()
		if !r.RealOK || !r.SimOK {
			allowed = "-"
		}
		if !r.RealOK {
			rv = "not seen in every run: " + rv
		}
		if !r.SimOK {
			sv = "not seen in every run: " + sv
		}
		fmt.Fprintf(b, "| %s: %s | %s | %s | %s | %s | %s |\n", ch.Name, ch.Value.Desc, rv, sv, allowed, v, tolWhy(ch))
	}
	b.WriteString("\n")
	if c.Gap != "" {
		fmt.Fprintf(b, "Known gap: %s.\n\n", c.Gap)
	}
	writeProblems(b, c.Unexcused())
}

// tolWhy points to the tolerance's reason (tolerances.go).
func tolWhy(c *Check) string {
	if c.Why != "" {
		return c.Why
	}
	return "tolerances.go"
}

func writeProblems(b *strings.Builder, ps []string) {
	if len(ps) == 0 {
		b.WriteString("**Verdict: the simulator reproduces this run** (every check within its tolerance).\n\n")
		return
	}
	b.WriteString("**Verdict: the simulator differs:**\n\n")
	for _, p := range ps {
		fmt.Fprintf(b, "- %s\n", p)
	}
	b.WriteString("\n")
}

// SVG plots an experiment's newest real run and its simulated run: PGs not
// active+clean and inactive, PGs moving data, the data moved, with the
// actions marked.
func (c *Comparison) SVG() string {
	real, simulated := c.Real[len(c.Real)-1], c.Sim[len(c.Sim)-1][0]
	curve := func(t *Timeline, f func(Sample) float64) ([]float64, []float64) {
		var x, y []float64
		for _, s := range t.Samples {
			x = append(x, s.At)
			y = append(y, f(s))
		}
		return x, y
	}
	line := func(name, color string, dash bool, t *Timeline, f func(Sample) float64) sim.Series {
		x, y := curve(t, f)
		return sim.Series{Name: name, Color: color, Dash: dash, Step: true, X: x, Y: y}
	}
	both := func(name, color string, f func(Sample) float64) []sim.Series {
		return []sim.Series{line(name+" (real)", color, false, real, f), line(name+" (sim)", color, true, simulated, f)}
	}
	panels := []sim.Panel{
		{YLabel: "PGs", Series: append(both("not active+clean", "#fb8c00", notCleanPGs.f), both("inactive", "#e53935", inactivePGs.f)...)},
		{YLabel: "PGs moving data", Series: both("recovering/backfilling", "#1e88e5", recovering.f)},
		{YLabel: "MB moved", Series: both("recovered+backfilled", "#00897b", movedMB.f)},
	}
	if len(real.Writes) > 0 && c.Exp.Sim == simCluster {
		share := func(t *Timeline) sim.Series {
			var x, y []float64
			for _, w := range t.Writes {
				if all := w.OK + w.Failed; all > 0 {
					x, y = append(x, w.At), append(y, w.OK/all)
				}
			}
			return sim.Series{X: x, Y: y, Step: true}
		}
		r, s := share(real), share(simulated)
		r.Name, r.Color, s.Name, s.Color, s.Dash = "writes accepted (real)", "#8e24aa", "served PGs (sim)", "#8e24aa", true
		panels = append(panels, sim.Panel{YLabel: "share of writes", Series: []sim.Series{r, s}})
	}
	var marks []sim.Mark
	for _, a := range real.Actions {
		l := a.Do
		if len(a.Hosts) > 0 {
			l += fmt.Sprint(a.Hosts)
		}
		marks = append(marks, sim.Mark{X: a.At, Label: l})
	}
	return sim.PlotsSVG(fmt.Sprintf("%s, run %d of %d: real (solid) and simulated, seed 1 (dashed)", c.Exp.Name, len(c.Real), len(c.Real)), "seconds from the first action", panels, marks)
}
