package sim

import (
	"path/filepath"
	"testing"
)

// TestRookOutOfServiceRegressions pins the exact set of invariants the
// out-of-service paths break in their regression scenarios when the run
// goes on after the first violation, and whether stale writes were
// accepted. Today's Rook path fences the new node when its operator comes
// back late (rook-14832: inv8); librbd's own lock break blocklists a dead
// owner for an hour, so the old clients of rook-16513 cannot write when
// the network heals, and NetworkFence entries last ceph-csi's 5 years, so
// api-partition's do not expire. ceph-csi's metadata path (csi-oos) fences
// the old node's stored address before the volumes detach and breaks none;
// neither does safe.
func TestRookOutOfServiceRegressions(t *testing.T) {
	cases := []struct {
		scenario string
		policy   string
		want     string
		stale    bool
	}{
		{"rook-14832", "rook-oos", "inv8", false},
		{"rook-16513", "rook-oos", "pass", false},
		{"api-partition", "rook-oos", "pass", false},
		{"two-zones-lost-quorum", "rook-oos", "inv6", false},
		{"rook-14832", "csi-oos", "pass", false},
		{"rook-16513", "csi-oos", "pass", false},
		{"api-partition", "csi-oos", "pass", false},
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

// TestLockBreakBlocklists pins librbd's lock break: in rook-16513 the new
// clients break the locks of the unreachable old ones and blocklist them
// (rbd_blocklist_on_break_lock); with the option off the old clients write
// when the network heals - the split-brain the first-generation model
// blamed on the missing NetworkFence.
func TestLockBreakBlocklists(t *testing.T) {
	on := runScenario(t, "rook-16513", "rook-oos", nil)
	off := runScenario(t, "rook-16513", "rook-oos", func(c *Config) { c.Params.RBDBlocklistOnBreakLock = false })
	if on.Verdict() != "pass" || off.Verdict() != "inv7" {
		t.Errorf("rook-16513 rook-oos: lock break blocklists %s, does not %s; want pass, inv7", on.Verdict(), off.Verdict())
	}
}

// TestBlocklistExpiry: a NetworkFence entry that expired during a 2 h API
// partition lets the old clients write (inv7); ceph-csi's 5-year entries
// (networkFenceExpire) do not expire.
func TestBlocklistExpiry(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "api-partition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		expire Time
		want   string
	}{{Hour, "inv7"}, {157784760 * Second, "pass"}} {
		cfg := sc.Config(Policies["rook-oos"], sc.Seed)
		cfg.Params.NetworkFenceExpire = c.expire
		r, err := RunConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict() != c.want {
			t.Errorf("networkFenceExpire %s: verdict %s, want %s", c.expire.Dur(), r.Verdict(), c.want)
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
