package sim

import "slices"

// Recovery and backfill reservations, as Ceph's AsyncReserver pair does it
// (osd_max_backfills, default 1). A PG that needs recovery or backfill
// takes a local reservation on its primary (the first up OSD with the
// latest writes) and a remote reservation on every OSD it recovers onto;
// each OSD grants at most osdMaxBackfills of each kind at once. A PG that
// cannot get all of them waits in the queue of the first full OSD and is
// retried when that OSD releases one. A recovering PG moves data at
// osdRecoveryMBps / osdMaxBackfills (an OSD's recovery bandwidth shared by
// its slots); a PG replica holds poolUsedGB / pgs of data when poolUsedGB is
// set (else pgDataMB). Recovery time then grows with the data and shrinks
// with more OSDs to spread it over. osdMaxBackfills 0 turns reservations
// off: every PG recovers at once at recoveryMBps (the first-generation
// model, kept for comparison).

// pgMB is the data one PG replica holds.
func (g *pgMap) pgMB() float64 {
	if g.P.PoolUsedGB > 0 && len(g.pgs) > 0 {
		return g.P.PoolUsedGB * 1024 / float64(len(g.pgs))
	}
	return g.P.PGDataMB
}

// deltaMB is what a replica on OSD o that has missed the writes since
// stale (its data otherwise intact) needs: the objects written from then
// until it came back up (later writes reach it), at most a whole replica.
// Log-based recovery and backfill both copy only those objects (backfill
// compares object versions and skips the ones it has).
func (g *pgMap) deltaMB(stale Time, o int32) float64 {
	end := g.now
	if o >= 0 {
		if od := &g.ceph.osds[o]; od.up && od.upAt > stale {
			end = min(end, od.upAt)
		}
	}
	return min(g.pgMB(), float64(end-stale)/float64(Second)*g.P.PGWriteMBps)
}

// recoveryRate is the pace, in MB/s per target, of PG p's recovery that
// starts now: the OSD's bandwidth shared by its slots, or, when
// osd_recovery_sleep paces it (RecoverySleepShare), one PG's pace unless
// the PGs recovering with its primary together need more ops than one per
// sleep.
func (g *pgMap) recoveryRate(p *PG) float64 {
	switch {
	case g.P.OSDMaxBackfills == 0:
		return g.P.RecoveryMBps
	case g.P.RecoverySleepShare > 0:
		n := 1
		if p.lresv >= 0 {
			n = max(1, g.ceph.osds[p.lresv].localBackfills)
		}
		return g.P.OSDRecoveryMBps * min(1, 1/(float64(n)*g.P.RecoverySleepShare))
	}
	return g.P.OSDRecoveryMBps / float64(g.P.OSDMaxBackfills)
}

// resumeFill is what a backfill onto OSD o of slot k of PG p still has to
// move of mb: a backfill interrupted (a new interval, a preempted
// reservation) resumes where it stopped (the target keeps its objects and
// last_backfill), on the same OSD.
func (g *pgMap) resumeFill(p *PG, k int, o int32, mb float64) float64 {
	if p.fillOn[k] != o {
		p.fillOn[k], p.filled[k] = o, 0
		return mb
	}
	return max(0, mb-float64(p.filled[k]))
}

// interrupt stops PG p's running recovery or backfill: what its backfill
// targets got so far stays on them (resumeFill) and counts as moved.
func (g *pgMap) interrupt(p *PG) {
	run := p.rec | p.bf
	if run == 0 || p.stalled {
		return // a stalled PG's progress was counted when it stalled
	}
	moved := float64(g.now-p.recStart) / float64(Second) * float64(p.recRate)
	most := 0.0 // Ceph counts an object pushed to several targets once
	defer func() { g.watch.metrics.recoveredMB += most }()
	for k := 0; k < g.P.PoolSize; k++ {
		if run&(1<<k) == 0 || p.fillOn[k] < 0 {
			continue
		}
		to := p.slot[k]
		if p.bf&(1<<k) != 0 {
			to = p.back[k]
		}
		if to != p.fillOn[k] {
			continue
		}
		f := min(float64(p.filled[k])+moved, g.pgMB())
		g.watch.metrics.MovedMB += f - float64(p.filled[k])
		most = max(most, f-float64(p.filled[k]))
		p.filled[k] = float32(f)
	}
}

// pgStall pauses or resumes PG pi's running recovery or backfill as the
// OSDs it moves data between answer: its primary pushes to its targets,
// and an OSD up in the map that cannot answer (hung, cut off) stops the
// pushes until it answers again or is marked down (a new interval). A
// stalled PG keeps its reservations and what its targets got (interrupt);
// its completion is void until it resumes, with what is left to move.
func (g *pgMap) pgStall(pi int) {
	p := &g.pgs[pi]
	if p.rec|p.bf == 0 || p.peering {
		return
	}
	switch hung := g.movesThroughHung(p); {
	case hung && !p.stalled:
		g.interrupt(p)
		p.stalled = true
		p.gen++
	case !hung && p.stalled:
		p.rec, p.bf, p.stalled = 0, 0, false
		g.pgSettle(pi)
	}
}

// movesThroughHung reports whether PG p's running recovery or backfill
// has its primary or a target up in the map but unable to answer.
func (g *pgMap) movesThroughHung(p *PG) bool {
	hung := func(o int32) bool { return o >= 0 && g.ceph.osds[o].up && !g.ceph.osds[o].canUp }
	if hung(g.primary(p)) {
		return true
	}
	for k := 0; k < g.P.PoolSize; k++ {
		if p.rec&(1<<k) != 0 && hung(p.slot[k]) || p.bf&(1<<k) != 0 && hung(p.back[k]) {
			return true
		}
	}
	return false
}

// primary is PG p's primary: the first up OSD holding the latest writes
// (-1: none).
func (g *pgMap) primary(p *PG) int32 {
	cur := g.pgUp(p) & p.cur
	for k := 0; k < g.P.PoolSize; k++ {
		if cur&(1<<k) != 0 {
			return p.slot[k]
		}
	}
	return -1
}

// Reservation priorities, highest first, as PeeringState's
// get_recovery_priority and get_backfill_priority order them: a PG whose
// acting set is below min_size (it blocks I/O: OSD_*_INACTIVE_PRIORITY_BASE
// 220), log recovery of a degraded PG (OSD_RECOVERY_PRIORITY_BASE 180),
// backfill of a degraded or undersized PG (OSD_BACKFILL_DEGRADED_PRIORITY_BASE
// 140), backfill of a PG that is only misplaced (OSD_BACKFILL_PRIORITY_BASE
// 100). The AsyncReserver grants the highest waiting priority first.
const (
	prioMisplaced = iota
	prioBackfill
	prioRecovery
	prioInactive
	numPrios
)

// waitQueue is the PGs waiting for an OSD's reservation slots, one FIFO per
// priority.
type waitQueue [numPrios][]pgWait

func (q *waitQueue) push(prio int, w pgWait) { q[prio] = append(q[prio], w) }

// pop returns the first PG of the highest priority waiting (ok false: none).
func (q *waitQueue) pop() (w pgWait, ok bool) {
	for p := numPrios - 1; p >= 0; p-- {
		if l := q[p]; len(l) > 0 {
			w = l[0]
			if len(l) == 1 {
				q[p] = l[:0:0]
			} else {
				q[p] = l[1:]
			}
			return w, true
		}
	}
	return w, false
}

// reserve tries to reserve recovery of slots need of PG pi at priority
// prio (reserveOn).
func (g *pgMap) reserve(pi int, need uint8, prio int) bool {
	return g.reserveOn(pi, need, &g.pgs[pi].slot, prio)
}

// reserveOn reserves recovery of slots need of PG pi, the target OSD of
// slot k in to[k] (the PG's slots, or the returned OSDs it backfills
// onto), as PeeringState's WaitLocal*Reserved and WaitRemote*Reserved
// states do: first a local slot on its primary, then a remote slot on
// each target in the order of their OSD ids, one at a time. A PG that
// waits keeps what it was granted - the local slot while it waits for a
// remote one - so a primary's slot stays taken while its PG waits for a
// busy target (the ordered requests cannot deadlock). It queues the PG on
// the OSD it waits for and returns false; the PG tries again when that
// OSD releases a slot.
func (g *pgMap) reserveOn(pi int, need uint8, to *[maxSize]int32, prio int) bool {
	if g.P.OSDMaxBackfills == 0 {
		return true
	}
	p := &g.pgs[pi]
	p.prio = uint8(prio)
	max := g.P.OSDMaxBackfills
	if p.lresv < 0 {
		if prim := g.primary(p); prim >= 0 {
			o := &g.ceph.osds[prim]
			var freed []int32
			if o.localBackfills >= max {
				if freed = g.preempt(prim, true, prio); freed == nil {
					o.lwaiting.push(prio, pgWait{pi: int32(pi), gen: p.gen})
					return false
				}
			}
			o.localBackfills++
			p.lresv = prim
			g.wakeAll(freed)
		}
	}
	for {
		k := -1
		for j := 0; j < g.P.PoolSize; j++ {
			if need&(1<<j) != 0 && p.resv[j] != to[j] && (k < 0 || to[j] < to[k]) {
				k = j
			}
		}
		if k < 0 {
			return true
		}
		o := &g.ceph.osds[to[k]]
		var freed []int32
		if o.backfills >= max {
			if freed = g.preempt(to[k], false, prio); freed == nil {
				o.waiting.push(prio, pgWait{pi: int32(pi), gen: p.gen})
				return false
			}
		}
		if p.resv[k] >= 0 {
			g.ceph.osds[p.resv[k]].backfills--
		}
		o.backfills++
		p.resv[k] = to[k]
		g.wakeAll(freed)
	}
}

// preempt frees one of OSD o's local (or remote) reservation slots for a
// request of priority prio, as the AsyncReserver preempts the lowest
// priority granted item when a higher one waits: the PG holding it (of a
// lower priority) stops (DeferBackfill, DeferRecovery), keeps what it
// moved (interrupt), gives back its reservations and waits on o again.
// It returns the victim's other OSDs, to wake once the caller holds the
// slot on o (nil: no slot freed).
func (g *pgMap) preempt(o int32, local bool, prio int) []int32 {
	victim := -1
	for pi := range g.pgs {
		p := &g.pgs[pi]
		if int(p.prio) >= prio || (victim >= 0 && p.prio >= g.pgs[victim].prio) {
			continue
		}
		if (local && p.lresv == o) || (!local && slices.Contains(p.resv[:], o)) {
			victim = pi
		}
	}
	if victim < 0 {
		return nil
	}
	p := &g.pgs[victim]
	g.interrupt(p)
	p.rec, p.bf, p.stalled = 0, 0, false
	p.gen++ // its completion event is void
	freed := []int32{}
	if p.lresv >= 0 {
		g.ceph.osds[p.lresv].localBackfills--
		if p.lresv != o {
			freed = append(freed, p.lresv)
		}
		p.lresv = -1
	}
	for k, r := range p.resv {
		if r >= 0 {
			g.ceph.osds[r].backfills--
			if r != o {
				freed = append(freed, r)
			}
			p.resv[k] = -1
		}
	}
	od := &g.ceph.osds[o]
	if local {
		od.lwaiting.push(int(p.prio), pgWait{pi: int32(victim), gen: p.gen})
	} else {
		od.waiting.push(int(p.prio), pgWait{pi: int32(victim), gen: p.gen})
	}
	return freed
}

// wakeAll wakes the OSDs a preemption freed slots on.
func (g *pgMap) wakeAll(osds []int32) {
	for _, o := range osds {
		g.wake(int(o))
	}
}

// release frees PG pi's reservations and lets waiting PGs try again.
func (g *pgMap) release(pi int) {
	if g.P.OSDMaxBackfills == 0 {
		return
	}
	p := &g.pgs[pi]
	if o := p.lresv; o >= 0 {
		p.lresv = -1
		g.ceph.osds[o].localBackfills--
		g.wake(int(o))
	}
	for k := range p.resv {
		o := p.resv[k]
		if o < 0 {
			continue
		}
		p.resv[k] = -1
		g.ceph.osds[o].backfills--
		g.wake(int(o))
	}
}

// wake retries the PGs waiting on OSD o, highest priority first, while it
// has free slots of the kind they wait for.
func (g *pgMap) wake(o int) {
	od := &g.ceph.osds[o]
	max := g.P.OSDMaxBackfills
	for od.backfills < max {
		w, ok := od.waiting.pop()
		if !ok {
			break
		}
		g.retry(w)
	}
	for od.localBackfills < max {
		w, ok := od.lwaiting.pop()
		if !ok {
			break
		}
		g.retry(w)
	}
}

// retry settles a waiting PG again if it still needs recovery.
func (g *pgMap) retry(w pgWait) {
	p := &g.pgs[w.pi]
	if p.gen == w.gen && p.rec == 0 && p.bf == 0 && !p.peering {
		g.pgSettle(int(w.pi))
	}
}

type pgWait struct {
	pi  int32
	gen uint32
}
