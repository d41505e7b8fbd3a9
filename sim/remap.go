package sim

import "fmt"

// PGs map back to OSDs that return. When a down OSD is marked out, CRUSH
// maps each of its PG slots to another OSD (markOut); the slot remembers
// its home OSD. When the home OSD comes back in, CRUSH maps the slot back to
// it: the PG becomes active+remapped+backfilling (pg_temp keeps the interim
// OSD acting, so the PG is neither degraded nor clean) and backfills the
// whole replica onto the returning OSD, under the same reservations as
// recovery (osd_max_backfills), unless the norebalance flag pauses it.
// When the backfill completes the slot moves back and the interim copy is
// dropped: data movement, not just "recovered". The model assumes the
// returning OSD's PG log no longer overlaps (Ceph then backfills rather
// than recovers from the log), which is the case after a down→out remap
// with client writes in between.

// noteRemap records, after markOut moved slot k of PG pi from OSD from to
// OSD to, which OSD CRUSH will map the slot back to when it returns.
func (s *Sim) noteRemap(pi, k, from, to int) {
	p := &s.pgs[pi]
	if p.home[k] == int32(to) {
		s.clearHome(pi, k)
		return
	}
	if p.home[k] < 0 {
		p.home[k] = int32(from)
		s.osds[from].away = append(s.osds[from].away, int32(pi))
	}
}

// clearHome forgets slot k's home OSD and any backfill onto it.
func (s *Sim) clearHome(pi, k int) {
	p := &s.pgs[pi]
	h := p.home[k]
	if h < 0 {
		return
	}
	if p.back[k] >= 0 {
		s.osds[h].backPGs = dropPG(s.osds[h].backPGs, int32(pi))
		p.back[k] = -1
		p.bf &^= 1 << k
	}
	s.osds[h].away = dropPG(s.osds[h].away, int32(pi))
	p.home[k] = -1
}

func dropPG(l []int32, pi int32) []int32 {
	for j, v := range l {
		if v == pi {
			l[j] = l[len(l)-1]
			return l[:len(l)-1]
		}
	}
	return l
}

func homeSlot(p *PG, o int) int {
	for k, v := range p.home {
		if int(v) == o {
			return k
		}
	}
	return -1
}

// markIn: OSD i is in again; CRUSH maps its PGs back to it.
func (s *Sim) markIn(i int) {
	o := &s.osds[i]
	n := 0
	for _, pi32 := range o.away {
		pi := int(pi32)
		p := &s.pgs[pi]
		k := homeSlot(p, i)
		if k < 0 || p.back[k] >= 0 || !s.domainFree(p, k, int(o.m)) {
			continue
		}
		p.back[k] = int32(i)
		o.backPGs = append(o.backPGs, pi32)
		n++
		s.pgChanged(pi)
	}
	if s.rec != nil && n > 0 {
		how := "backfilling"
		if s.ceph.flags&flagNoRebalance != 0 {
			how = "backfill paused by norebalance"
		}
		s.logf("ceph", "osd.%d in: %d PGs map back to it (remapped, %s)", i, n, how)
	}
}

// cancelBack stops every backfill onto OSD i (it went out or was wiped);
// the PGs stay on their interim OSDs and map back when i is in again.
func (s *Sim) cancelBack(i int) {
	o := &s.osds[i]
	for len(o.backPGs) > 0 {
		pi := int(o.backPGs[len(o.backPGs)-1])
		o.backPGs = o.backPGs[:len(o.backPGs)-1]
		p := &s.pgs[pi]
		for k := range p.back {
			if int(p.back[k]) == i {
				p.back[k] = -1
				p.bf &^= 1 << k
			}
		}
		s.pgChanged(pi)
	}
}

// pendingBack returns the slots of PG p waiting to backfill onto a
// returned OSD.
func (p *PG) pendingBack() uint8 {
	var m uint8
	for k, v := range p.back {
		if v >= 0 {
			m |= 1 << k
		}
	}
	return m
}

// startBackfillBack starts the backfill of an active PG that needs no
// recovery onto its returned OSDs that are up (pgSettle calls it). It
// reports whether the PG is still remapped.
func (s *Sim) startBackfillBack(pi int) bool {
	p := &s.pgs[pi]
	pend := p.pendingBack()
	if pend == 0 {
		return false
	}
	if p.bf != 0 || p.rec != 0 {
		return true
	}
	if s.ceph.flags&flagNoRebalance != 0 {
		if !p.rwait {
			p.rwait = true
			s.ceph.rebalWait = append(s.ceph.rebalWait, int32(pi))
		}
		return true
	}
	var go_ uint8
	for k := 0; k < s.P.PoolSize; k++ {
		if pend&(1<<k) != 0 && s.osds[p.back[k]].up {
			go_ |= 1 << k
		}
	}
	if go_ == 0 || !s.reserveOn(pi, go_, &p.back) {
		return true
	}
	p.bf = go_
	mb := s.pgMB()
	p.recMB = float32(mb * float64(bitsOn(go_)))
	s.schedule(s.now+Time(mb/s.recoveryRate()*float64(Second))+1, evPGBackfilled, int32(pi), 0, int64(p.gen))
	return true
}

// backfilledBack: the backfill onto the returned OSDs is complete; the
// slots move back to them and the interim copies are dropped.
func (s *Sim) backfilledBack(pi int, gen uint32) {
	p := &s.pgs[pi]
	if p.gen != gen || p.bf == 0 {
		return
	}
	have := p.cur != 0
	for k := 0; k < s.P.PoolSize; k++ {
		if p.bf&(1<<k) == 0 {
			continue
		}
		t := int(p.back[k])
		old := p.slot[k]
		if old >= 0 {
			s.osds[old].pgs = dropPG(s.osds[old].pgs, int32(pi))
		}
		s.osds[t].backPGs = dropPG(s.osds[t].backPGs, int32(pi))
		s.osds[t].away = dropPG(s.osds[t].away, int32(pi))
		s.osds[t].pgs = append(s.osds[t].pgs, int32(pi))
		p.slot[k], p.back[k], p.home[k] = int32(t), -1, -1
		if have {
			p.cur |= 1 << k
			p.data |= 1 << k
		}
	}
	p.bf = 0
	s.metrics.MappedBack++
	s.metrics.BackfillMB += float64(p.recMB)
	s.metrics.MovedMB += float64(p.recMB)
	s.pgChanged(pi)
}

// domainFree reports whether host h may hold slot k of PG p: no other slot
// (or backfill target) of the PG is in the same failure domain.
func (s *Sim) domainFree(p *PG, k, h int) bool {
	d := s.domainOf(h)
	for j := 0; j < s.P.PoolSize; j++ {
		if j == k {
			continue
		}
		if o := p.slot[j]; o >= 0 && s.domainOf(int(s.osds[o].m)) == d {
			return false
		}
		if o := p.back[j]; o >= 0 && s.domainOf(int(s.osds[o].m)) == d {
			return false
		}
	}
	return true
}

func bitsOn(m uint8) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

func (s *Sim) checkRemap(pi int) error {
	p := &s.pgs[pi]
	for k := range p.back {
		if p.back[k] >= 0 && p.home[k] != p.back[k] {
			return fmt.Errorf("PG %d slot %d backfills onto osd.%d but its home is osd.%d", pi, k, p.back[k], p.home[k])
		}
	}
	return nil
}

var noBack = [maxSize]int32{-1, -1, -1, -1}
