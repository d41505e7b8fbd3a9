package sim

import (
	"strings"
	"testing"
)

// firstStart returns when the first workload started on another node.
func firstStart(r *Result) Time {
	for _, e := range r.Rec.Entries {
		if e.Cat == "client" && strings.Contains(e.Text, " started on ") {
			return e.At
		}
	}
	return -1
}

// TestRWOForceDetachAfterSixMinutes pins the attach-detach controller: a
// delete fence moves the workloads of a dead node only once the Node is
// deleted (after the instance is gone) and their ReadWriteOnce volumes are
// force-detached maxWaitForUnmount later; the first-generation model
// started them 20 s after the fence. Without attachment they start at once.
func TestRWOForceDetachAfterSixMinutes(t *testing.T) {
	r := runScenario(t, "rwo-force-detach-6min", "mhc-only", func(c *Config) { c.Record = true; c.Params.Jitter = 0 })
	fenced := firstFence(r, "m4")
	want := fenced + r.cfgParams().ProviderDeleteTime + 6*Minute + 20*Second
	if got := firstStart(r); fenced < 0 || got != want {
		t.Errorf("fence at %s, first workload started at %s; want %s (instance gone, Node deleted, 6 min force-detach, 20 s start)", fenced, got, want)
	}
	n := runScenario(t, "rwo-force-detach-6min", "mhc-only", func(c *Config) { c.Record = true; c.Params.Jitter = 0; c.Cluster.NoAttach = true })
	if got := firstStart(n); got != firstFence(n, "m4")+n.cfgParams().ProviderDeleteTime+20*Second {
		t.Errorf("attachRequired false: first workload started at %s, want 20 s after the Node deletion", got)
	}
}

// TestTaintEvictionSplitBrain pins taint-based eviction: with Deployments
// whose volumes need no attachment, the eviction of a partitioned node's
// pods starts their replacements while the old ones still write - a
// split-brain under a policy that fences nothing; with attachment
// required (ceph-csi RBD) or with StatefulSets nothing moves, and safe,
// which blocklists the node's clients before the eviction, stays safe.
func TestTaintEvictionSplitBrain(t *testing.T) {
	for _, c := range []struct {
		pol       string
		edit      func(*Config)
		want      string
		staleZero bool
	}{
		{"never", nil, "inv7", false},
		{"never", func(c *Config) { c.Cluster.NoAttach = false }, "pass", true},
		{"never", func(c *Config) { c.Cluster.WorkloadKind = WorkloadStatefulSet }, "pass", true},
		{"safe", nil, "pass", true},
	} {
		r := runScenario(t, "taint-eviction-no-attach", c.pol, c.edit)
		if got := verdictString(uniqueInts(r.Invariants())); got != c.want || (r.Metrics.StaleWrites == 0) != c.staleZero {
			t.Errorf("%s: %s with %.0f stale writes, want %s (no stale writes: %v)", c.pol, got, r.Metrics.StaleWrites, c.want, c.staleZero)
		}
	}
}

// TestOOSTaintNeedsOperator pins the out-of-service taint's removal: only
// an operator removes it, and until then the returned node runs no OSD
// pods; with oosTaintRemovalDelay the operator does so that long after the
// node is Ready.
func TestOOSTaintNeedsOperator(t *testing.T) {
	for _, pol := range []string{"rook-oos", "csi-oos"} {
		s := simAt(t, "oos-taint-needs-operator", pol, Hour, nil)
		n := &s.kube.nodes[3]
		if !n.ready || !n.tainted || s.ceph.upOSDs[3] != 0 {
			t.Errorf("%s at 1h: m4 Ready %v, tainted %v, %d OSDs up; want Ready, tainted, no OSD up", pol, n.ready, n.tainted, s.ceph.upOSDs[3])
		}
		s = simAt(t, "oos-taint-needs-operator", pol, 2*Hour+Minute, nil)
		if n := &s.kube.nodes[3]; n.tainted || s.ceph.upOSDs[3] != 2 || s.ceph.blocks[3].until > s.now {
			t.Errorf("%s after the operator's step: tainted %v, %d OSDs up, blocklisted until %s; want untainted, 2 up, not blocklisted", pol, n.tainted, s.ceph.upOSDs[3], s.ceph.blocks[3].until)
		}
		d := simAt(t, "oos-taint-needs-operator", pol, Hour, func(c *Config) { c.Params.OOSTaintRemovalDelay = 10 * Minute })
		if n := &d.kube.nodes[3]; n.tainted || d.ceph.upOSDs[3] != 2 {
			t.Errorf("%s with oosTaintRemovalDelay 10m: at 1h tainted %v, %d OSDs up; want the taint gone and the OSDs up", pol, n.tainted, d.ceph.upOSDs[3])
		}
	}
}
