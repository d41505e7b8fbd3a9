package sim

import (
	"testing"
)

// mdbVerdictChanges lists every scripted verdict that differs between the
// MDB implementations: machine-api-operator 4.2 (the default; no +1, so a
// budget of 1 that the failed machine itself uses up refuses its own
// remediation) and kubevirt's machine-remediation (+1). All other verdicts
// are the same under both.
var mdbVerdictChanges = []struct {
	scenario, policy string
	mao, mro         string
}{
	{"api-partition", "rook", "pass", "inv5"},
	{"controller-lag", "seed", "pass", "inv2"},
	{"controller-lag", "rook", "inv6", "inv2"},
	{"liveness-operator-stalled-6h", "seed", "inv6", "inv2"},
	{"liveness-operator-stalled-6h", "rook", "inv6", "inv2"},
	{"operator-on-failed-node", "seed", "pass", "inv2"},
	{"operator-on-failed-node", "rook", "inv6", "inv2"},
	{"stale-label", "rook", "pass", "inv5"},
	{"taint-eviction-no-attach", "rook", "inv7", "inv5"},
	{"three-zones", "rook", "inv6", "pass"},
}

// TestMDBVariantVerdicts runs every scenario and policy under both MDB
// implementations and checks that exactly the listed verdicts change.
func TestMDBVariantVerdicts(t *testing.T) {
	want := map[string][2]string{}
	for _, c := range mdbVerdictChanges {
		want[c.scenario+"/"+c.policy] = [2]string{c.mao, c.mro}
	}
	for _, sc := range loadAll(t) {
		if sc.Cluster.MDB != MDBMachineAPI {
			continue // it pins one implementation's arithmetic
		}
		for _, pn := range PolicyNames() {
			var got [2]string
			for v := MDBMachineAPI; v < numMDBVariants; v++ {
				cfg := sc.Config(Policies[pn], sc.Seed)
				cfg.Cluster.MDB = v
				r, err := RunConfig(cfg)
				if err != nil {
					t.Fatal(err)
				}
				got[v] = r.Verdict()
			}
			key := sc.Name + "/" + pn
			w, listed := want[key]
			switch {
			case listed && got != w:
				t.Errorf("%s: machine-api-operator %s, machine-remediation %s; want %s, %s", key, got[0], got[1], w[0], w[1])
			case !listed && got[0] != got[1]:
				t.Errorf("%s: verdict changes with the MDB (%s vs %s) but is not listed", key, got[0], got[1])
			}
		}
	}
}

// TestMDBExpectedIsMachineSetReplicas pins machine-api-operator's expected
// count (the MachineSet's replicas, not the labelled machines): in
// mdb-expected-machineset-replicas rook never remediates m4, and with the
// MachineSet at 5 replicas (as many as the labelled machines) it does.
func TestMDBExpectedIsMachineSetReplicas(t *testing.T) {
	for _, c := range []struct {
		scale int
		want  string
	}{{6, "inv6"}, {5, "pass"}} {
		r := runScenario(t, "mdb-expected-machineset-replicas", "rook", func(cfg *Config) { cfg.Cluster.MachineSetScale = c.scale; cfg.KeepGoing = false })
		if r.Verdict() != c.want {
			t.Errorf("MachineSet replicas %d: rook %s, want %s (%d fences)", c.scale, r.Verdict(), c.want, r.Metrics.Fences)
		}
	}
}
