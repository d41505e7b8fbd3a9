package sim

// Recovery and backfill reservations (opt-in: osdMaxBackfills > 0).
//
// With osdMaxBackfills = 0 every PG recovers at recoveryMBps on its own, in
// parallel with all others (the first-generation model). With
// osdMaxBackfills = n, as in Ceph, an OSD takes part in at most n recoveries
// or backfills at a time as a target: a PG that needs recovery must reserve
// a slot on every OSD it recovers onto, waits in that OSD's queue
// otherwise, and recovers at osdRecoveryMBps / n (the OSD's bandwidth shared
// by its slots). A PG replica holds poolUsedGB / pgs of data when poolUsedGB
// is set (else pgDataMB). Recovery time then grows with the data and shrinks
// with more OSDs to spread the backfill over.

// pgMB is the data one PG replica holds.
func (s *Sim) pgMB() float64 {
	if s.P.PoolUsedGB > 0 && len(s.pgs) > 0 {
		return s.P.PoolUsedGB * 1024 / float64(len(s.pgs))
	}
	return s.P.PGDataMB
}

// recoveryRate is the bandwidth one recovering PG gets, in MB/s.
func (s *Sim) recoveryRate() float64 {
	if s.P.OSDMaxBackfills > 0 {
		return s.P.OSDRecoveryMBps / float64(s.P.OSDMaxBackfills)
	}
	return s.P.RecoveryMBps
}

// reserve tries to reserve a backfill slot on every OSD in slots need of PG
// pi; on failure it queues the PG on a full OSD and returns false.
func (s *Sim) reserve(pi int, need uint8) bool {
	return s.reserveOn(pi, need, &s.pgs[pi].slot)
}

// reserveOn is reserve with the target OSD of slot k in to[k] (the PG's
// slots, or the returned OSDs it backfills onto).
func (s *Sim) reserveOn(pi int, need uint8, to *[maxSize]int32) bool {
	if s.P.OSDMaxBackfills == 0 {
		return true
	}
	p := &s.pgs[pi]
	for k := 0; k < s.P.PoolSize; k++ {
		if need&(1<<k) == 0 {
			continue
		}
		o := &s.osds[to[k]]
		if o.backfills >= s.P.OSDMaxBackfills {
			o.waiting = append(o.waiting, pgWait{pi: int32(pi), gen: p.gen})
			return false
		}
	}
	for k := 0; k < s.P.PoolSize; k++ {
		if need&(1<<k) != 0 {
			o := to[k]
			s.osds[o].backfills++
			p.resv[k] = o
		}
	}
	return true
}

// release frees PG pi's reservations and lets waiting PGs try again.
func (s *Sim) release(pi int) {
	if s.P.OSDMaxBackfills == 0 {
		return
	}
	p := &s.pgs[pi]
	for k := range p.resv {
		o := p.resv[k]
		if o < 0 {
			continue
		}
		p.resv[k] = -1
		s.osds[o].backfills--
		s.wake(int(o))
	}
}

// wake starts the first waiting PG on OSD o that still needs recovery.
func (s *Sim) wake(o int) {
	od := &s.osds[o]
	for len(od.waiting) > 0 && od.backfills < s.P.OSDMaxBackfills {
		w := od.waiting[0]
		od.waiting = od.waiting[1:]
		p := &s.pgs[w.pi]
		if p.gen == w.gen && p.rec == 0 && p.bf == 0 && !p.peering {
			s.pgSettle(int(w.pi))
		}
	}
	if len(od.waiting) == 0 {
		od.waiting = od.waiting[:0:0]
	}
}

type pgWait struct {
	pi  int32
	gen uint32
}
