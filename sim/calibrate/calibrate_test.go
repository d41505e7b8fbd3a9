package calibrate

import (
	"os"
	"strings"
	"testing"
	"time"
)

const sample = "../../fixtures/sim-calibration/fencing-c7-timeline.txt"

// TestFencingReplay: the checked-in kind run replays within its
// tolerances, and a kind run whose node took a minute to go NotReady does
// not (the comparison can fail).
func TestFencingReplay(t *testing.T) {
	raw, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ReplayFencing(sample, raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Problems) > 0 {
		t.Errorf("the replay differs: %v\n%s", f.Problems, f.Markdown())
	}
	slow := strings.Replace(string(raw), "26.880  node fenceproof-worker2 NotReady", "66.880  node fenceproof-worker2 NotReady", 1)
	g, err := ReplayFencing("slow", []byte(slow))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Problems) == 0 {
		t.Errorf("a node NotReady 60 s after the cut replays within tolerance:\n%s", g.Markdown())
	}
	if _, err := ReplayFencing("x", []byte("12 not a timeline\n")); err == nil {
		t.Errorf("a timeline without its steps: no error")
	}
}

// TestCompareCatches: the Ceph comparison passes a run against itself and
// catches another order of events and a phase beyond its tolerance.
func TestCompareCatches(t *testing.T) {
	s, err := RunSim(Default, Default.Outage)
	if err != nil {
		t.Fatal(err)
	}
	for k := EventKind(0); k < numEvents; k++ {
		if !s.has(k) {
			t.Fatalf("the simulated run lacks %s", k)
		}
	}
	if c := Compare(Default, s, s); len(c.Problems) > 0 {
		t.Errorf("a run against itself: %v", c.Problems)
	}
	late := *s
	late.Events[EvOut] += 40 * time.Second // out after the restart: order and phase
	c := Compare(Default, &late, s)
	if len(c.Problems) < 2 {
		t.Errorf("out 40 s later: problems %v, want the order and the phase", c.Problems)
	}
	if md := Markdown(c, nil); !strings.Contains(md, "BEYOND") || !strings.Contains(md, "differs") {
		t.Errorf("report does not show the difference:\n%s", md)
	}
}
