package sim

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestFaultTable checks the fault table's shape: every fault a scenario can
// inject has a repair that is itself a repair of the same class, names are
// unique, and only machine faults count as breaking.
func TestFaultTable(t *testing.T) {
	seen := map[string]bool{}
	for i, d := range faultTable {
		k := FaultKind(i)
		if d.name == "" || seen[d.name] {
			t.Errorf("fault %d: empty or duplicate name %q", i, d.name)
		}
		seen[d.name] = true
		h := k.healer()
		if h.healer() != h {
			t.Errorf("%s: repair %s is not its own repair", k, h)
		}
		if h.breaks() {
			t.Errorf("%s: repair %s breaks a machine", k, h)
		}
		if h.controller() != k.controller() {
			t.Errorf("%s: repair %s is of another class", k, h)
		}
		if d.breaks && d.controller {
			t.Errorf("%s: a controller fault cannot break a machine", k)
		}
		if got, ok := lookupFault(d.name); !ok || got != k {
			t.Errorf("lookupFault(%q) = %v, %v", d.name, got, ok)
		}
	}
}

// TestREADMEListsTables: sim/README.md names every fault kind, every
// parameter and every cluster field of the tables in faults.go, params.go
// and scenario_fields.go.
func TestREADMEListsTables(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, n := range append(FaultNames(), ParamNames()...) {
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("sim/README.md does not name `%s`", n)
		}
	}
	for _, n := range ClusterFieldNames() {
		if !strings.Contains(doc, n+":") {
			t.Errorf("sim/README.md does not show the cluster field %s:", n)
		}
	}
}

// TestScriptedResumeResumes pins a bug: a scripted operator-resume or
// mhc-resume (rather than `for:`) was a no-op, so the controller stayed
// stalled for the rest of the run.
func TestScriptedResumeResumes(t *testing.T) {
	base := "name: x\nduration: 3h\nexpect: {seed: pass, rook: pass, mhc-only: pass, rook-oos: pass, never: pass, safe: pass}\n"
	sc, err := ParseScenario("x.yaml", []byte(base+"faults:\n  - {at: 1m, kind: operator-stall}\n  - {at: 2m, kind: mhc-stall}\n  - {at: 10m, kind: operator-resume}\n  - {at: 11m, kind: mhc-resume}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sc.Config(Policies["safe"], 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at              Time
		opStall, mhcOff bool
	}{{5 * Minute, true, true}, {15 * Minute, false, false}} {
		s.runUntil(c.at)
		if s.op.stalled != c.opStall || s.fleet.mhcStall != c.mhcOff {
			t.Errorf("at %s: operator stalled %v, MHC stalled %v; want %v, %v", c.at, s.op.stalled, s.fleet.mhcStall, c.opStall, c.mhcOff)
		}
	}
}

// TestFaultsFollowHardware pins the fault semantics: on bare metal a
// power fault stays with the host through reprovisioning (the new
// incarnation cannot boot) and its repair applies to whatever incarnation
// runs there; on cloud the replacement is another instance and boots at
// once (the first-generation model did this on bare metal too).
func TestFaultsFollowHardware(t *testing.T) {
	back := func(r *Result) Time {
		for _, e := range r.Rec.Entries {
			if e.Cat == "machine" && strings.HasPrefix(e.Text, "m4.") && strings.Contains(e.Text, " back:") {
				return e.At
			}
		}
		return -1
	}
	bm := runScenario(t, "baremetal-power-fault-survives-reprovision", "mhc-only", func(c *Config) { c.Record = true })
	if at := back(bm); at < 70*Minute {
		t.Errorf("bare metal: a reprovisioned m4 back at %s, before its power returns at 1h10m", at)
	}
	cloud := runScenario(t, "baremetal-power-fault-survives-reprovision", "mhc-only", func(c *Config) {
		c.Record = true
		c.Cluster.BareMetal = false
	})
	if at := back(cloud); at < 0 || at > 30*Minute {
		t.Errorf("cloud: the replacement of m4 back at %s, want within minutes of the fence", at)
	}
}

// TestDefaultParamsSet: every parameter has a default except those whose
// documented default is 0 (a forgotten default would silently be 0).
func TestDefaultParamsSet(t *testing.T) {
	zero := map[string]bool{"mhcRetryInterval": true, "powerReportLag": true, "poolUsedGB": true, "rbdBlocklistExpire": true, "oosTaintRemovalDelay": true, "recoverySleepShare": true, "peeringSpread": true, "reportSpread": true}
	d := DefaultParams()
	for _, pd := range paramTable {
		var isZero bool
		switch pd.kind {
		case pDur:
			isZero = *pd.dur(&d) == 0
		case pInt:
			isZero = *pd.i(&d) == 0
		case pFloat:
			isZero = *pd.f(&d) == 0
		case pCrush:
			isZero = *pd.c(&d) == 0
		case pBool:
			isZero = false
		}
		if isZero != zero[pd.name] {
			t.Errorf("%s: default is zero %v, want %v", pd.name, isZero, zero[pd.name])
		}
	}
}

// TestScenarioYAMLRoundTrip pins the scenario writer (the minimized
// findings' replay files): a random scenario or a scripted one written
// out and read back is the same cluster, parameters and faults (the
// writer used to drop racks, zones, the failure domain and monsOn, so a
// replay ran on another cluster).
func TestScenarioYAMLRoundTrip(t *testing.T) {
	scs := loadAll(t)
	for i := uint64(1); i <= 60; i++ {
		scs = append(scs, RandomScenario(i))
	}
	for _, sc := range scs {
		back, err := ParseScenario(sc.Name+".yaml", []byte(ScenarioYAML(sc)))
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc.Name, err, ScenarioYAML(sc))
		}
		if !reflect.DeepEqual(back.Cluster, sc.Cluster) || back.Params != sc.Params || !reflect.DeepEqual(back.Faults, sc.Faults) || back.Duration != sc.Duration || back.Seed != sc.Seed {
			t.Errorf("%s: read back differs\n%+v\n%+v\n%s", sc.Name, back.Cluster, sc.Cluster, ScenarioYAML(sc))
		}
	}
}

// runScript parses a scenario body (cluster, faults) and returns the
// simulation run up to each of the times, calling look at each.
func runScript(t *testing.T, body string, pol string, times []Time, look func(s *Sim, at Time)) {
	t.Helper()
	sc, err := ParseScenario("x.yaml", []byte("name: x\nduration: 12h\n"+body))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sc.Config(Policies[pol], 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range times {
		s.runUntil(at)
		look(s, at)
	}
}

// TestNICHealLeavesClusterCut pins a bug of the boolean fault model: the
// end of a 10-minute NIC cut set all three links up, so it also healed an
// unrelated cluster cut that never ends (and the OSDs came back). Each
// fault is an occurrence; a heal ends only its own.
func TestNICHealLeavesClusterCut(t *testing.T) {
	body := "faults:\n  - {at: 10m, kind: cluster-cut, machine: m4}\n  - {at: 20m, kind: nic-cut, machine: m4, for: 10m}\n"
	runScript(t, body, "never", []Time{25 * Minute, 40 * Minute}, func(s *Sim, at Time) {
		m := &s.fleet.m[3]
		wantAPI := at > 30*Minute
		if m.link[linkCluster] || m.link[linkAPI] != wantAPI || m.link[linkPublic] != wantAPI {
			t.Errorf("at %s: links api/public/cluster %v; want the cluster link cut for good, the others up once the NIC cut ends at 30m", at, m.link)
		}
		if at > 30*Minute && s.ceph.upOSDs[3] != 0 {
			t.Errorf("at %s: %d of m4's OSDs up with its cluster network cut", at, s.ceph.upOSDs[3])
		}
	})
	// a scripted nic-heal ends the NIC cut (its own kind) and leaves the
	// cluster cut alone too
	body = "faults:\n  - {at: 10m, kind: cluster-cut, machine: m4}\n  - {at: 20m, kind: nic-cut, machine: m4}\n  - {at: 30m, kind: nic-heal, machine: m4}\n"
	runScript(t, body, "never", []Time{40 * Minute}, func(s *Sim, _ Time) {
		if m := &s.fleet.m[3]; m.link != [3]bool{true, true, false} {
			t.Errorf("after a scripted nic-heal: links %v, want api and public up, cluster still cut", m.link)
		}
	})
}

// TestShortMHCStallEndsOnlyItself pins a bug of the boolean fault model:
// the resume at the end of a 6-minute MHC stall also ended a 7-hour stall
// that overlapped it. Likewise for the operator, the ceph commands and the
// noout flag; a scripted resume ends them all.
func TestShortMHCStallEndsOnlyItself(t *testing.T) {
	body := `faults:
  - {at: 1m, kind: mhc-stall, for: 7h}
  - {at: 2m, kind: mhc-stall, for: 6m}
  - {at: 1m, kind: operator-stall, for: 7h}
  - {at: 2m, kind: operator-stall, for: 6m}
  - {at: 1m, kind: ceph-status-hang, for: 7h}
  - {at: 2m, kind: ceph-status-hang, for: 6m}
  - {at: 1m, kind: set-noout, for: 7h}
  - {at: 2m, kind: set-noout, for: 6m}
  - {at: 9h, kind: mhc-stall}
  - {at: 9h, kind: mhc-stall, for: 1h}
  - {at: 9h30m, kind: mhc-resume}
`
	runScript(t, body, "never", []Time{30 * Minute, 7*Hour + 2*Minute, 9*Hour + 10*Minute, 9*Hour + 40*Minute}, func(s *Sim, at Time) {
		want := at < 7*Hour+Minute || (at > 9*Hour && at < 9*Hour+30*Minute)
		if s.fleet.mhcStall != want {
			t.Errorf("at %s: MHC stalled %v, want %v", at, s.fleet.mhcStall, want)
		}
		if at < 9*Hour {
			if s.op.stalled != want || s.ceph.statusHang != want || (s.ceph.flags&flagNoOut != 0) != want {
				t.Errorf("at %s: operator stalled %v, commands hang %v, noout %v; want all %v", at, s.op.stalled, s.ceph.statusHang, s.ceph.flags&flagNoOut != 0, want)
			}
		}
	})
}

// TestPowerCycleEndsHang pins the end of an OS-level fault: a host that
// hangs and then loses power boots afresh when the power returns (the
// boolean model kept it hung for good).
func TestPowerCycleEndsHang(t *testing.T) {
	body := "faults:\n  - {at: 10m, kind: hang, machine: m4}\n  - {at: 20m, kind: power-off, machine: m4, for: 10m}\n"
	runScript(t, body, "never", []Time{25 * Minute, 40 * Minute}, func(s *Sim, at Time) {
		if alive := s.fleet.m[3].alive(); alive != (at > 30*Minute) {
			t.Errorf("at %s: m4 alive %v; want dead while hung or off, running once it booted after the power returned", at, alive)
		}
	})
}
