package sim

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

// deltaMB is what a replica that has missed the writes since stale (its
// data otherwise intact) needs: the objects written since, at most a whole
// replica. Log-based recovery and backfill both copy only those objects
// (backfill compares object versions and skips the ones it has).
func (g *pgMap) deltaMB(stale Time) float64 {
	return min(g.pgMB(), float64(g.now-stale)/float64(Second)*g.P.PGWriteMBps)
}

// recoveryRate is the bandwidth one recovering PG gets, in MB/g.
func (g *pgMap) recoveryRate() float64 {
	if g.P.OSDMaxBackfills > 0 {
		return g.P.OSDRecoveryMBps / float64(g.P.OSDMaxBackfills)
	}
	return g.P.RecoveryMBps
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
// prio: a local slot on its primary and a remote slot on each target; on
// failure it queues the PG on a full OSD and returns false.
func (g *pgMap) reserve(pi int, need uint8, prio int) bool {
	return g.reserveOn(pi, need, &g.pgs[pi].slot, prio)
}

// reserveOn is reserve with the target OSD of slot k in to[k] (the PG's
// slots, or the returned OSDs it backfills onto).
func (g *pgMap) reserveOn(pi int, need uint8, to *[maxSize]int32, prio int) bool {
	if g.P.OSDMaxBackfills == 0 {
		return true
	}
	p := &g.pgs[pi]
	max := g.P.OSDMaxBackfills
	prim := g.primary(p)
	if prim >= 0 {
		if o := &g.ceph.osds[prim]; o.localBackfills >= max {
			o.lwaiting.push(prio, pgWait{pi: int32(pi), gen: p.gen})
			return false
		}
	}
	for k := 0; k < g.P.PoolSize; k++ {
		if need&(1<<k) == 0 {
			continue
		}
		if o := &g.ceph.osds[to[k]]; o.backfills >= max {
			o.waiting.push(prio, pgWait{pi: int32(pi), gen: p.gen})
			return false
		}
	}
	if prim >= 0 {
		g.ceph.osds[prim].localBackfills++
		p.lresv = prim
	}
	for k := 0; k < g.P.PoolSize; k++ {
		if need&(1<<k) != 0 {
			o := to[k]
			g.ceph.osds[o].backfills++
			p.resv[k] = o
		}
	}
	return true
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
