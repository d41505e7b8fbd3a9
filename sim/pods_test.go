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

// TestCSIUnfenceWaitsForOldPods pins ceph-csi's unfence: in
// oos-taint-removed-at-return an operator removes the taint 2 s after the
// node, cut off for longer than the lock breaks' hour of blocklisting, is
// Ready, before its kubelet has killed the pods deleted meanwhile. ceph-csi lifts its fence only once they are gone and its
// cooldown has passed since: no stale write. The cooldown run from the
// fence (CSIUnfenceFromFence, the first model and ceph-csi's own rule)
// unfences at once and the old pods' writes are accepted (inv7).
func TestCSIUnfenceWaitsForOldPods(t *testing.T) {
	fixed := runScenario(t, "oos-taint-removed-at-return", "csi-oos", func(c *Config) { c.Record = true })
	if fixed.Verdict() != "pass" || fixed.Metrics.StaleWrites != 0 {
		t.Errorf("csi-oos: %s with %.0f stale writes; want pass, none", fixed.Verdict(), fixed.Metrics.StaleWrites)
	}
	var unfenced Time = -1
	for _, e := range fixed.Rec.Entries {
		if e.Cat == "ceph" && strings.Contains(e.Text, "removed from the blocklist by ceph-csi") {
			unfenced = e.At
		}
	}
	// Ready at 1h40m, the old pods killed at 1h40m10s, then the cooldown
	if back := 100*Minute + 10*Second; unfenced < back+fixed.cfgParams().CSIUnfenceCooldown {
		t.Errorf("csi-oos lifted its fence at %s; want after the old pods' end (%s) plus the cooldown", unfenced, back)
	}
	old := runScenario(t, "oos-taint-removed-at-return", "csi-oos", func(c *Config) {
		p := *c.Policy
		p.Name, p.CSIUnfenceFromFence = "csi-oos-unfence-from-fence", true
		c.Policy = &p
	})
	if old.Verdict() != "inv7" || old.Metrics.StaleWrites < 1000 {
		t.Errorf("cooldown from the fence: %s with %.0f stale writes; want inv7 and the old pods' writes for ~8 s", old.Verdict(), old.Metrics.StaleWrites)
	}
}

// TestOutOfServiceTaintEvictsMons pins a bug of the first model: the
// out-of-service taint evicted only the OSD pods, so in
// oos-taint-evicts-mons the quorum came back with the power while the two
// mon hosts were still tainted. The taint evicts every pod that does not
// tolerate it; a mon pinned to its node is out until an administrator
// removes the taint at 1h.
func TestOutOfServiceTaintEvictsMons(t *testing.T) {
	for _, pol := range []string{"rook-oos", "csi-oos"} {
		s := simAt(t, "oos-taint-evicts-mons", pol, 45*Minute, nil)
		for _, m := range []int{0, 1} {
			if n := &s.kube.nodes[m]; !n.ready || !n.tainted || s.ceph.monRuns(s.ceph.hostMon[m]) {
				t.Errorf("%s at 45m: m%d Ready %v, tainted %v, its mon runs %v; want Ready, tainted, mon evicted", pol, m+1, n.ready, n.tainted, s.ceph.monRuns(s.ceph.hostMon[m]))
			}
		}
		if s.ceph.quorum {
			t.Errorf("%s at 45m: quorum back while the mon hosts are tainted", pol)
		}
		if e := simAt(t, "oos-taint-evicts-mons", pol, 62*Minute, nil); !e.ceph.quorum {
			t.Errorf("%s after the taints' removal at 1h: no quorum", pol)
		}
	}
}

// TestTaintDeletesOperatorPod: the storage operator's pod on a tainted
// node is force-deleted with the others and its Deployment starts it on
// another node at once, not after the not-ready taints' tolerationSeconds
// (an hour here).
func TestTaintDeletesOperatorPod(t *testing.T) {
	s := simAt(t, "oos-taint-evicts-mons", "rook-oos", 20*Minute, func(c *Config) {
		c.Cluster.OperatorOn = 0
		c.Params.PodEvictionTimeout = Hour
	})
	if s.op.host == 0 || !s.op.started {
		t.Errorf("rook-oos at 20m: operator on machine %d, started %v; want restarted off m1, tainted at 15m41s", s.op.host, s.op.started)
	}
}

// TestRebootRemediationWithoutPower pins a bug of the first model: the
// bare-metal reboot remediation kept the Node and always succeeded, also
// on a host with no power. As OpenShift's Metal3 remediation does it, the
// BMC powers the host off and only then is the Node deleted (the
// workloads move); without power the BMC does not answer, nothing is
// deleted and the remediation waits, past the liveness bound. safe, having
// cut the host off from storage, deletes the Node itself.
func TestRebootRemediationWithoutPower(t *testing.T) {
	r := runScenario(t, "baremetal-reboot-no-power", "mhc-only", func(c *Config) { c.Record = true })
	var m3Off, m3Moved, m4Off, m4Moved Time = -1, -1, -1, -1
	for _, e := range r.Rec.Entries {
		switch {
		case strings.HasPrefix(e.Text, "m3 powered off by its BMC"):
			m3Off = e.At
		case strings.Contains(e.Text, "workload(s) leave m3"):
			m3Moved = e.At
		case strings.HasPrefix(e.Text, "m4 powered off by its BMC") && m4Off < 0:
			m4Off = e.At
		case strings.Contains(e.Text, "workload(s) leave m4") && m4Moved < 0:
			m4Moved = e.At
		}
	}
	if m3Off < 0 || m3Moved != m3Off {
		t.Errorf("hung m3: powered off at %s, workloads leave at %s; want the Node deleted, and the workloads gone, once the BMC reports it off", m3Off, m3Moved)
	}
	if back := 100 * Minute; m4Off < back || m4Moved < back {
		t.Errorf("m4 without power from 40m to 1h40m: powered off at %s, workloads leave at %s; want neither before the power returns (its BMC cannot answer)", m4Off, m4Moved)
	}
	if r.Verdict() != "inv6" || !strings.Contains(r.Violations[0].Text, "m4 down") {
		t.Errorf("verdict %s %v; want m4 down and unfenced past the liveness bound", r.Verdict(), r.Violations)
	}
	if s := runScenario(t, "baremetal-reboot-no-power", "safe", nil); s.Verdict() != "pass" {
		t.Errorf("safe: %s; want pass (it deletes the Node of the host it cut off)", s.Verdict())
	}
	// the workloads of a rack whose switch failed move once the BMCs
	// powered the hosts off: a few minutes of refused writes, not hours
	k := runScenario(t, "rack-switch-loss-baremetal", "mhc-only", func(c *Config) { c.KeepGoing = true })
	if perWorkload := k.Metrics.WritesRefused / 4 / k.cfgParams().ClientWriteIOPS; perWorkload > float64(20*Minute/Second) {
		t.Errorf("rack-switch-loss-baremetal: %.0f writes refused, %.0f s per moved workload; want the ~12 minutes until they moved", k.Metrics.WritesRefused, perWorkload)
	}
}

// TestExplorerFindsEarlyCSIUnfence: the explorer draws an operator's
// removal of the out-of-service taint (operatorActions), so it finds the
// split-brain of ceph-csi's unfence run from the fence (the first model's
// csi-oos) within a few hundred random schedules, minimized to a
// replayable finding; csi-oos, which waits for the node's old pods, breaks
// the split-brain invariant in none of the first 300.
func TestExplorerFindsEarlyCSIUnfence(t *testing.T) {
	seed := testSeed(t)
	const runs = 600
	broken := *Policies["csi-oos"]
	broken.Name, broken.CSIUnfenceFromFence = "csi-oos-unfence-from-fence", true
	found := uint64(0)
	for i := uint64(0); i < runs && found == 0; i++ {
		fs, err := ExploreShard(&broken, 1, seed+i, Shard{}, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) > 0 && fs[0].Minimal.Violations[0].Inv == 7 {
			found = fs[0].Seed
			if !strings.Contains(ScenarioYAML(fs[0].Scenario), "oosTaintRemovalDelay") && !strings.Contains(ScenarioYAML(fs[0].Scenario), "remove-oos-taint") {
				t.Errorf("seed %d: the minimized finding has no taint removal:\n%s", found, ScenarioYAML(fs[0].Scenario))
			}
		}
	}
	if found == 0 {
		t.Fatalf("%d random schedules from seed %d: no split-brain found for ceph-csi's unfence from the fence", runs, seed)
	}
	for i := uint64(0); i < runs/2; i++ {
		sc := RandomScenario(seed + i)
		cfg := sc.Config(Policies["csi-oos"], seed+i)
		cfg.KeepGoing, cfg.SafetyOnly = true, true
		r, err := RunConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if containsInt(r.Invariants(), 7) {
			t.Errorf("csi-oos breaks inv7 with random schedule seed %d (replay: fenceproof sim explore --policy csi-oos --runs 1 --seed %d)", seed+i, seed+i)
		}
	}
}
