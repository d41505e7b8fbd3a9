package sim

import (
	"path/filepath"
	"testing"
)

// TestFencedMachineNeverReturns pins the closed liveness loophole: a
// fenced machine that the MachineSet never replaces no longer counts as
// "fenced and not back", so the safe policy fences the next dead machine
// instead of waiting for it forever (and invariant 6's clock runs).
func TestFencedMachineNeverReturns(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "fenced-machine-never-returns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := RunConfig(sc.Config(Policies["safe"], sc.Seed))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict() != "pass" || r.Metrics.Fences != 2 {
		t.Errorf("safe: verdict %s with %d fences, want pass with m4 and m5 fenced (seed %d)\n%s", r.Verdict(), r.Metrics.Fences, sc.Seed, r.Summary())
	}
	// Invariant 1 no longer counts the gone machine: fencing m5 after it
	// is not two machines fenced at once (the first-generation model said inv1).
	r, err = RunConfig(sc.Config(Policies["mhc-only"], sc.Seed))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict() != "pass" || r.Metrics.Fences != 2 {
		t.Errorf("mhc-only: verdict %s with %d fences, want pass with 2", r.Verdict(), r.Metrics.Fences)
	}
}
