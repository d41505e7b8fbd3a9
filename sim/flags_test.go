package sim

import (
	"strings"
	"testing"
)

func (s *Sim) remappedPGs() int {
	n := 0
	for pi := range s.pgs.pgs {
		if s.pgs.pgs[pi].pendingBack() != 0 {
			n++
		}
	}
	return n
}

// TestNoOut: with noout set the down host's OSDs stay in (no backfill) and
// OSDMAP_FLAGS keeps Ceph at HEALTH_WARN; without the flag (the same
// schedule minus set-noout) they go out.
func TestNoOut(t *testing.T) {
	s := simAt(t, "noout-maintenance", "never", 50*Minute, nil)
	if out := s.osdsOut(3); out != 0 {
		t.Errorf("noout: %d of m4's OSDs out", out)
	}
	if h := s.ceph.healthText(); !strings.Contains(h, "OSDMAP_FLAGS(noout)") {
		t.Errorf("noout: health %q lacks OSDMAP_FLAGS(noout)", h)
	}
	b := simAt(t, "noout-maintenance", "never", 50*Minute, func(c *Config) { c.Faults = c.Faults[1:] })
	if out := b.osdsOut(3); out != 2 {
		t.Errorf("without noout: %d of m4's OSDs out, want 2", out)
	}
	// after the window: flag gone, HEALTH_OK
	e := simAt(t, "noout-maintenance", "never", 2*Hour+10*Minute, nil)
	if h, _ := e.ceph.health(); h != HealthOK {
		t.Errorf("after the window: %s", e.ceph.healthText())
	}
}

// TestNoRebalance: the returned host's PGs map back but stay remapped
// (active, not clean, not degraded) while norebalance is set, and backfill
// once it goes.
func TestNoRebalance(t *testing.T) {
	s := simAt(t, "norebalance-return", "never", 2*Hour, nil)
	if n := s.remappedPGs(); n == 0 {
		t.Fatalf("host back, norebalance set: no PG waits to map back")
	}
	if s.pgs.nDegraded != 0 || s.pgs.nInactive != 0 || s.ceph.allClean() {
		t.Errorf("norebalance: %d degraded, %d inactive, all clean %v; want remapped PGs active, not degraded, not clean", s.pgs.nDegraded, s.pgs.nInactive, s.ceph.allClean())
	}
	if s.watch.metrics.MappedBack != 0 {
		t.Errorf("norebalance: %d PGs backfilled back while the flag was set", s.watch.metrics.MappedBack)
	}
	e := simAt(t, "norebalance-return", "never", 5*Hour, nil)
	if e.remappedPGs() != 0 || !e.ceph.allClean() || e.watch.metrics.MappedBack == 0 {
		t.Errorf("flag gone: %d remapped, clean %v, %d mapped back", e.remappedPGs(), e.ceph.allClean(), e.watch.metrics.MappedBack)
	}
	b := simAt(t, "norebalance-return", "never", 2*Hour, func(c *Config) { c.Faults = c.Faults[:1] })
	if b.remappedPGs() != 0 || b.watch.metrics.MappedBack == 0 {
		t.Errorf("without norebalance: %d remapped at 2h, %d mapped back; want all back", b.remappedPGs(), b.watch.metrics.MappedBack)
	}
}

// TestWronglyMarkedDown: an OSD that runs but loses its cluster network
// flaps (marked down, reasserts, marked down...) and stops itself after
// more than osd_max_markdown_count markdowns; PGs stall while it is up.
// With the reassertion off (osdMaxMarkdownCount 0, the first model) there
// is no flapping and less unavailability.
func TestWronglyMarkedDown(t *testing.T) {
	r := runScenario(t, "wrongly-marked-down", "never", nil)
	mt := r.Metrics
	if mt.WronglyDown == 0 || mt.SelfStops == 0 {
		t.Fatalf("no flapping: %d wrongly marked down, %d self-stops", mt.WronglyDown, mt.SelfStops)
	}
	// 2 OSDs, an hour: each loop is 6 markdowns then a 5-minute stop
	if mt.SelfStops < 4 || mt.WronglyDown < 6*mt.SelfStops {
		t.Errorf("%d self-stops, %d markdowns seen: want >= 4 stops of 6 markdowns each", mt.SelfStops, mt.WronglyDown)
	}
	off := runScenario(t, "wrongly-marked-down", "never", func(c *Config) { c.Params.OSDMaxMarkdownCount = 0 })
	if off.Metrics.WronglyDown != 0 || off.Metrics.InactivePG >= mt.InactivePG {
		t.Errorf("reassertion off: %d wrongly down, inactive %s vs %s flapping; want 0 and less", off.Metrics.WronglyDown, off.Metrics.InactivePG.Dur(), mt.InactivePG.Dur())
	}
}

func runScenario(t *testing.T, scenario, pol string, edit func(*Config)) *Result {
	t.Helper()
	s := simAt(t, scenario, pol, 0, edit)
	return s.Run()
}

// TestFlagFaultsParse: the flags are controller faults (no machine) that
// `for:` clears.
func TestFlagFaultsParse(t *testing.T) {
	base := "name: x\nduration: 3h\nexpect: {seed: pass, rook: pass, mhc-only: pass, rook-oos: pass, never: pass, safe: pass}\n"
	if _, err := ParseScenario("x.yaml", []byte(base+"faults:\n  - {at: 1m, kind: set-noout, machine: m1}\n")); err == nil || !strings.Contains(err.Error(), "not allowed for controller fault") {
		t.Errorf("set-noout with a machine: %v", err)
	}
	sc, err := ParseScenario("x.yaml", []byte(base+"faults:\n  - {at: 1m, kind: set-norebalance, for: 1h}\n  - {at: 2h, kind: set-noout}\n  - {at: 150m, kind: unset-noout}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := sc.Config(Policies["never"], 1)
	var flags []uint8
	s, _ := New(cfg)
	for _, at := range []Time{30 * Minute, 90 * Minute, 140 * Minute, 160 * Minute} {
		s.runUntil(at)
		flags = append(flags, s.ceph.flags)
	}
	want := []uint8{flagNoRebalance, 0, flagNoOut, 0}
	for i := range want {
		if flags[i] != want[i] {
			t.Errorf("flags over time %v, want %v", flags, want)
			break
		}
	}
}

// firstFence returns the time of the first fence action on machine m (-1: none).
func firstFence(r *Result, m string) Time {
	for _, e := range r.Rec.Entries {
		if e.Cat == "FENCE" && strings.HasPrefix(e.Text, m+" ") {
			return e.At
		}
	}
	return -1
}

// TestLatePowerReport: the provider's power state is an imperfect oracle.
// When it reports a power loss late (powerReportLag), safe, which fences
// without quorum only on that report plus the peers' silence, fences the
// first mon host later by about the lag, and stays safe.
func TestLatePowerReport(t *testing.T) {
	on := runScenario(t, "mon-quorum-lost", "safe", func(c *Config) { c.Record = true })
	late := runScenario(t, "mon-quorum-lost", "safe", func(c *Config) { c.Record = true; c.Params.PowerReportLag = 20 * Minute })
	if len(late.Violations) > 0 {
		t.Fatalf("late power report: %s", late.Verdict())
	}
	a, b := firstFence(on, "m1"), firstFence(late, "m1")
	if a < 0 || b < 0 || b-a < 15*Minute {
		t.Errorf("m1 fenced at %s with a prompt report, %s with a 20 min late one: want >= 15 min later", a, b)
	}
}

// TestFlappingNICStopsDaemon pins two OSD rules a flapping NIC meets: the
// daemon, which runs all along, sees each markdown when its network comes
// back and stops itself after osd_max_markdown_count of them (the
// first-generation model counted only markdowns seen at once, so a NIC
// flap never stopped it); and the mon lengthens a laggy OSD's grace, so
// later markdowns come later than osd_heartbeat_grace after the cut.
func TestFlappingNICStopsDaemon(t *testing.T) {
	r := runScenario(t, "flapping-node", "never", func(c *Config) { c.Record = true; c.Params.Jitter = 0 })
	if r.Metrics.SelfStops == 0 {
		t.Errorf("flapping NIC: %d markdowns, no daemon stopped itself", r.Metrics.Markdowns)
	}
	// the NIC is cut at 10m + k x 100s; without laggy grace every markdown
	// comes 27 s after its cut (the grace and the lag of noticing it), with
	// it later ones come later
	late := func(r *Result) bool {
		for _, e := range r.Rec.Entries {
			if e.Cat == "ceph" && strings.HasPrefix(e.Text, "osd.4 down") {
				cut := 10*Minute + (e.At-10*Minute)/(100*Second)*(100*Second)
				if e.At-cut > 32*Second {
					return true
				}
			}
		}
		return false
	}
	flat := runScenario(t, "flapping-node", "never", func(c *Config) {
		c.Record = true
		c.Params.Jitter = 0
		c.Params.MonOSDAdjustHeartbeatGrace = false
	})
	if !late(r) || late(flat) {
		t.Errorf("a markdown later than 32 s after its cut: with laggy grace %v, without %v; want true, false", late(r), late(flat))
	}
}
