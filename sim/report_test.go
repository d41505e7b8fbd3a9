package sim

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTimelineSVG: the plot has a y scale for active PGs, a legend for
// fences and violations, and zooms on the part of a long run where events
// happen (two-failures' events fit in its first hour of four).
func TestTimelineSVG(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "two-failures.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := sc.Config(Policies["safe"], sc.Seed)
	cfg.Record = true
	r, err := RunConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	svg := r.SVG()
	for _, want := range []string{">0%<", ">50%<", ">100%<", "fence (remediation, cut-off or taint)", "invariant violation", "showing 0:05..0:32 of 4:00"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	t0, t1 := r.window()
	if t0 >= t1 || t1 > r.End || t1-t0 > r.End/2 {
		t.Errorf("window %s..%s of %s: want a zoom on the events", t0, t1, r.End)
	}
	if s := tickStep(t1 - t0); (t1-t0)/s > 10 || s%Minute != 0 {
		t.Errorf("tick step %s over %s: want <= 10 even ticks", s.Dur(), (t1 - t0).Dur())
	}
}

// TestFrontier: a policy no worse on violations, unavailable minutes and
// refused writes and better on one dominates; the text names the
// dominated policies and the frontier.
func TestFrontier(t *testing.T) {
	c := &Comparison{Stats: []*PolicyStats{
		{Policy: "a", Runs: 10, ViolatingRuns: 1, InactiveMin: 100, WritesRefused: 5000},
		{Policy: "b", Runs: 10, ViolatingRuns: 2, InactiveMin: 100, WritesRefused: 5000}, // dominated by a
		{Policy: "c", Runs: 10, ViolatingRuns: 0, InactiveMin: 300, WritesRefused: 9000}, // a trade-off
	}}
	pts := c.Frontier()
	dom := map[string][]string{}
	for _, p := range pts {
		dom[p.Policy] = p.DominatedBy
	}
	if len(dom["a"]) != 0 || len(dom["c"]) != 0 || len(dom["b"]) != 1 || dom["b"][0] != "a" {
		t.Errorf("dominated by: %v; want b by a only", dom)
	}
	if txt := FrontierText(pts); !strings.Contains(txt, "Dominated: b (by a)") || !strings.Contains(txt, "frontier") {
		t.Errorf("frontier text %q", txt)
	}
	if pts[0].Policy != "c" || pts[2].Policy != "b" {
		t.Errorf("order %s, %s, %s: want the frontier first, by violation rate", pts[0].Policy, pts[1].Policy, pts[2].Policy)
	}
}

// TestCompareSVGReadable: the comparison's plots label their axes, show a
// legend entry for every policy, and put no policy name under a bar (where
// seven names overlapped).
func TestCompareSVGReadable(t *testing.T) {
	cmp, err := Compare(loadAll(t)[:2], 2, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, svg := range map[string]string{"frontier": cmp.FrontierSVG(), "bars": cmp.SVG()} {
		for _, p := range PolicyNames() {
			if !strings.Contains(svg, `fill="`+policyColor(p)+`"/><text`) || !strings.Contains(svg, ">"+p+"</text>") {
				t.Errorf("%s: no legend entry for %s", name, p)
			}
		}
		if !strings.Contains(svg, `text-anchor="end">0</text>`) {
			t.Errorf("%s: no y axis ticks", name)
		}
	}
	f := cmp.FrontierSVG()
	for _, want := range []string{"runs that broke an invariant (%)", "minutes per run with PGs that cannot serve", "client writes refused per run (thousands)"} {
		if !strings.Contains(f, want) {
			t.Errorf("frontier plot lacks the axis label %q", want)
		}
	}
}
