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
		Stats:      []*sim.PolicyStats{{Policy: "seed", Runs: 10, ViolatingRuns: 4}, {Policy: "safe", Runs: 10, ViolatingRuns: 1}},
		RandomRuns: 8, Seed: 3,
	}
	var got compareSummary
	if err := json.Unmarshal([]byte(compareJSON(cmp)), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"two-failures with seed: expected inv1, got pass", "safe broke an invariant in 1 runs"}
	if !slices.Equal(got.Unexpected, want) {
		t.Errorf("unexpected = %q, want %q", got.Unexpected, want)
	}
	if got.Scenarios != 2 || got.RandomRuns != 8 || got.Seed != 3 || len(got.Policies) != 2 || got.Policies[0] != (policy{"safe", 10, 1}) {
		t.Errorf("summary %+v: want 2 scenarios, 8 random runs, seed 3, safe ranked first with 1 of 10", got)
	}
	cmp.Verdicts["two-failures"]["seed"], cmp.Stats[1].ViolatingRuns = "inv1", 0
	if u := unexpected(cmp); len(u) != 0 {
		t.Errorf("a comparison as expected: unexpected = %q", u)
	}
}
