package calibrate

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// data is where the real runs' timelines are checked in.
const data = "../../fixtures/sim-calibration"

// loadReals reads the checked-in real runs, every run of each experiment.
// An experiment without one is named in the verdicts
// (testdata/verdicts.txt) as not yet run: the held-out one until the model
// and the tolerances are frozen.
func loadReals(t *testing.T) map[string][]*Timeline {
	t.Helper()
	reals := map[string][]*Timeline{}
	for _, e := range Experiments {
		runs, err := LoadRuns(data, e.Name)
		if err != nil {
			t.Fatalf("%v (make calibrate CALIBRATE_SAVE=fixtures/sim-calibration)", err)
		}
		if len(runs) > 0 {
			reals[e.Name] = runs
		}
	}
	return reals
}

var update = flag.Bool("update", false, "rewrite testdata/verdicts.txt from the current model")

// verdicts is the shipped model's verdict on every check of every
// checked-in real run: a change to the model that moves one shows here,
// and the commit says why (as the simulator's goldens).
const verdicts = "testdata/verdicts.txt"

// TestShippedModelVerdicts compares the shipped model with every real run,
// the held-out one included, runs the perturbed models on them, and holds
// the verdicts of every check and perturbation to testdata/verdicts.txt.
// A failing check no known gap covers stays in the golden as the
// calibration's finding (make calibrate exits 1 on it), never excused.
func TestShippedModelVerdicts(t *testing.T) {
	reals := loadReals(t)
	var b strings.Builder
	held := 0
	for _, e := range Experiments {
		if e.HeldOut {
			held++
		}
		real, ok := reals[e.Name]
		if !ok {
			fmt.Fprintf(&b, "%s: no real run checked in\n", e.Name)
			continue
		}
		c, err := Run(e, real, nil)
		if err != nil {
			t.Fatal(err)
		}
		v := "pass"
		switch {
		case !c.Pass():
			v = "FAIL"
		case len(c.Problems) > 0:
			v = "pass but for the known gap"
		}
		fmt.Fprintf(&b, "%s (held out %v, %d real runs): %s\n", e.Name, e.HeldOut, len(real), v)
		for _, r := range c.Results {
			res := "ok"
			if !r.Pass {
				res = "BEYOND: " + r.Problem
			}
			fmt.Fprintf(&b, "  %s: %s\n", r.Check.Name, res)
		}
		if g, ok := knownGaps[e.Name]; ok && len(c.Problems) == 0 {
			t.Errorf("%s: the known gap is closed (every check passes): remove it from knownGaps (%s)", e.Name, g.why)
		}
	}
	if held == 0 {
		t.Error("no experiment is held out")
	}
	// the perturbed models on the real runs: only an experiment the
	// shipped model passes can reject one (Perturb)
	for _, p := range Perturb(reals) {
		if p.Err != nil {
			t.Fatalf("%s: %v", p.Name, p.Err)
		}
		by := strings.Join(p.Rejected, ", ")
		if by == "" {
			by = "NONE"
		}
		fmt.Fprintf(&b, "perturbation %s: rejected by %s\n", p.Name, by)
	}
	got := b.String()
	if *update {
		if err := os.MkdirAll(filepath.Dir(verdicts), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(verdicts, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(verdicts)
	if err != nil {
		t.Fatalf("%v (go test ./sim/calibrate -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the calibration's verdicts changed (go test ./sim/calibrate -update, and say why in the commit):\n%s", got)
	}
}

// TestChecksCanFail: the comparison of a run with itself passes; moving an
// event, stretching the recovery or dropping an event fails the checks
// that read them.
func TestChecksCanFail(t *testing.T) {
	reals := loadReals(t)
	e, _ := lookup("host-loss-2osd")
	real := reals[e.Name][0]
	if c := compareOne(e, real, real); !c.Pass() || len(c.Problems) > 0 {
		t.Fatalf("a run against itself: %v", c.Problems)
	}
	if c := compareOne(e, real, shifted(real, "out", 5)); !failed(c, "out, on the mon's tick") {
		t.Errorf("an out one tick later passes: %v", c.Problems)
	}
	slow := *real
	slow.Samples = nil
	for _, s := range real.Samples {
		s.At *= 2
		slow.Samples = append(slow.Samples, s)
	}
	if c := compareOne(e, real, &slow); !failed(c, "backfill: half of it moved") {
		t.Errorf("a backfill twice as slow passes: %v", c.Problems)
	}
	none := *real
	none.Events = nil
	if c := compareOne(e, real, &none); !failed(c, "order of events") {
		t.Errorf("a run without events passes the order check: %v", c.Problems)
	}
}

// TestRunsWidenByWhatCephShowed: with two real runs, a simulated value
// passes within the tolerance of the range they span and fails beyond it,
// and an order passes when one real run showed it.
func TestRunsWidenByWhatCephShowed(t *testing.T) {
	reals := loadReals(t)
	e, _ := lookup("host-loss-2osd")
	real := reals[e.Name][0]
	later := shifted(real, "out", 3) // a second run whose out came 3 s later
	two := []*Timeline{real, later}
	judge := func(sim *Timeline) *Comparison { return Compare(e, two, [][]*Timeline{{sim}, {sim}}) }
	if c := judge(shifted(real, "out", 4)); failed(c, "out, on the mon's tick") {
		t.Errorf("an out 1 s after the later run's (tolerance 1.5 s) fails: %v", c.Problems)
	}
	if c := compareOne(e, real, shifted(real, "out", 4)); !failed(c, "out, on the mon's tick") {
		t.Errorf("an out 4 s after the only run's passes: %v", c.Problems)
	}
	if c := judge(shifted(real, "out", 5)); !failed(c, "out, on the mon's tick") {
		t.Errorf("an out 2 s after the later run's passes: %v", c.Problems)
	}
	if c := judge(shifted(real, "out", -2)); !failed(c, "out, on the mon's tick") {
		t.Errorf("an out 2 s before the earlier run's passes: %v", c.Problems)
	}
	// the other OSD's down after the up in one real run: an order the
	// other run did not show passes only with that run
	swapped := shifted(real, "down", 1000)
	if c := compareOne(e, real, swapped); !failed(c, "order of events") {
		t.Fatalf("a run whose down comes last passes the order check: %v", c.Problems)
	}
	if c := Compare(e, []*Timeline{real, swapped}, [][]*Timeline{{swapped}, {swapped}}); failed(c, "order of events") {
		t.Errorf("an order a real run showed fails: %v", c.Problems)
	}
}

// compareOne compares one simulated run with one real run.
func compareOne(e *Experiment, real, sim *Timeline) *Comparison {
	return Compare(e, []*Timeline{real}, [][]*Timeline{{sim}})
}

// shifted is a copy of a run with every event what moved by d seconds.
func shifted(t *Timeline, what string, d float64) *Timeline {
	c := *t
	c.Events = nil
	for _, ev := range t.Events {
		if ev.What == what {
			ev.At += d
		}
		c.Events = append(c.Events, ev)
	}
	c.sort()
	return &c
}

func failed(c *Comparison, check string) bool {
	for _, r := range c.Results {
		if r.Check.Name == check {
			return !r.Pass
		}
	}
	return false
}

// TestTimelineFiles: a timeline with an unknown field, experiment, action
// or event is an error.
func TestTimelineFiles(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"unknown field":      `{"experiment":"host-hang","actions":[{"at":0,"do":"pause-host"}],"bogus":1}`,
		"unknown experiment": `{"experiment":"nope","actions":[{"at":0,"do":"pause-host"}]}`,
		"unknown action":     `{"experiment":"host-hang","actions":[{"at":0,"do":"reboot"}]}`,
		"unknown event":      `{"experiment":"host-hang","actions":[{"at":0,"do":"pause-host"}],"events":[{"at":1,"what":"exploded","osd":1}]}`,
		"no actions":         `{"experiment":"host-hang"}`,
	} {
		p := filepath.Join(dir, "x.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestReport: the report names the held-out experiment, shows every
// check and plots every experiment.
func TestReport(t *testing.T) {
	reals := loadReals(t)
	rep := &Report{}
	for _, e := range Experiments {
		runs, ok := reals[e.Name]
		if !ok {
			continue
		}
		c, err := Run(e, runs, nil)
		if err != nil {
			t.Fatal(err)
		}
		rep.Comparisons = append(rep.Comparisons, c)
		if svg := c.SVG(); !strings.Contains(svg, "<polyline") || !strings.Contains(svg, "(sim)") {
			t.Errorf("%s: the plot lacks its curves", e.Name)
		}
	}
	md := rep.Markdown(func(e *Experiment) string { return e.Name + ".svg" })
	for _, c := range rep.Comparisons {
		e := c.Exp
		if !strings.Contains(md, "## "+e.Name) {
			t.Errorf("the report lacks %s", e.Name)
		}
		if e.HeldOut && !strings.Contains(md, "**Held out**") {
			t.Errorf("the report does not name %s as held out", e.Name)
		}
	}
}

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

// TestPerturbationsRejectedAgainstShippedModel: the comparison's power
// measured without Ceph's noise or a real run. Each experiment's script is
// played on the shipped model (Schedule) and the shipped model's run
// stands in for the real one: the shipped model passes every check against
// it, and each perturbed model fails at least one experiment - the checks
// and their tolerances can tell a recovery twice as fast or slow or
// infinitely fast, a slower boot, a 10-s mon tick or a longer down-out
// interval from the model.
func TestPerturbationsRejectedAgainstShippedModel(t *testing.T) {
	refs := map[string]*Timeline{}
	for _, e := range Experiments {
		sched, err := Schedule(e)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := Simulate(e, sched, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		if c := compareOne(e, ref, ref); len(c.Problems) > 0 {
			// a check reads an event the model does not show (a known
			// gap): this run cannot stand in for a real one
			if _, gap := knownGaps[e.Name]; !gap {
				t.Errorf("%s: the shipped model's run cannot be judged by its own checks: %v", e.Name, c.Problems)
			}
			t.Logf("%s: not a reference, its own checks cannot read it: %v", e.Name, c.Problems)
			continue
		}
		again, err := Run(e, []*Timeline{ref}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Problems) > 0 {
			t.Errorf("%s: the shipped model fails against its own run (not replayable?): %v", e.Name, again.Problems)
		}
		refs[e.Name] = ref
	}
	for _, p := range Perturbations {
		var rejected []string
		for _, e := range Experiments {
			ref, ok := refs[e.Name]
			if !ok {
				continue
			}
			c, err := Run(e, []*Timeline{ref}, p.Adjust)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Problems) > 0 {
				rejected = append(rejected, e.Name)
			}
		}
		if len(rejected) == 0 {
			t.Errorf("perturbation %q passes every experiment against the shipped model's runs: the checks cannot see it", p.Name)
			continue
		}
		t.Logf("%-30s rejected by %s", p.Name, strings.Join(rejected, ", "))
	}
}

// TestHeldOutJudgedWithFixedParams: the held-out experiment is simulated
// from its declaration and the code's fixed parameters only - the real
// run gives the schedule of its actions, the mon's tick phase and CRUSH's
// placement of the PGs at t0 (the layout), nothing it measured. Its simulated run is the same whatever the real run's
// events, samples and writes were.
func TestHeldOutJudgedWithFixedParams(t *testing.T) {
	reals := loadReals(t)
	for _, e := range Experiments {
		if !e.HeldOut {
			continue
		}
		runs, ok := reals[e.Name]
		if !ok {
			// not run yet: played on its schedule instead
			sched, err := Schedule(e)
			if err != nil {
				t.Fatal(err)
			}
			runs = []*Timeline{sched}
		}
		for _, real := range runs {
			heldOutIsBlind(t, e, real)
		}
	}
}

// heldOutIsBlind: the simulated run of a real run's schedule is the same
// whatever the real run measured.
func heldOutIsBlind(t *testing.T, e *Experiment, real *Timeline) {
	t.Helper()
	a, err := Simulate(e, real, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	blind := &Timeline{Experiment: real.Experiment, TickPhase: real.TickPhase, Actions: real.Actions, Placement: real.Placement,
		// the observation's length is the schedule's too
		Events: []Event{{At: 1, What: "down", OSD: 0}}, Samples: []Sample{{At: real.end(), Clean: 1}}}
	b, err := Simulate(e, blind, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("%s (%s): the simulated run depends on what the real run measured", e.Name, real.Started)
	}
}
