package sim

import (
	"path/filepath"
	"testing"
)

// TestRookOutOfServiceRegressions pins the exact set of invariants today's
// Rook path breaks in its regression scenarios when the run goes on after
// the first violation, and that the stale writes are counted. The safe
// policy, which blocklists a node's clients before its pods move, breaks
// none and accepts no stale write.
func TestRookOutOfServiceRegressions(t *testing.T) {
	cases := []struct {
		scenario string
		policy   string
		want     string
		stale    bool
	}{
		// the operator was down: it fences the new node (8); the old
		// node, never blocklisted, writes when it unhangs (7)
		{"rook-14832", "rook-oos", "inv7,inv8", true},
		// no watcher found, no NetworkFence: split-brain when the network heals
		{"rook-16513", "rook-oos", "inv7", true},
		// the NetworkFence's blocklist entry expires after 1 h while the
		// API partition lasts 2 h
		{"api-partition", "rook-oos", "inv7", true},
		{"rook-14832", "safe", "pass", false},
		{"rook-16513", "safe", "pass", false},
		{"api-partition", "safe", "pass", false},
	}
	for _, c := range cases {
		t.Run(c.scenario+"/"+c.policy, func(t *testing.T) {
			sc, err := LoadScenario(filepath.Join(scenarioDir, c.scenario+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			cfg := sc.Config(Policies[c.policy], sc.Seed)
			cfg.KeepGoing = true
			r, err := RunConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got := verdictString(uniqueInts(r.Invariants())); got != c.want {
				t.Errorf("verdict %s, want %s (seed %d)\n%s", got, c.want, sc.Seed, r.Summary())
			}
			if (r.Metrics.StaleWrites > 0) != c.stale {
				t.Errorf("stale writes accepted %.0f, want > 0: %v", r.Metrics.StaleWrites, c.stale)
			}
		})
	}
}

// TestBlocklistExpiry: the api-partition split-brain under rook-oos comes
// from the blocklist entry's expiry; an entry that outlasts the partition
// prevents it, if the kubelet kills the deleted pods before Rook lifts the
// fence (staleKillTime below the operator's lag; with the default 10 s the
// lifted fence races the kubelet and the split-brain returns).
func TestBlocklistExpiry(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "api-partition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		expire Time
		want   string
		kill   Time
	}{{Hour, "inv7", Second}, {3 * Hour, "pass", Second}, {3 * Hour, "inv7", 10 * Second}} {
		cfg := sc.Config(Policies["rook-oos"], sc.Seed)
		cfg.Params.BlocklistExpire = c.expire
		cfg.Params.StaleKillTime = c.kill
		r, err := RunConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict() != c.want {
			t.Errorf("blocklistExpire %s, staleKillTime %s: verdict %s, want %s", c.expire.Dur(), c.kill.Dur(), r.Verdict(), c.want)
		}
	}
}

// TestNeverFencingLosesAvailability: a policy that never fences refuses
// more writes than one that fences, in a scenario where a machine dies.
func TestNeverFencingLosesAvailability(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "rook-16513.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]float64{}
	for _, p := range []string{"never", "safe"} {
		cfg := sc.Config(Policies[p], sc.Seed)
		cfg.KeepGoing = true
		r, err := RunConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		refused[p] = r.Metrics.WritesRefused
	}
	if refused["never"] < 2*refused["safe"] {
		t.Errorf("writes refused: never %.0f, safe %.0f; want never >= 2x safe", refused["never"], refused["safe"])
	}
}
