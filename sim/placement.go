package sim

import (
	"fmt"
	"slices"
)

// Placement: where CRUSH puts a PG's replicas (a stand-in for straw2 over
// the failure domains, domains.go), at the start and when an OSD goes out.

// init places the PGs with CRUSH on the OSDs, all active+clean.
func (g *pgMap) init() {
	c := g.cfg.Cluster
	n := len(g.ceph.osds)
	size := g.P.PoolSize
	g.full = uint8(1<<size - 1)
	if n == 0 {
		c.PGs = 0
	}
	g.pgs = make([]PG, c.PGs)
	per := (c.PGs*size)/max(n, 1) + 8
	osds := g.ceph.osds
	for i := range osds {
		osds[i].pgs = make([]int32, 0, per)
	}
	for pi := range g.pgs {
		p := &g.pgs[pi]
		for k := range p.slot {
			p.slot[k], p.resv[k], p.home[k], p.back[k], p.fillOn[k] = -1, -1, -1, -1, -1
		}
		p.lresv = -1
		for k := 0; k < size; k++ {
			o := g.chooseOSD(pi, p, k)
			if c.Placement != nil {
				o = c.Placement[pi][k]
			}
			p.slot[k] = int32(o)
			osds[o].pgs = append(osds[o].pgs, int32(pi))
		}
		p.cur, p.data = g.full, g.full
	}
	g.nState[stClean] = c.PGs
}

// validatePlacement checks a given placement: every PG on poolSize
// distinct OSDs of the cluster.
func validatePlacement(c Cluster, size int) error {
	if c.Placement == nil {
		return nil
	}
	if len(c.Placement) != c.PGs {
		return fmt.Errorf("placement lists %d PGs, the pool has %d", len(c.Placement), c.PGs)
	}
	for pi, osds := range c.Placement {
		if len(osds) != size {
			return fmt.Errorf("placement: PG %d on %d OSDs, pool size %d", pi, len(osds), size)
		}
		for k, o := range osds {
			if o < 0 || o >= c.Machines*c.OSDsPerMachine || slices.Contains(osds[:k], o) {
				return fmt.Errorf("placement: PG %d: OSD %d is not one of the cluster's or repeats", pi, o)
			}
		}
	}
	return nil
}

// chooseOSD picks an "in" OSD for slot k of PG pi on a host no other slot
// uses, walking a per-PG pseudo-random host sequence (a stand-in for CRUSH
// straw2 with a host failure domain). It returns -1 when no host qualifies.
func (g *pgMap) chooseOSD(pi int, p *PG, k int) int {
	nh := len(g.fleet.m)
	per := g.cfg.Cluster.OSDsPerMachine
	for try := 0; try < 4*nh+8; try++ {
		hv := splitmix(uint64(pi)<<20 ^ uint64(try))
		var h int
		if try < 3*nh {
			h = int(hv % uint64(nh))
		} else {
			h = (try - 3*nh) % nh
		}
		if !g.domainFree(p, k, h) || g.fleet.m[h].phase == PhaseGone {
			continue
		}
		start := int((hv >> 32) % uint64(per))
		for r := 0; r < per; r++ {
			o := h*per + (start+r)%per
			if g.ceph.osds[o].in {
				return o
			}
		}
	}
	return -1
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// remapOut: OSD i went out; each of its PG slots moves to an OSD on a host
// the PG does not use yet, which must then backfill. A slot whose OSD has
// the latest writes stays when no up replica has them (the PG is down and
// Ceph waits for that OSD rather than forget it). It returns the PGs
// remapped.
func (g *pgMap) remapOut(i int) int {
	o := &g.ceph.osds[i]
	g.cancelBack(i)
	moved := 0
	for j := len(o.pgs) - 1; j >= 0; j-- {
		pi := int(o.pgs[j])
		p := &g.pgs[pi]
		k := slotOf(p, i)
		bit := uint8(1) << k
		if p.cur&bit != 0 && (p.cur&^bit)&g.pgUp(p) == 0 {
			continue
		}
		no := g.chooseOSD(pi, p, k)
		if no < 0 || no == i {
			continue
		}
		stale := g.replicaStale(p, k)
		p.slot[k] = int32(no)
		p.cur &^= bit
		p.data &^= bit
		o.pgs[j] = o.pgs[len(o.pgs)-1]
		o.pgs = o.pgs[:len(o.pgs)-1]
		g.ceph.osds[no].pgs = append(g.ceph.osds[no].pgs, int32(pi))
		g.noteRemap(pi, k, i, no, stale)
		moved++
		g.pgChanged(pi)
	}
	return moved
}
