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
	for pi := range s.pgs.pgs {
		p := &s.pgs.pgs[pi]
		nState[p.state]++
		b := false
		for k := 0; k < s.P.PoolSize && p.state.active(); k++ {
			if o := p.slot[k]; o >= 0 && s.ceph.osds[o].up && !s.ceph.osds[o].canUp {
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
		up := s.pgs.pgUp(p)
		if deg := bits.OnesCount8(up) < s.P.PoolSize || up&p.cur != s.pgs.full; deg != p.degraded && !p.peering {
			t.Errorf("%s: PG %d degraded=%v, recomputed %v", what, pi, p.degraded, deg)
		}
		if p.degraded {
			degraded++
		}
		for k := 0; k < s.P.PoolSize; k++ {
			found := false
			for _, q := range s.ceph.osds[p.slot[k]].pgs {
				found = found || int(q) == pi
			}
			if !found {
				t.Errorf("%s: PG %d slot %d osd.%d lacks it in its reverse index", what, pi, k, p.slot[k])
			}
		}
	}
	checkTopology(t, s, what)
	remote, local := make([]int, len(s.ceph.osds)), make([]int, len(s.ceph.osds))
	for pi := range s.pgs.pgs {
		p := &s.pgs.pgs[pi]
		for _, o := range p.resv {
			if o >= 0 {
				remote[o]++
			}
		}
		if p.lresv >= 0 {
			local[p.lresv]++
		}
	}
	for i := range s.ceph.osds {
		if o := &s.ceph.osds[i]; o.backfills != remote[i] || o.localBackfills != local[i] || o.backfills > s.P.OSDMaxBackfills || o.localBackfills > s.P.OSDMaxBackfills {
			t.Errorf("%s: osd.%d reservations remote/local %d/%d, recounted %d/%d (osd_max_backfills %d)", what, i, o.backfills, o.localBackfills, remote[i], local[i], s.P.OSDMaxBackfills)
		}
	}
	cur, stale, split := 0, 0, 0
	for ci := range s.clients.clients {
		c := &s.clients.clients[ci]
		switch {
		case !c.writes:
		case c.current:
			cur++
		default:
			stale++
			if s.clients.workloads[c.w].cur >= 0 {
				split++
			}
		}
	}
	if cur != s.clients.nCurWriting || stale != s.clients.nStaleWriting || split != s.clients.nSplit {
		t.Errorf("%s: writing clients current/stale/split %d/%d/%d, recounted %d/%d/%d", what, s.clients.nCurWriting, s.clients.nStaleWriting, s.clients.nSplit, cur, stale, split)
	}
	if blocked != s.pgs.nBlocked {
		t.Errorf("%s: %d PGs blocked, recounted %d", what, s.pgs.nBlocked, blocked)
	}
	if nState != s.pgs.nState || inactive != s.pgs.nInactive || degraded != s.pgs.nDegraded {
		t.Errorf("%s: PG counters %v/%d/%d, recomputed %v/%d/%d", what, s.pgs.nState, s.pgs.nInactive, s.pgs.nDegraded, nState, inactive, degraded)
	}
	downIn, in, hosts, fenced := 0, 0, 0, 0
	for i := range s.fleet.m {
		m := &s.fleet.m[i]
		up, healthy := 0, 0
		for _, oi := range s.ceph.hostOSDs[i] {
			o := &s.ceph.osds[oi]
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
		if up != s.ceph.upOSDs[i] || healthy != s.ceph.healthy[i] {
			t.Errorf("%s: %s upOSDs/healthy %d/%d, recomputed %d/%d", what, m.Name, s.ceph.upOSDs[i], s.ceph.healthy[i], up, healthy)
		}
		if healthy > 0 {
			hosts++
		}
		if s.watch.fenced[i] {
			fenced++
		}
	}
	if downIn != s.ceph.nDownIn || in != s.ceph.nIn || hosts != s.ceph.healthyHosts || fenced != s.watch.nFenced {
		t.Errorf("%s: downIn/in/hosts/fenced %d/%d/%d/%d, recomputed %d/%d/%d/%d", what, s.ceph.nDownIn, s.ceph.nIn, s.ceph.healthyHosts, s.watch.nFenced, downIn, in, hosts, fenced)
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
			for n := 0; !s.stopped && s.step(); n++ {
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
	rack, zone := make([]int, len(s.ceph.topo.rackUp)), make([]int, len(s.ceph.topo.zoneUp))
	for i := range s.ceph.osds {
		if !s.ceph.osds[i].up {
			continue
		}
		up++
		h := s.ceph.osds[i].m
		if r := s.ceph.topo.rack[h]; r >= 0 {
			rack[r]++
		}
		if z := s.ceph.topo.zone[h]; z >= 0 {
			zone[z]++
		}
	}
	if up != s.ceph.topo.up || !equalInts(rack, s.ceph.topo.rackUp) || !equalInts(zone, s.ceph.topo.zoneUp) {
		t.Errorf("%s: up per root/rack/zone %d/%v/%v, recomputed %d/%v/%v", what, s.ceph.topo.up, s.ceph.topo.rackUp, s.ceph.topo.zoneUp, up, rack, zone)
	}
	for pi := range s.pgs.pgs {
		p := &s.pgs.pgs[pi]
		if err := s.pgs.checkRemap(pi); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		for k := 0; k < s.P.PoolSize; k++ {
			if h := p.home[k]; h >= 0 && !containsPG(s.ceph.osds[h].away, pi) {
				t.Errorf("%s: PG %d slot %d has home osd.%d, which lacks it in its away list", what, pi, k, h)
			}
			if b := p.back[k]; b >= 0 && !containsPG(s.ceph.osds[b].backPGs, pi) {
				t.Errorf("%s: PG %d slot %d backfills onto osd.%d, which lacks it in backPGs", what, pi, k, b)
			}
			for j := 0; j < k; j++ {
				if s.ceph.domainOf(int(s.ceph.osds[p.slot[j]].m)) == s.ceph.domainOf(int(s.ceph.osds[p.slot[k]].m)) {
					t.Errorf("%s: PG %d slots %d and %d share failure domain %d", what, pi, j, k, s.ceph.domainOf(int(s.ceph.osds[p.slot[k]].m)))
				}
			}
		}
	}
	for i := range s.ceph.osds {
		for _, pi := range s.ceph.osds[i].backPGs {
			if homeSlot(&s.pgs.pgs[pi], i) < 0 || s.pgs.pgs[pi].back[homeSlot(&s.pgs.pgs[pi], i)] != int32(i) {
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
