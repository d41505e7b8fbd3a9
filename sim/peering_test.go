package sim

import (
	"math/bits"
	"strings"
	"testing"
)

// inactiveSpan returns when PG_AVAILABILITY was first raised at or after
// from and when it was cleared next (-1: not raised, or not cleared).
func inactiveSpan(r *Result, from Time) (Time, Time) {
	start := Time(-1)
	for _, e := range r.Rec.Entries {
		if e.Cat != "health" || e.At < from {
			continue
		}
		inactive := strings.Contains(e.Text, "PG_AVAILABILITY")
		switch {
		case start < 0 && inactive:
			start = e.At
		case start >= 0 && !inactive:
			return start, e.At
		}
	}
	return start, -1
}

// TestBackfillTargetOutsideMinSize pins peering: an up OSD that is only a
// backfill target (it holds no copy yet) is outside the acting set and
// does not count toward min_size. In second-failure-during-backfill m5's
// PGs backfill for hours; when m4 loses power for 4 minutes, the PGs
// whose acting set was m4 and one other OSD are undersized+peered (I/O
// blocked) for as long as m4 is down, and seed's and mhc-only's reboot of
// m3, whose OSDs serve, breaks invariant 3. The first-generation rule
// (every up OSD counts, countBackfillTargets) showed those PGs active with
// one complete copy, and no violation.
func TestBackfillTargetOutsideMinSize(t *testing.T) {
	s := simAt(t, "second-failure-during-backfill", "never", 42*Minute, func(c *Config) { c.Record = true })
	peered := 0
	for pi := range s.pgs.pgs {
		p := &s.pgs.pgs[pi]
		up := s.pgs.pgUp(p)
		complete := bits.OnesCount8(up & p.data)
		if complete < s.P.PoolMinSize && bits.OnesCount8(up) >= s.P.PoolMinSize {
			// below min_size only because a backfill target is up
			if p.state != stInactive {
				t.Errorf("PG %d: %d up, %d with a copy, state %s; want undersized+peered", pi, bits.OnesCount8(up), complete, pgStateNames[p.state])
			}
			peered++
		}
	}
	if peered == 0 {
		t.Fatalf("no PG below min_size behind a backfill target at 42m: the scenario no longer shows what it pins (%s)", s.pgs.summary())
	}
	r := s.Run()
	from, to := inactiveSpan(r, 40*Minute)
	// m4's OSDs are marked down after the heartbeat grace and come back
	// after the power returns at 44m, the node boots (60 s +-10 %) and the
	// OSDs boot (10 s +-10 %) and peer
	if from < 40*Minute || from > 40*Minute+30*Second || to < 45*Minute || to > 46*Minute {
		t.Errorf("PGs inactive from %s to %s; want from m4's markdown (40m20s) to its return (about 45m15s)", from, to)
	}
	for _, pol := range []string{"seed", "mhc-only"} {
		if v := runScenario(t, "second-failure-during-backfill", pol, nil).Verdict(); v != "inv3" {
			t.Errorf("%s reboots m3 while its OSDs serve PGs at min_size: verdict %s, want inv3", pol, v)
		}
	}
	old := simAt(t, "second-failure-during-backfill", "seed", 0, func(c *Config) { c.Record = true })
	old.pgs.countBackfillTargets = true
	or := old.Run()
	if f, e := inactiveSpan(or, 40*Minute); e-f > 10*Second || or.Verdict() != "pass" {
		t.Errorf("backfill targets counted toward min_size: PGs inactive from %s to %s, verdict %s; want only peering blips and no violation (what the first model showed)", f, e, or.Verdict())
	}
}
