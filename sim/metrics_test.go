package sim

import (
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
	if r.Recovery < 0 || r.Recovery > 40*Minute {
		t.Errorf("time to recovery %s with %d later peering blips, want the end of the degraded episode (< 40 min)", r.Recovery.Dur(), blips)
	}
	long := runScenario(t, "ttr-peering-blip", "safe", func(c *Config) { c.Params.HealthBlipTime = 0 })
	if long.Recovery < r.Recovery+Hour {
		t.Errorf("healthBlipTime 0 (every transition counts): recovery %s, want an hour more (the blips count)", long.Recovery.Dur())
	}
}
