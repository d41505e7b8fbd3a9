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
	{"operator-on-failed-node", "seed", "pass", "inv2"},
	{"operator-on-failed-node", "rook", "inv6", "inv2"},
	{"rook-14832", "rook", "inv6", "pass"},
	{"stale-label", "rook", "pass", "inv5"},
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
			t.Fatalf("%s: scripted scenarios use the default MDB", sc.File)
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
