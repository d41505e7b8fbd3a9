package sim

import (
	"strings"
	"testing"
)

// TestTTRIgnoresPeeringBlip pins the time-to-recovery metric: the PGs
// that map back onto the returned host re-peer for 2 s each when their
// backfill completes, long after the cluster was healthy again; those
// blips must not move the time to recovery (the first-generation metric,
// the last transition to HEALTH_OK, said 1h04m instead of 14 min).
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
	if r.Recovery < 0 || r.Recovery > 20*Minute {
		t.Errorf("time to recovery %s with %d later peering blips, want the end of the degraded episode (< 20 min)", r.Recovery.Dur(), blips)
	}
	long := runScenario(t, "ttr-peering-blip", "safe", func(c *Config) { c.Params.HealthBlipTime = 0 })
	if long.Recovery < Hour {
		t.Errorf("healthBlipTime 0 (every transition counts): recovery %s, want > 1 h (the blips count)", long.Recovery.Dur())
	}
}
