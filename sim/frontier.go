package sim

import (
	"sort"
	"strings"
)

// Safety and availability as a frontier: no policy is "best" by a
// lexicographic rank. Each policy is a point - the share of its runs that
// broke an invariant, and its unavailability: minutes per run with PGs
// that could not serve, client writes refused per run. A policy is
// dominated when another is no worse on all three and better on one; the
// others form the frontier, and choosing among them is a trade-off.

// FrontierPoint is one policy's place in the comparison.
type FrontierPoint struct {
	Policy string
	// ViolationRate is the share of runs that broke an invariant; Safety
	// and Liveness split it (a run may count in both).
	ViolationRate, SafetyRate, LivenessRate float64
	// UnavailMin is minutes per run with PGs that could not serve I/O;
	// RefusedK is thousands of client writes refused per run.
	UnavailMin, RefusedK float64
	// DominatedBy lists the policies that dominate this one (empty: on
	// the frontier).
	DominatedBy []string
}

// objectives returns the point's three objectives (all lower is better).
func (p *FrontierPoint) objectives() [3]float64 {
	return [3]float64{p.ViolationRate, p.UnavailMin, p.RefusedK}
}

// dominates reports whether p is no worse than q on every objective and
// better on one.
func (p *FrontierPoint) dominates(q *FrontierPoint) bool {
	a, b := p.objectives(), q.objectives()
	better := false
	for i := range a {
		if a[i] > b[i] {
			return false
		}
		better = better || a[i] < b[i]
	}
	return better
}

// Frontier returns every policy's point: the frontier first, by violation
// rate, then the dominated ones.
func (c *Comparison) Frontier() []FrontierPoint {
	pts := make([]FrontierPoint, 0, len(c.Stats))
	for _, s := range c.Stats {
		n := float64(max(s.Runs, 1))
		pts = append(pts, FrontierPoint{Policy: s.Policy,
			ViolationRate: float64(s.ViolatingRuns) / n, SafetyRate: float64(s.SafetyRuns) / n, LivenessRate: float64(s.LivenessRuns) / n,
			UnavailMin: s.InactiveMin / n, RefusedK: s.WritesRefused / n / 1000})
	}
	for i := range pts {
		for j := range pts {
			if i != j && pts[j].dominates(&pts[i]) {
				pts[i].DominatedBy = append(pts[i].DominatedBy, pts[j].Policy)
			}
		}
	}
	sort.SliceStable(pts, func(i, j int) bool {
		if (len(pts[i].DominatedBy) == 0) != (len(pts[j].DominatedBy) == 0) {
			return len(pts[i].DominatedBy) == 0
		}
		return pts[i].ViolationRate < pts[j].ViolationRate
	})
	return pts
}

// FrontierText says in words which policies are on the frontier and which
// are dominated, by whom.
func FrontierText(pts []FrontierPoint) string {
	var on, dom []string
	for _, p := range pts {
		if len(p.DominatedBy) == 0 {
			on = append(on, p.Policy)
		} else {
			dom = append(dom, p.Policy+" (by "+strings.Join(p.DominatedBy, ", ")+")")
		}
	}
	t := "On the frontier (no other policy is at least as good on violations, unavailable minutes and refused writes, and better on one): " + strings.Join(on, ", ") + "."
	if len(dom) > 0 {
		t += " Dominated: " + strings.Join(dom, "; ") + "."
	} else {
		t += " No policy is dominated."
	}
	return t
}
