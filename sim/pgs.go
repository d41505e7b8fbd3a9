package sim

import (
	"fmt"
	"math/bits"
	"strings"
)

// The PGs of the pool: peering, states, placement (placement.go),
// recovery (recovery.go), mapping back (remap.go) and the wipe of a
// machine's replicas.

type pgState uint8

// PG states, from Ceph's point of view.
const (
	stClean      pgState = iota // active+clean
	stActive                    // active, degraded/undersized/recovering
	stPeering                   // peering (inactive)
	stInactive                  // undersized+peered: fewer than min_size up
	stDown                      // down: no up replica has the latest writes
	stIncomplete                // no replica anywhere has the latest writes
	numPGStates
)

var pgStateNames = [numPGStates]string{"active+clean", "active+degraded", "peering", "undersized+peered", "down", "incomplete"}

func (st pgState) active() bool { return st <= stActive }

// PG is one placement group of the pool.
type PG struct {
	slot          [maxSize]int32
	stale         [maxSize]Time
	resv          [maxSize]int32   // OSDs holding a remote recovery reservation for this PG (-1: none)
	homeStale     [maxSize]Time    // since when the home OSD's copy misses writes (remap.go; -1: no data)
	home          [maxSize]int32   // CRUSH's OSD for the slot while it is remapped away (remap.go; -1: none)
	back          [maxSize]int32   // a returned home OSD the slot backfills onto (remap.go; -1: none)
	bf            uint8            // slots backfilling onto back[k]
	rwait         bool             // waits for norebalance to go (flags.go)
	recMB         float32          // data the running recovery or backfill moves
	recObjMB      float32          // of it, what Ceph counts recovered: each object once, whatever the targets it is pushed to
	filled        [maxSize]float32 // data a backfill target (fillOn[k]) got before its backfill was interrupted
	fillOn        [maxSize]int32   // the OSD filled[k] lies on (-1: none)
	recStart      Time             // when the running recovery or backfill started
	recRate       float32          // its pace per target, MB/s
	prio          uint8            // the priority of its reservation requests
	inactiveSince Time
	lresv         int32 // the primary holding the local reservation (-1: none)
	gen           uint32
	cur           uint8 // slots holding the latest writes
	data          uint8 // slots holding (possibly stale) data
	rec           uint8 // slots being recovered
	state         pgState
	degraded      bool
	blocked       bool // active, but an acting OSD up in the map cannot serve
	peering       bool
	stalled       bool // its recovery or backfill waits for an OSD up in the map that cannot answer (pgStall)
	stuck         bool
	pgTemp        bool // the mon holds a pg_temp for it: acting differs from up (a backfill target)
}

// pgEventKind names a PG event.
type pgEventKind uint8

const (
	evPGPeered     pgEventKind = iota // peering after an acting set change is done
	evPGRecovered                     // recovery or backfill onto the PG's slots is done
	evPGStuck                         // the PG has been inactive for mon_pg_stuck_threshold
	evPGBackfilled                    // the backfill onto its returned OSDs is done
)

// pgEvent is an event of PG pg; gen is the PG's generation it was
// scheduled for (evPGStuck: when it became inactive).
type pgEvent struct {
	kind pgEventKind
	pg   int32
	gen  uint32
}

// pgMap is the pool's PGs, as the OSDs peer, recover and backfill them.
type pgMap struct {
	*core
	events mailbox[pgEvent]
	ceph   *cephCluster
	fleet  *fleet
	watch  *monitor

	pgs       []PG
	full      uint8 // the slot bits of a pool-size PG
	nState    [numPGStates]int
	nInactive int
	nBlocked  int // active PGs whose I/O blocks on an acting OSD up in the map that cannot serve
	nDegraded int
	nStuck    int
	rebalWait []int32 // PGs whose backfill norebalance paused
	// countBackfillTargets counts backfill targets toward min_size (the
	// first-generation model's rule; tests switch it on to show what the
	// invariants then miss).
	countBackfillTargets bool
}

func (g *pgMap) handle(e pgEvent) {
	pi := int(e.pg)
	switch e.kind {
	case evPGPeered:
		if p := &g.pgs[pi]; e.gen == p.gen && p.peering {
			if up := g.pgUp(p); g.peerUnreachable(p, up) {
				// an OSD up in the map whose peers cannot reach it
				// (hung, cluster network): peering cannot complete
				// until it is marked down or answers again
				p.peering = false
				g.setPGState(pi, stPeering, bits.OnesCount8(up) < g.P.PoolSize || up&p.cur != g.full)
				return
			}
			if want := g.wantsTemp(p); want && !p.pgTemp {
				// choose_acting: the acting set it wants differs from the
				// map's (a backfill target in the up set); the primary
				// asks the mon for a pg_temp, and the new map starts a
				// new interval that peers again
				p.pgTemp = true
				g.pgChanged(pi)
				return
			} else if !want {
				// a pg_temp equal to the up set is redundant: the mon
				// drops it with the map change (remove_redundant_temporaries)
				p.pgTemp = false
			}
			p.peering = false
			g.pgSettle(pi)
		}
	case evPGRecovered:
		g.pgRecovered(pi, e.gen)
	case evPGStuck:
		g.pgStuck(pi, e.gen)
	case evPGBackfilled:
		g.backfilledBack(pi, e.gen)
	}
}

func (g *pgMap) at(t Time, k pgEventKind, pi int, gen uint32) {
	g.events.at(t, pgEvent{kind: k, pg: int32(pi), gen: gen})
}

// rebalanceResumed: norebalance was unset; the PGs it paused backfill.
func (g *pgMap) rebalanceResumed() {
	w := g.rebalWait
	g.rebalWait = nil
	for _, pi := range w {
		p := &g.pgs[pi]
		p.rwait = false
		if !p.peering && p.rec == 0 && p.bf == 0 && p.state.active() {
			g.pgSettle(int(pi))
		}
	}
}

func (g *pgMap) pgUp(p *PG) uint8 {
	var up uint8
	for k := 0; k < g.P.PoolSize; k++ {
		if o := p.slot[k]; o >= 0 && g.ceph.osds[o].up {
			up |= 1 << k
		}
	}
	return up
}

// peerUnreachable reports whether an up member of PG p cannot exchange
// messages with its peers; it marks such OSDs so that the PG peers again
// when they can.
func (g *pgMap) peerUnreachable(p *PG, up uint8) bool {
	bad := false
	for k := 0; k < g.P.PoolSize; k++ {
		if up&(1<<k) != 0 {
			if o := &g.ceph.osds[p.slot[k]]; !o.canUp {
				o.blocksPeering, bad = true, true
			}
		}
	}
	return bad
}

// pgChanged starts peering after the PG's acting set changed.
func (g *pgMap) pgChanged(pi int) {
	p := &g.pgs[pi]
	g.interrupt(p)
	p.gen++
	p.rec, p.bf, p.stalled = 0, 0, false
	p.peering = true
	g.release(pi)
	up := g.pgUp(p)
	g.setPGState(pi, stPeering, bits.OnesCount8(up) < g.P.PoolSize || up&p.cur != g.full)
	g.at(g.now+g.spread(g.P.PeeringTime, g.P.PeeringSpread), evPGPeered, pi, p.gen)
}

// wantsTemp reports whether PG p's acting set differs from its up set, so
// that its primary holds a pg_temp: an up OSD that is a backfill target
// (acting), or a returned OSD it backfills onto while the interim one acts
// (remap.go).
func (g *pgMap) wantsTemp(p *PG) bool {
	up := g.pgUp(p)
	return g.acting(p, up) != up || p.pendingBack() != 0
}

// acting is PG p's acting set among its up OSDs: those whose copy the PG
// log can bring up to date (the latest writes, or older data the log
// covers). An up OSD without a copy - a slot CRUSH remapped to it, or a
// wiped one - is a backfill target: Ceph's PeeringState
// (calc_replicated_acting) leaves it out of the acting set, so it does
// not count toward min_size until its backfill completes.
func (g *pgMap) acting(p *PG, up uint8) uint8 {
	if g.countBackfillTargets {
		return up // the first-generation rule, kept for the test that shows what it hid
	}
	return up & p.data
}

// priority is the reservation priority of PG p's recovery of slots need
// (recovery.go).
func (g *pgMap) priority(p *PG, up, need uint8) int {
	switch {
	case bits.OnesCount8(g.acting(p, up)) < g.P.PoolMinSize:
		return prioInactive
	case need&^p.data != 0:
		return prioBackfill
	}
	return prioRecovery
}

// pgSettle derives the PG's state after peering or recovery: active iff at
// least min_size OSDs of its acting set are up and one of them has the
// latest writes; with fewer it is peered (undersized+peered: I/O blocks).
// While active, replicas that are not up miss writes and become stale.
// Stale up replicas recover (log) and backfill targets backfill (data)
// from a current one; recovery and backfill below min_size are allowed, as
// in Ceph (osd_allow_recovery_below_min_size).
func (g *pgMap) pgSettle(pi int) {
	p := &g.pgs[pi]
	up := g.pgUp(p)
	u := bits.OnesCount8(up)
	c := bits.OnesCount8(up & p.cur)
	var st pgState
	switch {
	case p.cur == 0:
		st = stIncomplete
	case c == 0:
		st = stDown
	case bits.OnesCount8(g.acting(p, up)) < g.P.PoolMinSize:
		st = stInactive
	default:
		st = stActive
	}
	if st == stActive {
		if stale := p.cur &^ up; stale != 0 {
			for k := 0; k < g.P.PoolSize; k++ {
				if stale&(1<<k) != 0 {
					p.stale[k] = g.ceph.missedSince(p.slot[k])
				}
			}
			p.cur &= up
		}
	}
	if need := up &^ p.cur; need != 0 && c > 0 && p.rec == 0 && g.reserve(pi, need, g.priority(p, up, need)) {
		var longest, total, most float64
		rate := g.recoveryRate(p)
		for k := 0; k < g.P.PoolSize; k++ {
			if need&(1<<k) == 0 {
				continue
			}
			mb := g.pgMB()
			if p.data&(1<<k) != 0 {
				mb = g.deltaMB(p.stale[k], p.slot[k])
			} else {
				mb = g.resumeFill(p, k, p.slot[k], mb)
			}
			longest = max(longest, mb/rate)
			total += mb
			most = max(most, mb)
		}
		p.rec, p.stalled = need, false
		p.recMB, p.recObjMB = float32(total), float32(most)
		p.recStart, p.recRate = g.now, float32(rate)
		g.at(g.now+Time(longest*float64(Second))+1, evPGRecovered, pi, p.gen)
		g.pgStall(pi) // a hung primary or target moves nothing
	}
	deg := u < g.P.PoolSize || up&p.cur != g.full
	remapped := false
	if st == stActive && p.rec == 0 && p.back != noBack {
		remapped = g.startBackfillBack(pi)
	}
	if st == stActive && !deg && p.rec == 0 && !remapped {
		st = stClean
	}
	g.setPGState(pi, st, deg)
}

func (g *pgMap) pgRecovered(pi int, gen uint32) {
	p := &g.pgs[pi]
	if p.gen != gen || p.rec == 0 {
		return
	}
	done := p.rec & g.pgUp(p)
	g.watch.metrics.MovedMB += float64(p.recMB)
	g.watch.metrics.recoveredMB += float64(p.recObjMB)
	for k := range p.fillOn {
		if done&(1<<k) != 0 {
			p.fillOn[k] = -1
		}
	}
	p.cur |= done
	p.data |= done
	p.rec = 0
	g.release(pi)
	if p.pgTemp && !g.wantsTemp(p) {
		// the backfill targets are complete: the primary asks the mon
		// to remove the pg_temp, and the PG peers again in the new
		// interval with them in its acting set
		p.pgTemp = false
		g.pgChanged(pi)
		return
	}
	g.pgSettle(pi)
}

func (g *pgMap) pgStuck(pi int, since uint32) {
	p := &g.pgs[pi]
	if !p.state.active() && !p.stuck && uint32(p.inactiveSince) == since {
		p.stuck = true
		g.nStuck++
	}
}

// pgBlocked recomputes whether active PG pi's I/O blocks: an OSD of its
// acting set is up in the map but cannot serve (dead, cut off, or without
// a network). With quorum it lasts until the OSD is marked down
// (osd_heartbeat_grace); without, the frozen map keeps it.
func (g *pgMap) pgBlocked(pi int) {
	p := &g.pgs[pi]
	b := false
	if p.state.active() {
		for k := 0; k < g.P.PoolSize; k++ {
			if o := p.slot[k]; o >= 0 && g.ceph.osds[o].up && !g.ceph.osds[o].canUp {
				b = true
				break
			}
		}
	}
	if b != p.blocked {
		p.blocked = b
		if b {
			g.nBlocked++
		} else {
			g.nBlocked--
		}
	}
}

func (g *pgMap) setPGState(pi int, st pgState, deg bool) {
	p := &g.pgs[pi]
	if old := p.state; old != st {
		g.nState[old]--
		g.nState[st]++
		p.state = st
		if old.active() && !st.active() {
			g.nInactive++
			p.inactiveSince = g.now
			g.at(g.now+g.P.MonPGStuckThreshold, evPGStuck, pi, uint32(g.now))
		} else if !old.active() && st.active() {
			g.nInactive--
			if p.stuck {
				p.stuck = false
				g.nStuck--
			}
		}
	}
	if deg != p.degraded {
		p.degraded = deg
		if deg {
			g.nDegraded++
		} else {
			g.nDegraded--
		}
	}
	g.pgBlocked(pi)
}

// wipe destroys the data on machine i's OSDs (delete-with-wipe fence).
func (g *pgMap) wipe(i int) {
	for _, oi := range g.ceph.hostOSDs[i] {
		g.cancelBack(int(oi))
		for _, pi := range g.ceph.osds[oi].away {
			p := &g.pgs[pi]
			if k := homeSlot(p, int(oi)); k >= 0 {
				p.homeStale[k] = -1
			}
		}
		for _, pi := range g.ceph.osds[oi].pgs {
			p := &g.pgs[pi]
			k := slotOf(p, int(oi))
			bit := uint8(1) << k
			p.cur &^= bit
			p.data &^= bit
			p.fillOn[k] = -1
			if p.cur == 0 {
				g.watch.violate(4, fmt.Sprintf("PG %d lost its last replica with the latest writes when %s was wiped", pi, g.fleet.m[i].Name))
			}
			g.pgChanged(int(pi))
		}
	}
}

// withoutCurrentElsewhere returns a PG on machine i that lacks min_size
// up replicas with the latest writes on other machines, or -1.
func (g *pgMap) withoutCurrentElsewhere(i int) int {
	osds := g.ceph.osds
	for _, oi := range g.ceph.hostOSDs[i] {
		for _, pi := range osds[oi].pgs {
			p := &g.pgs[pi]
			n := 0
			for k := 0; k < g.P.PoolSize; k++ {
				o := p.slot[k]
				if o >= 0 && osds[o].m != int32(i) && p.cur&(1<<k) != 0 && osds[o].up {
					n++
				}
			}
			if n < g.P.PoolMinSize {
				return int(pi)
			}
		}
	}
	return -1
}

// toMoveMB is the data the PGs' recovery and backfill still have to move:
// what the running ones move, and what the waiting ones need (the objects
// a stale copy missed, a whole replica for a backfill target).
func (g *pgMap) toMoveMB() float64 {
	var mb float64
	for pi := range g.pgs {
		p := &g.pgs[pi]
		switch {
		case p.rec != 0 || p.bf != 0:
			mb += float64(p.recMB)
		case !p.peering:
			up := g.pgUp(p)
			if up&p.cur == 0 {
				continue // nothing to recover from
			}
			need := up &^ p.cur
			for k := 0; k < g.P.PoolSize; k++ {
				switch {
				case need&(1<<k) == 0:
				case p.data&(1<<k) != 0:
					mb += g.deltaMB(p.stale[k], p.slot[k])
				default:
					mb += g.pgMB()
				}
			}
		}
	}
	return mb
}

// summary counts the PGs by state ("120 active+clean, 8 peering").
func (g *pgMap) summary() string {
	var parts []string
	for st := pgState(0); st < numPGStates; st++ {
		if n := g.nState[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, pgStateNames[st]))
		}
	}
	return strings.Join(parts, ", ")
}

// unservedFraction is the fraction of PGs that cannot serve I/O now.
func (g *pgMap) unservedFraction() float64 {
	if len(g.pgs) == 0 {
		return 0
	}
	return float64(g.nInactive+g.nBlocked) / float64(len(g.pgs))
}
