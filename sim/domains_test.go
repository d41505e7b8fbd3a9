package sim

import (
	"path/filepath"
	"strings"
	"testing"
)

// simAt loads a scenario, applies edit to its config and runs policy pol
// until virtual time t (keeping going past violations).
func simAt(t *testing.T, scenario, pol string, at Time, edit func(*Config)) *Sim {
	t.Helper()
	sc, err := LoadScenario(filepath.Join(scenarioDir, scenario+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := sc.Config(Policies[pol], sc.Seed)
	cfg.KeepGoing = true
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.runUntil(at)
	return s
}

func (s *Sim) osdsOut(m int) int {
	n := 0
	for _, o := range s.ceph.hostOSDs[m] {
		if !s.ceph.osds[o].in {
			n++
		}
	}
	return n
}

// zonesOf returns the number of distinct zones PG pi's replicas are in.
func (s *Sim) zonesOf(pi int) int {
	seen := map[int32]bool{}
	for k := 0; k < s.P.PoolSize; k++ {
		seen[s.ceph.topo.zone[s.ceph.osds[s.pgs.pgs[pi].slot[k]].m]] = true
	}
	return len(seen)
}

// TestThreeZonesBackfillStaysInZone: in the three-zone layout a host's PGs
// backfill only onto the other hosts of its zone, and every PG keeps its
// three replicas in three zones.
func TestThreeZonesBackfillStaysInZone(t *testing.T) {
	s := simAt(t, "three-zones", "never", 2*Hour, nil)
	if out := s.osdsOut(4); out != 2 {
		t.Fatalf("m5's OSDs out: %d, want 2 (a single host is below the subtree limit)", out)
	}
	if s.ceph.location(4) != "zone 1" || s.ceph.location(1) != "zone 1" || s.ceph.location(0) != "zone 0" {
		t.Fatalf("layout: m5 %q, m2 %q, m1 %q", s.ceph.location(4), s.ceph.location(1), s.ceph.location(0))
	}
	for pi := range s.pgs.pgs {
		if z := s.zonesOf(pi); z != 3 {
			t.Errorf("PG %d spans %d zones, want 3", pi, z)
		}
	}
	if s.pgs.nState[stClean] != len(s.pgs.pgs) {
		t.Errorf("not all PGs active+clean 110 min after the loss: %s", s.pgs.summary())
	}
}

// TestZoneLoss: one zone of three lost; PGs stay active (degraded), quorum
// holds, and mon_osd_down_out_subtree_limit keeps the zone's OSDs in. With
// the limit raised to root (the broken variant) they are marked out.
func TestZoneLoss(t *testing.T) {
	s := simAt(t, "zone-loss", "never", Hour, nil)
	if !s.ceph.quorum || s.pgs.nInactive != 0 || s.pgs.nDegraded != len(s.pgs.pgs) {
		t.Errorf("zone lost: quorum %v, %d inactive, %d degraded of %d; want quorum, 0 inactive, all degraded", s.ceph.quorum, s.pgs.nInactive, s.pgs.nDegraded, len(s.pgs.pgs))
	}
	for _, m := range []int{1, 4, 7} {
		if out := s.osdsOut(m); out != 0 {
			t.Errorf("%s: %d OSDs out; the whole zone is down, so the subtree limit keeps them in", s.fleet.m[m].Name, out)
		}
	}
	b := simAt(t, "zone-loss", "never", Hour, func(c *Config) { c.Params.MonOSDDownOutSubtreeLimit = CrushRoot })
	out := 0
	for _, m := range []int{1, 4, 7} {
		out += b.osdsOut(m)
	}
	if out == 0 {
		t.Errorf("subtree limit root: no OSD of the lost zone marked out; the limit has no effect")
	}
}

// TestTwoZonesLost: two zones of three lost; every PG is below min_size
// (inactive) while the mons (all in zone 0) keep quorum; in the production
// layout (one mon per zone) quorum is lost instead.
func TestTwoZonesLost(t *testing.T) {
	s := simAt(t, "two-zones-lost", "never", Hour, nil)
	if !s.ceph.quorum || s.pgs.nInactive != len(s.pgs.pgs) || s.pgs.nState[stInactive] != len(s.pgs.pgs) {
		t.Errorf("two zones lost: quorum %v, %s; want quorum and every PG undersized+peered", s.ceph.quorum, s.pgs.summary())
	}
	q := simAt(t, "two-zones-lost-quorum", "never", Hour, nil)
	if q.ceph.quorum {
		t.Errorf("one mon per zone, two zones lost: quorum held")
	}
	if h, _ := q.ceph.health(); h != HealthNoAnswer {
		t.Errorf("no quorum: health %s, want no answer", h)
	}
}

// TestFailureDomainErrors: impossible layouts are errors.
func TestFailureDomainErrors(t *testing.T) {
	base := "name: x\nduration: 1h\nexpect: {seed: pass, rook: pass, mhc-only: pass, rook-oos: pass, never: pass, safe: pass}\n"
	for cluster, want := range map[string]string{
		"{machines: 6, zones: 2, failureDomain: zone}":           "needs at least 3 zones",
		"{machines: 6, failureDomain: rack}":                     "failureDomain rack needs racks",
		"{machines: 6, racks: 4, zones: 3}":                      "multiple of zones",
		"{machines: 6, failureDomain: root}":                     "want host, rack or zone",
		"{machines: 6, zones: 7}":                                "more racks or zones than machines",
		"{machines: 6, mons: 3, monsOn: [m1, m2]}":               "monsOn lists 2 machines for 3 mons",
		"{machines: 6, mons: 2, monsOn: [m1, m1]}":               "listed twice",
		"{machines: 6, racks: 6, zones: 3, failureDomain: rack}": "",
	} {
		_, err := ParseScenario("x.yaml", []byte(base+"cluster: "+cluster+"\n"))
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", cluster, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: error %v, want %q", cluster, err, want)
		}
	}
	p := DefaultParams()
	if err := p.SetParam("monOsdDownOutSubtreeLimit", "datacenter"); err == nil {
		t.Errorf("monOsdDownOutSubtreeLimit datacenter accepted")
	}
}

// TestRackFailureDomain: with racks as the failure domain, replicas are
// in distinct racks; a whole rack down is not marked out (limit rack).
func TestRackFailureDomain(t *testing.T) {
	p := DefaultParams()
	p.Jitter = 0
	cfg := Config{Name: "racks", Cluster: Cluster{Machines: 8, OSDsPerMachine: 1, PGs: 64, Mons: 3, Racks: 4, Zones: 2, FailureDomain: CrushRack, OperatorOn: -1},
		Params: p, Policy: Policies["never"], Seed: 1, KeepGoing: true, Duration: 2 * Hour,
		// rack 3 is m4 and m8
		Faults: []Fault{{At: 10 * Minute, Kind: FaultPowerOff, Machine: 3}, {At: 10 * Minute, Kind: FaultPowerOff, Machine: 7}}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Run()
	for pi := range s.pgs.pgs {
		racks := map[int32]bool{}
		for k := 0; k < s.P.PoolSize; k++ {
			racks[s.ceph.topo.rack[s.ceph.osds[s.pgs.pgs[pi].slot[k]].m]] = true
		}
		if len(racks) != 3 {
			t.Errorf("PG %d spans %d racks, want 3", pi, len(racks))
		}
	}
	if s.osdsOut(3)+s.osdsOut(7) != 0 {
		t.Errorf("a whole rack down was marked out")
	}
}

// TestInv1PerFailureDomain: invariant 1 counts failure domains. Fencing
// the hosts of one lost zone together is safe with failure domain zone (they
// share no PG), and safe does it; the same schedule with failure domain host
// breaks invariant 1 for seed, and safe goes back to one host at a time.
func TestInv1PerFailureDomain(t *testing.T) {
	zone := runScenario(t, "zone-loss", "seed", nil)
	host := runScenario(t, "zone-loss", "seed", func(c *Config) { c.Cluster.FailureDomain = CrushHost })
	if zone.Verdict() != "pass" || host.Verdict() != "inv1" {
		t.Errorf("zone-loss, seed: failure domain zone %s, host %s; want pass, inv1", zone.Verdict(), host.Verdict())
	}
	sz := runScenario(t, "zone-loss", "safe", nil)
	sh := runScenario(t, "zone-loss", "safe", func(c *Config) { c.Cluster.FailureDomain = CrushHost })
	if sz.Verdict() != "pass" || sh.Verdict() != "pass" || sz.Recovery >= sh.Recovery {
		t.Errorf("zone-loss, safe: zone %s recovers in %s, host %s in %s; want both pass, zone faster", sz.Verdict(), sz.Recovery.Dur(), sh.Verdict(), sh.Recovery.Dur())
	}
}
