package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/fenceproof/fenceproof/sim"
)

func TestCompareJSONNamesWhatIsUnexpected(t *testing.T) {
	cmp := &sim.Comparison{
		Scenarios:  []string{"power-loss", "two-failures"},
		Verdicts:   map[string]map[string]string{"power-loss": {"safe": "pass", "seed": "inv1"}, "two-failures": {"safe": "pass", "seed": "pass"}},
		Expected:   map[string]map[string]string{"power-loss": {"safe": "pass", "seed": "inv1"}, "two-failures": {"safe": "pass", "seed": "inv1"}},
		Stats:      []*sim.PolicyStats{{Policy: "seed", Runs: 10, ViolatingRuns: 4, SafetyRuns: 4}, {Policy: "safe", Runs: 10, ViolatingRuns: 2, SafetyRuns: 1, LivenessRuns: 1}},
		RandomRuns: 8, Seed: 3,
	}
	var got compareSummary
	if err := json.Unmarshal([]byte(compareJSON(cmp)), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"two-failures with seed: expected inv1, got pass", "safe broke a safety invariant in 1 runs"}
	if !slices.Equal(got.Unexpected, want) {
		t.Errorf("unexpected = %q, want %q", got.Unexpected, want)
	}
	if got.Scenarios != 2 || got.RandomRuns != 8 || got.Seed != 3 || len(got.Policies) != 2 ||
		got.Policies[0].Policy != "safe" || got.Policies[0].ViolatingRuns != 2 || got.Policies[0].SafetyRuns != 1 || len(got.Policies[0].DominatedBy) != 0 ||
		!slices.Equal(got.Policies[1].DominatedBy, []string{"safe"}) {
		t.Errorf("summary %+v: want 2 scenarios, 8 random runs, seed 3, safe first (2 of 10, 1 safety) on the frontier, seed dominated by safe", got)
	}
	// a liveness violation of safe is no failure of the comparison
	cmp.Verdicts["two-failures"]["seed"], cmp.Stats[1].SafetyRuns = "inv1", 0
	if u := unexpected(cmp); len(u) != 0 {
		t.Errorf("a comparison as expected: unexpected = %q", u)
	}
}
