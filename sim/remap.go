package sim

import "fmt"

// PGs map back to OSDs that return. When a down OSD is marked out, CRUSH
// maps each of its PG slots to another OSD (markOut); the slot remembers
// its home OSD and since when the home's copy misses writes. When the home
// OSD comes back in, CRUSH maps the slot back to it, and the copy it kept
// (its disks are intact unless wiped) needs only the objects written since
// it went down - Ceph never re-copies a whole replica onto an OSD that has
// one:
//   - If the interim copy is not complete yet (the backfill onto the
//     interim OSD still runs or waits), or if the PG log still covers the
//     home's last update (the log is trimmed to osd_min_pg_log_entries
//     once the PG is clean again), the home OSD rejoins the acting set at
//     once: the interim copy is dropped and the home recovers the missed
//     objects (degraded until then).
//   - Otherwise pg_temp keeps the complete interim OSD acting (the PG is
//     active+remapped+backfilling: not degraded, not clean) and the home
//     is backfilled with the objects whose versions differ, under the same
//     reservations as recovery (osd_max_backfills) unless norebalance
//     pauses it; then the slot moves back and the interim copy is dropped.
// A wiped home (delete-wipe fence) has no copy and is backfilled in full.

// replicaStale is since when slot k's replica of PG p misses writes: now if
// it holds the latest writes, its stale time if it holds older data, -1 if
// it holds none.
func (g *pgMap) replicaStale(p *PG, k int) Time {
	bit := uint8(1) << k
	switch {
	case p.cur&bit != 0:
		return g.now
	case p.data&bit != 0:
		return p.stale[k]
	}
	return -1
}

// logCovers reports whether a clean PG's log still holds every write since
// stale (osd_min_pg_log_entries at pgWriteOps log entries per second).
func (g *pgMap) logCovers(stale Time) bool {
	return float64(g.now-stale)/float64(Second)*g.P.PGWriteOps <= float64(g.P.OSDMinPGLogEntries)
}

// noteRemap records, after markOut moved slot k of PG pi from OSD from to
// OSD to, which OSD CRUSH will map the slot back to when it returns and
// since when its copy misses writes (stale, -1: no copy).
func (g *pgMap) noteRemap(pi, k, from, to int, stale Time) {
	p := &g.pgs[pi]
	if p.home[k] == int32(to) {
		g.clearHome(pi, k)
		return
	}
	if p.home[k] < 0 {
		p.home[k] = int32(from)
		p.homeStale[k] = stale
		g.ceph.osds[from].away = append(g.ceph.osds[from].away, int32(pi))
	}
}

// clearHome forgets slot k's home OSD and any backfill onto it.
func (g *pgMap) clearHome(pi, k int) {
	p := &g.pgs[pi]
	h := p.home[k]
	if h < 0 {
		return
	}
	if p.back[k] >= 0 {
		g.ceph.osds[h].backPGs = dropPG(g.ceph.osds[h].backPGs, int32(pi))
		p.back[k] = -1
		p.bf &^= 1 << k
	}
	g.ceph.osds[h].away = dropPG(g.ceph.osds[h].away, int32(pi))
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
func (g *pgMap) markIn(i int) {
	o := &g.ceph.osds[i]
	n, rejoined := 0, 0
	for j := 0; j < len(o.away); {
		pi := int(o.away[j])
		p := &g.pgs[pi]
		k := homeSlot(p, i)
		if k < 0 || p.back[k] >= 0 || !g.domainFree(p, k, int(o.m)) {
			j++
			continue
		}
		bit := uint8(1) << k
		if hs := p.homeStale[k]; p.cur&bit == 0 || (hs >= 0 && g.logCovers(hs) && p.cur&^bit != 0) {
			g.rejoin(pi, k) // drops pi from o.away
			rejoined++
			continue
		}
		p.back[k] = int32(i)
		o.backPGs = append(o.backPGs, int32(pi))
		n++
		j++
		g.pgChanged(pi)
	}
	if g.rec != nil && n+rejoined > 0 {
		how := "backfilling the changed objects"
		if g.ceph.flags&flagNoRebalance != 0 {
			how = "backfill paused by norebalance"
		}
		g.logf("ceph", "osd.%d in: %d PGs map back to it: %d rejoin the acting set and recover the objects written since it went down, %d remapped (%s)", i, n+rejoined, rejoined, n, how)
	}
}

// rejoin maps slot k of PG pi straight back to its home OSD, which keeps
// the copy it had: the interim copy is dropped and the home recovers what
// it missed (pgSettle: delta since its stale time).
func (g *pgMap) rejoin(pi, k int) {
	p := &g.pgs[pi]
	h := p.home[k]
	if old := p.slot[k]; old >= 0 {
		g.ceph.osds[old].pgs = dropPG(g.ceph.osds[old].pgs, int32(pi))
	}
	stale := p.homeStale[k]
	g.ceph.osds[h].away = dropPG(g.ceph.osds[h].away, int32(pi))
	g.ceph.osds[h].pgs = append(g.ceph.osds[h].pgs, int32(pi))
	p.slot[k], p.home[k] = h, -1
	bit := uint8(1) << k
	p.cur &^= bit
	if stale >= 0 {
		p.data |= bit
		p.stale[k] = stale
	} else {
		p.data &^= bit
	}
	g.watch.metrics.Rejoined++
	g.pgChanged(pi)
}

// cancelBack stops every backfill onto OSD i (it went out or was wiped);
// the PGs stay on their interim OSDs and map back when i is in again.
func (g *pgMap) cancelBack(i int) {
	o := &g.ceph.osds[i]
	for len(o.backPGs) > 0 {
		pi := int(o.backPGs[len(o.backPGs)-1])
		o.backPGs = o.backPGs[:len(o.backPGs)-1]
		p := &g.pgs[pi]
		for k := range p.back {
			if int(p.back[k]) == i {
				p.back[k] = -1
				p.bf &^= 1 << k
			}
		}
		g.pgChanged(pi)
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
func (g *pgMap) startBackfillBack(pi int) bool {
	p := &g.pgs[pi]
	pend := p.pendingBack()
	if pend == 0 {
		return false
	}
	if p.bf != 0 || p.rec != 0 {
		return true
	}
	if g.ceph.flags&flagNoRebalance != 0 {
		if !p.rwait {
			p.rwait = true
			g.rebalWait = append(g.rebalWait, int32(pi))
		}
		return true
	}
	var go_ uint8
	for k := 0; k < g.P.PoolSize; k++ {
		if pend&(1<<k) != 0 && g.ceph.osds[p.back[k]].up {
			go_ |= 1 << k
		}
	}
	if go_ == 0 || !g.reserveOn(pi, go_, &p.back, prioMisplaced) {
		return true
	}
	p.bf, p.stalled = go_, false
	var longest, total float64
	for k := 0; k < g.P.PoolSize; k++ {
		if go_&(1<<k) == 0 {
			continue
		}
		mb := g.pgMB()
		if hs := p.homeStale[k]; hs >= 0 {
			mb = g.deltaMB(hs, p.back[k])
		}
		mb = g.resumeFill(p, k, p.back[k], mb)
		longest, total = max(longest, mb), total+mb
	}
	rate := g.recoveryRate(p)
	p.recMB, p.recObjMB = float32(total), float32(longest)
	p.recStart, p.recRate = g.now, float32(rate)
	g.at(g.now+Time(longest/rate*float64(Second))+1, evPGBackfilled, pi, p.gen)
	g.pgStall(pi) // a hung primary or target moves nothing
	return true
}

// backfilledBack: the backfill onto the returned OSDs is complete; the
// slots move back to them and the interim copies are dropped.
func (g *pgMap) backfilledBack(pi int, gen uint32) {
	p := &g.pgs[pi]
	if p.gen != gen || p.bf == 0 {
		return
	}
	have := p.cur != 0
	for k := 0; k < g.P.PoolSize; k++ {
		if p.bf&(1<<k) == 0 {
			continue
		}
		t := int(p.back[k])
		old := p.slot[k]
		if old >= 0 {
			g.ceph.osds[old].pgs = dropPG(g.ceph.osds[old].pgs, int32(pi))
		}
		g.ceph.osds[t].backPGs = dropPG(g.ceph.osds[t].backPGs, int32(pi))
		g.ceph.osds[t].away = dropPG(g.ceph.osds[t].away, int32(pi))
		g.ceph.osds[t].pgs = append(g.ceph.osds[t].pgs, int32(pi))
		p.slot[k], p.back[k], p.home[k], p.fillOn[k] = int32(t), -1, -1, -1
		if have {
			p.cur |= 1 << k
			p.data |= 1 << k
		}
	}
	p.bf = 0
	p.pgTemp = g.wantsTemp(p) // the pg_temp removed with the move back
	g.watch.metrics.MappedBack++
	g.watch.metrics.BackfillMB += float64(p.recMB)
	g.watch.metrics.MovedMB += float64(p.recMB)
	g.watch.metrics.recoveredMB += float64(p.recObjMB)
	g.pgChanged(pi)
}

// domainFree reports whether host h may hold slot k of PG p: no other slot
// (or backfill target) of the PG is in the same failure domain.
func (g *pgMap) domainFree(p *PG, k, h int) bool {
	d := g.ceph.domainOf(h)
	for j := 0; j < g.P.PoolSize; j++ {
		if j == k {
			continue
		}
		if o := p.slot[j]; o >= 0 && g.ceph.domainOf(int(g.ceph.osds[o].m)) == d {
			return false
		}
		if o := p.back[j]; o >= 0 && g.ceph.domainOf(int(g.ceph.osds[o].m)) == d {
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

func (g *pgMap) checkRemap(pi int) error {
	p := &g.pgs[pi]
	for k := range p.back {
		if p.back[k] >= 0 && p.home[k] != p.back[k] {
			return fmt.Errorf("PG %d slot %d backfills onto osd.%d but its home is osd.%d", pi, k, p.back[k], p.home[k])
		}
	}
	return nil
}

var noBack = [maxSize]int32{-1, -1, -1, -1}
