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
