package sim

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTTRIgnoresPeeringBlip pins the time-to-recovery metric: the PGs
// that map back onto the returned host re-peer for 2 s each when their
// backfill completes, for an hour after the cluster was healthy again;
// those blips must not move the time to recovery (the last transition to
// HEALTH_OK, the first-generation metric, is two hours later).
func TestTTRIgnoresPeeringBlip(t *testing.T) {
	r := runScenario(t, "ttr-peering-blip", "safe", func(c *Config) { c.Record = true })
	blips := 0
	for _, e := range r.Rec.Entries {
		if e.Cat == "health" && strings.Contains(e.Text, "PG_AVAILABILITY") && e.At > r.Metrics.RecoveredAt {
			blips++
		}
	}
	if blips == 0 {
		t.Fatalf("no PG_AVAILABILITY blip after the recovery at %s: the scenario no longer shows what it pins", r.Metrics.RecoveredAt)
	}
	// the degraded episode ends in 43 min (reservations held while a PG
	// waits for a busy target); the blips go on for an hour after
	if r.Recovery < 0 || r.Recovery > 50*Minute {
		t.Errorf("time to recovery %s with %d later peering blips, want the end of the degraded episode (< 50 min)", r.Recovery.Dur(), blips)
	}
	long := runScenario(t, "ttr-peering-blip", "safe", func(c *Config) { c.Params.HealthBlipTime = 0 })
	if long.Recovery < r.Recovery+Hour {
		t.Errorf("healthBlipTime 0 (every transition counts): recovery %s, want an hour more (the blips count)", long.Recovery.Dur())
	}
}

// TestNoQuorumServesLastMap pins Ceph without quorum: the OSD map is
// frozen, PGs whose acting OSDs all run keep serving (35 of 84 host
// triples avoid the two lost mon hosts) and clients with sessions keep
// writing to them; the first-generation model refused every write.
func TestNoQuorumServesLastMap(t *testing.T) {
	s := simAt(t, "no-quorum-serves-last-map", "never", 12*Minute, nil)
	served := 1 - s.pgs.unservedFraction()
	if s.ceph.quorum || served < 0.3 || served > 0.6 || s.clients.nCurWriting == 0 {
		t.Errorf("no quorum at 12 min: quorum %v, %.0f %% of PGs serve, %d clients write; want no quorum, about 42 %% serving, clients writing", s.ceph.quorum, 100*served, s.clients.nCurWriting)
	}
	r := runScenario(t, "no-quorum-serves-last-map", "never", nil)
	all := 18 * 100.0 * float64(r.Metrics.NoQuorum) / float64(Second)
	if r.Metrics.NoQuorum < 4*Minute || r.Metrics.WritesRefused > 0.8*all {
		t.Errorf("%s without quorum: %.0f writes refused, want well under the %.0f of refusing all", r.Metrics.NoQuorum.Dur(), r.Metrics.WritesRefused, all)
	}
}

// TestMonStoreLostWithMachine pins the mon stores: deleting two mon hosts
// whose stores live on the host leaves empty mons that cannot form a
// quorum, even after the power returns; with the stores on volumes the
// replacements bring them back; safe power-cycles mon hosts instead of
// deleting them and regains quorum.
func TestMonStoreLostWithMachine(t *testing.T) {
	host := runScenario(t, "mon-store-lost-with-machine", "mhc-only", nil)
	vol := runScenario(t, "mon-store-lost-with-machine", "mhc-only", func(c *Config) { c.Cluster.MonStore = MonStoreVolume })
	safe := runScenario(t, "mon-store-lost-with-machine", "safe", nil)
	if host.Health != HealthNoAnswer.String() {
		t.Errorf("host stores deleted: health %s at the end, want no quorum for good", host.Health)
	}
	if vol.Health == HealthNoAnswer.String() || vol.Metrics.NoQuorum > Hour {
		t.Errorf("volume stores: health %s, %s without quorum; want quorum back with the replacements", vol.Health, vol.Metrics.NoQuorum.Dur())
	}
	if safe.Health == HealthNoAnswer.String() || safe.Metrics.NoQuorum > 30*Minute {
		t.Errorf("safe: health %s, %s without quorum; want the power-cycled mons back within 30 min", safe.Health, safe.Metrics.NoQuorum.Dur())
	}
}

// TestCephStatusFaults pins the two observation faults: while the
// operators' ceph commands hang, Rook cannot list the watchers and fences
// the node the workloads moved to (inv8; without the hang it fences m4 and
// passes); a stale mgr's PG stats are no ground for a wipe - safe
// power-cycles instead, and the broken variant that trusts them loses the
// latest writes (inv4).
func TestCephStatusFaults(t *testing.T) {
	hang := runScenario(t, "ceph-status-hang", "rook-oos", nil)
	noHang := runScenario(t, "ceph-status-hang", "rook-oos", func(c *Config) { c.Faults = c.Faults[:1] })
	if hang.Verdict() != "inv8" || noHang.Verdict() != "pass" {
		t.Errorf("rook-oos: with the hang %s, without %s; want inv8, pass", hang.Verdict(), noHang.Verdict())
	}
	safe := runScenario(t, "mgr-stale-wipe", "safe", nil)
	p := *Policies["safe"]
	p.Name, p.TrustStalePGStats = "safe-broken", true
	sc, err := LoadScenario(filepath.Join(scenarioDir, "mgr-stale-wipe.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := sc.Config(&p, sc.Seed)
	cfg.KeepGoing = true
	broken, err := RunConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if safe.Verdict() != "pass" || !strings.Contains(broken.Verdict(), "inv4") {
		t.Errorf("mgr-stale-wipe: safe %s, safe trusting stale PG stats %s; want pass, inv4", safe.Verdict(), broken.Verdict())
	}
}
