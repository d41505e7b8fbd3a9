package sim

import (
	"path/filepath"
	"strings"
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

// TestLivenessWhateverTheCause pins invariant 6 on the liveness
// scenarios: every policy that leaves a machine down and unfenced, or the
// cluster without quorum, past the bound breaks it, whatever the cause (a
// stalled controller, hung mon hosts under a frozen OSD map, a NIC that
// flaps); the first-generation model excused each of these. Those that
// end it in time keep it.
func TestLivenessWhateverTheCause(t *testing.T) {
	cases := []struct {
		scenario string
		keep     []string // policies that end the outage within the bounds
	}{
		{"liveness-mhc-stalled-6h", []string{"safe"}},
		{"liveness-operator-stalled-6h", []string{"mhc-only", "csi-oos", "rook-oos"}},
		{"liveness-mon-hosts-hung-6h", nil},
		{"liveness-mon-hosts-hung-forever", nil},
		{"liveness-mon-hosts-nic-down-6h", nil},
		{"liveness-mon-hosts-nic-down-forever", nil},
		{"liveness-nic-down-290s-of-300s", []string{"safe"}},
	}
	for _, c := range cases {
		for _, pn := range PolicyNames() {
			r := runScenario(t, c.scenario, pn, nil)
			keeps := !containsInt(r.Invariants(), 6)
			want := false
			for _, k := range c.keep {
				want = want || k == pn
			}
			if keeps != want {
				t.Errorf("%s/%s: keeps liveness %v, want %v (%s)", c.scenario, pn, keeps, want, r.Verdict())
			}
		}
	}
}

// TestLivenessNamesTheCause pins the blockers invariant 6 names, each the
// true one, read from the actor that did not act: the first model blamed a
// power-off on "its Ready condition flaps" or "no controller acted" and
// never named noout.
func TestLivenessNamesTheCause(t *testing.T) {
	for _, c := range []struct {
		scenario, policy string
		want             []string
	}{
		{"baremetal-reboot-no-power", "mhc-only", []string{"m4 down", "the host has no power, so its BMC does not answer"}},
		{"noout-maintenance", "rook", []string{"MachineDisruptionBudget", "the noout flag keeps the down OSDs in"}},
		{"liveness-operator-stalled-6h", "seed", []string{"maxUnavailable 1 is used up", "its label stays: the storage operator that would remove it is stalled"}},
		{"liveness-operator-stalled-6h", "safe", []string{"safe runs in the storage operator, which is stalled"}},
		{"liveness-mhc-stalled-6h", "mhc-only", []string{"the MachineHealthCheck is stalled"}},
		{"liveness-nic-down-290s-of-300s", "mhc-only", []string{"its Ready condition flaps ("}},
		{"rack-switch-loss-baremetal", "safe", []string{"PGs degraded", "a whole rack is down (mon_osd_down_out_subtree_limit rack)"}},
		{"mon-quorum-lost", "never", []string{"no mon quorum", "m1 has no power; m2 has no power"}},
		{"oos-taint-evicts-mons", "csi-oos", []string{"no mon quorum", "m1 lost its pods to the out-of-service taint"}},
	} {
		r := runScenario(t, c.scenario, c.policy, nil)
		if len(r.Violations) == 0 || r.Violations[0].Inv != 6 {
			t.Errorf("%s/%s: %s, want an inv6 naming %q", c.scenario, c.policy, r.Verdict(), c.want)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.Violations[0].Text, w) {
				t.Errorf("%s/%s: %q does not name %q", c.scenario, c.policy, r.Violations[0].Text, w)
			}
		}
		if c.policy != "mhc-only" || !strings.Contains(c.scenario, "nic-down") {
			if strings.Contains(r.Violations[0].Text, "flaps") {
				t.Errorf("%s/%s: blames flapping: %s", c.scenario, c.policy, r.Violations[0].Text)
			}
		}
	}
}

// TestDegradedBoundScalesWithData pins a bug of the fixed 3-hour bound: it
// flagged any large backfill under every policy. A host of 10 TiB lost for
// good backfills for almost 4 hours and progresses: no degraded-PG
// violation. The same loss with noout set, so that nothing backfills,
// breaks the bound at 3 hours and names noout.
func TestDegradedBoundScalesWithData(t *testing.T) {
	big := recoveryCases[1]
	cfg := recoveryConfig(big, Fault{At: 10 * Minute, Kind: FaultPowerOff, Machine: 4})
	cfg.Duration = 8 * Hour
	r, err := RunConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Recovery < cfg.Params.DegradedBound {
		t.Fatalf("%s recovers in %s: no longer longer than the fixed bound, the test shows nothing", big.name, r.Recovery.Dur())
	}
	for _, v := range r.Violations {
		if strings.HasPrefix(v.Text, "PGs degraded") {
			t.Errorf("%s, recovering for %s: %s", big.name, r.Recovery.Dur(), v)
		}
	}
	cfg.Faults = append(cfg.Faults, Fault{At: 5 * Minute, Kind: FaultSetNoOut, Machine: -1})
	s, err := RunConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var v *Violation
	for j := range s.Violations {
		if strings.HasPrefix(s.Violations[j].Text, "PGs degraded") {
			v = &s.Violations[j]
			break
		}
	}
	if v == nil || v.At > 10*Minute+cfg.Params.DegradedBound+Minute || !strings.Contains(v.Text, "the noout flag keeps them in") {
		t.Errorf("noout, nothing backfills: %v; want the degraded bound broken at 3h naming noout", v)
	}
}
