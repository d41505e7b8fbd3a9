package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/fenceproof/fenceproof/sim"
)

// compareSummary is sim-compare.json: the comparison's verdict in a form
// other tools read (the reports front page, internal/reportindex), so that
// they need not parse the text tables.
type compareSummary struct {
	Scenarios  int      `json:"scenarios"`
	RandomRuns int      `json:"randomRuns"`
	Seed       uint64   `json:"seed"`
	Policies   []policy `json:"policies"` // the frontier first (sim.Comparison.Frontier)
	// Unexpected lists every scripted verdict that differs from the
	// scenario file's expectation, and a safe policy that broke a safety
	// invariant: what makes `sim compare` exit 1.
	Unexpected []string `json:"unexpected"`
}

type policy struct {
	Policy        string   `json:"policy"`
	Runs          int      `json:"runs"`
	ViolatingRuns int      `json:"violatingRuns"`
	SafetyRuns    int      `json:"safetyRuns"`
	LivenessRuns  int      `json:"livenessRuns"`
	DominatedBy   []string `json:"dominatedBy"` // empty: on the frontier
}

// unexpected lists what makes a comparison fail, in scenario order.
func unexpected(cmp *sim.Comparison) []string {
	out := []string{}
	for _, sc := range cmp.Scenarios {
		for _, p := range slices.Sorted(maps.Keys(cmp.Expected[sc])) {
			if want, got := cmp.Expected[sc][p], cmp.Verdicts[sc][p]; got != want {
				out = append(out, fmt.Sprintf("%s with %s: expected %s, got %s", sc, p, want, got))
			}
		}
	}
	for _, st := range cmp.Stats {
		if st.Policy == "safe" && st.SafetyRuns > 0 {
			out = append(out, fmt.Sprintf("safe broke a safety invariant in %d runs", st.SafetyRuns))
		}
	}
	return out
}

func compareJSON(cmp *sim.Comparison) string {
	s := compareSummary{Scenarios: len(cmp.Scenarios), RandomRuns: cmp.RandomRuns, Seed: cmp.Seed, Unexpected: unexpected(cmp)}
	for _, f := range cmp.Frontier() {
		for _, st := range cmp.Stats {
			if st.Policy == f.Policy {
				s.Policies = append(s.Policies, policy{Policy: st.Policy, Runs: st.Runs, ViolatingRuns: st.ViolatingRuns,
					SafetyRuns: st.SafetyRuns, LivenessRuns: st.LivenessRuns, DominatedBy: append([]string{}, f.DominatedBy...)})
			}
		}
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	return string(b) + "\n"
}
