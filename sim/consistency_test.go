package sim

import (
	"math/bits"
	"testing"
)

// checkCounters recomputes every incrementally maintained counter from
// scratch and compares.
func checkCounters(t *testing.T, s *Sim, what string) {
	t.Helper()
	var nState [numPGStates]int
	inactive, degraded, blocked := 0, 0, 0
	for pi := range s.pgs {
		p := &s.pgs[pi]
		nState[p.state]++
		b := false
		for k := 0; k < s.P.PoolSize && p.state.active(); k++ {
			if o := p.slot[k]; o >= 0 && s.osds[o].up && !s.osds[o].canUp {
				b = true
			}
		}
		if b != p.blocked {
			t.Errorf("%s: PG %d blocked=%v, recomputed %v", what, pi, p.blocked, b)
		}
		if p.blocked {
			blocked++
		}
		if !p.state.active() {
			inactive++
		}
		up := s.pgUp(p)
		if deg := bits.OnesCount8(up) < s.P.PoolSize || up&p.cur != s.ceph.full; deg != p.degraded && !p.peering {
			t.Errorf("%s: PG %d degraded=%v, recomputed %v", what, pi, p.degraded, deg)
		}
		if p.degraded {
			degraded++
		}
		for k := 0; k < s.P.PoolSize; k++ {
			found := false
			for _, q := range s.osds[p.slot[k]].pgs {
				found = found || int(q) == pi
			}
			if !found {
				t.Errorf("%s: PG %d slot %d osd.%d lacks it in its reverse index", what, pi, k, p.slot[k])
			}
		}
	}
	checkTopology(t, s, what)
	remote, local := make([]int, len(s.osds)), make([]int, len(s.osds))
	for pi := range s.pgs {
		p := &s.pgs[pi]
		for _, o := range p.resv {
			if o >= 0 {
				remote[o]++
			}
		}
		if p.lresv >= 0 {
			local[p.lresv]++
		}
	}
	for i := range s.osds {
		if o := &s.osds[i]; o.backfills != remote[i] || o.localBackfills != local[i] || o.backfills > s.P.OSDMaxBackfills || o.localBackfills > s.P.OSDMaxBackfills {
			t.Errorf("%s: osd.%d reservations remote/local %d/%d, recounted %d/%d (osd_max_backfills %d)", what, i, o.backfills, o.localBackfills, remote[i], local[i], s.P.OSDMaxBackfills)
		}
	}
	cur, stale, split := 0, 0, 0
	for ci := range s.cl.clients {
		c := &s.cl.clients[ci]
		switch {
		case !c.writes:
		case c.current:
			cur++
		default:
			stale++
			if s.cl.workloads[c.w].cur >= 0 {
				split++
			}
		}
	}
	if cur != s.cl.nCurWriting || stale != s.cl.nStaleWriting || split != s.cl.nSplit {
		t.Errorf("%s: writing clients current/stale/split %d/%d/%d, recounted %d/%d/%d", what, s.cl.nCurWriting, s.cl.nStaleWriting, s.cl.nSplit, cur, stale, split)
	}
	if blocked != s.ceph.nBlocked {
		t.Errorf("%s: %d PGs blocked, recounted %d", what, s.ceph.nBlocked, blocked)
	}
	if nState != s.ceph.nState || inactive != s.ceph.nInactive || degraded != s.ceph.nDegraded {
		t.Errorf("%s: PG counters %v/%d/%d, recomputed %v/%d/%d", what, s.ceph.nState, s.ceph.nInactive, s.ceph.nDegraded, nState, inactive, degraded)
	}
	downIn, in, hosts, fenced := 0, 0, 0, 0
	for i := range s.machines {
		m := &s.machines[i]
		up, healthy := 0, 0
		for _, oi := range m.osds {
			o := &s.osds[oi]
			if o.up {
				up++
			}
			if o.up && o.canUp {
				healthy++
			}
			if o.in {
				in++
				if !o.up {
					downIn++
				}
			}
		}
		if up != m.upOSDs || healthy != m.healthy {
			t.Errorf("%s: %s upOSDs/healthy %d/%d, recomputed %d/%d", what, m.Name, m.upOSDs, m.healthy, up, healthy)
		}
		if healthy > 0 {
			hosts++
		}
		if m.fenced {
			fenced++
		}
	}
	if downIn != s.ceph.nDownIn || in != s.ceph.nIn || hosts != s.ceph.healthyHosts || fenced != s.nFenced {
		t.Errorf("%s: downIn/in/hosts/fenced %d/%d/%d/%d, recomputed %d/%d/%d/%d", what, s.ceph.nDownIn, s.ceph.nIn, s.ceph.healthyHosts, s.nFenced, downIn, in, hosts, fenced)
	}
}

// TestIncrementalCounters: the hot path keeps counters incrementally; after
// every event of random runs they must equal a recomputation.
func TestIncrementalCounters(t *testing.T) {
	seed := testSeed(t)
	for i := uint64(0); i < 40; i++ {
		sc := RandomScenario(seed + i)
		for _, pn := range PolicyNames() {
			cfg := sc.Config(Policies[pn], sc.Seed)
			cfg.KeepGoing = true
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for n := 0; len(s.q.h) > 0 && !s.stopped; n++ {
				ev := s.q.pop()
				s.now = ev.at
				s.dispatch(ev)
				s.afterStep()
				if n%7 == 0 {
					checkCounters(t, s, sc.Name+"/"+pn)
				}
				if t.Failed() {
					t.Fatalf("seed %d, policy %s, event %d at %s", sc.Seed, pn, n, s.now)
				}
			}
		}
	}
}

// checkTopology recomputes the per-bucket up counts and the remap indexes
// (home, back, away, backPGs) and compares.
func checkTopology(t *testing.T, s *Sim, what string) {
	t.Helper()
	up := 0
	rack, zone := make([]int, len(s.topo.rackUp)), make([]int, len(s.topo.zoneUp))
	for i := range s.osds {
		if !s.osds[i].up {
			continue
		}
		up++
		h := s.osds[i].m
		if r := s.topo.rack[h]; r >= 0 {
			rack[r]++
		}
		if z := s.topo.zone[h]; z >= 0 {
			zone[z]++
		}
	}
	if up != s.topo.up || !equalInts(rack, s.topo.rackUp) || !equalInts(zone, s.topo.zoneUp) {
		t.Errorf("%s: up per root/rack/zone %d/%v/%v, recomputed %d/%v/%v", what, s.topo.up, s.topo.rackUp, s.topo.zoneUp, up, rack, zone)
	}
	for pi := range s.pgs {
		p := &s.pgs[pi]
		if err := s.checkRemap(pi); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		for k := 0; k < s.P.PoolSize; k++ {
			if h := p.home[k]; h >= 0 && !containsPG(s.osds[h].away, pi) {
				t.Errorf("%s: PG %d slot %d has home osd.%d, which lacks it in its away list", what, pi, k, h)
			}
			if b := p.back[k]; b >= 0 && !containsPG(s.osds[b].backPGs, pi) {
				t.Errorf("%s: PG %d slot %d backfills onto osd.%d, which lacks it in backPGs", what, pi, k, b)
			}
			for j := 0; j < k; j++ {
				if s.domainOf(int(s.osds[p.slot[j]].m)) == s.domainOf(int(s.osds[p.slot[k]].m)) {
					t.Errorf("%s: PG %d slots %d and %d share failure domain %d", what, pi, j, k, s.domainOf(int(s.osds[p.slot[k]].m)))
				}
			}
		}
	}
	for i := range s.osds {
		for _, pi := range s.osds[i].backPGs {
			if homeSlot(&s.pgs[pi], i) < 0 || s.pgs[pi].back[homeSlot(&s.pgs[pi], i)] != int32(i) {
				t.Errorf("%s: osd.%d lists PG %d in backPGs but is not its backfill target", what, i, pi)
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func containsPG(l []int32, pi int) bool {
	for _, v := range l {
		if int(v) == pi {
			return true
		}
	}
	return false
}
