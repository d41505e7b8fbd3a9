package sim

import (
	"fmt"
	"math/bits"
)

// PG peering, state, recovery and the wipe of a machine's replicas.

func (s *Sim) pgUp(p *PG) uint8 {
	var up uint8
	for k := 0; k < s.P.PoolSize; k++ {
		if o := p.slot[k]; o >= 0 && s.osds[o].up {
			up |= 1 << k
		}
	}
	return up
}

// peerUnreachable reports whether an up member of PG p cannot exchange
// messages with its peers; it marks such OSDs so that the PG peers again
// when they can.
func (s *Sim) peerUnreachable(p *PG, up uint8) bool {
	bad := false
	for k := 0; k < s.P.PoolSize; k++ {
		if up&(1<<k) != 0 {
			if o := &s.osds[p.slot[k]]; !o.canUp {
				o.blocksPeering, bad = true, true
			}
		}
	}
	return bad
}

// pgChanged starts peering after the PG's acting set changed.
func (s *Sim) pgChanged(pi int) {
	p := &s.pgs[pi]
	p.gen++
	p.rec, p.bf = 0, 0
	p.peering = true
	s.release(pi)
	up := s.pgUp(p)
	s.setPGState(pi, stPeering, bits.OnesCount8(up) < s.P.PoolSize || up&p.cur != s.ceph.full)
	s.schedule(s.now+s.P.PeeringTime, evPGPeered, int32(pi), 0, int64(p.gen))
}

// pgSettle derives the PG's state after peering or recovery: active iff at
// least min_size replicas are up and one of them has the latest writes.
// While active, replicas that are not up miss writes and become stale.
// Stale or empty up replicas recover (log) or backfill (data) from a
// current one; recovery below min_size is allowed, as in Ceph.
func (s *Sim) pgSettle(pi int) {
	p := &s.pgs[pi]
	up := s.pgUp(p)
	if s.peerUnreachable(p, up) {
		// an OSD up in the map whose peers cannot reach it (cluster
		// network): peering cannot complete until it is marked down
		s.setPGState(pi, stPeering, bits.OnesCount8(up) < s.P.PoolSize || up&p.cur != s.ceph.full)
		return
	}
	u := bits.OnesCount8(up)
	c := bits.OnesCount8(up & p.cur)
	var st pgState
	switch {
	case p.cur == 0:
		st = stIncomplete
	case c == 0:
		st = stDown
	case u < s.P.PoolMinSize:
		st = stInactive
	default:
		st = stActive
	}
	if st == stActive {
		if stale := p.cur &^ up; stale != 0 {
			for k := 0; k < s.P.PoolSize; k++ {
				if stale&(1<<k) != 0 {
					p.stale[k] = s.now
				}
			}
			p.cur &= up
		}
	}
	if need := up &^ p.cur; need != 0 && c > 0 && p.rec == 0 && s.reserve(pi, need) {
		var longest, total float64
		for k := 0; k < s.P.PoolSize; k++ {
			if need&(1<<k) == 0 {
				continue
			}
			mb := s.pgMB()
			if p.data&(1<<k) != 0 {
				mb = s.deltaMB(p.stale[k])
			}
			longest = max(longest, mb/s.recoveryRate())
			total += mb
		}
		p.rec = need
		p.recMB = float32(total)
		s.schedule(s.now+Time(longest*float64(Second))+1, evPGRecovered, int32(pi), 0, int64(p.gen))
	}
	deg := u < s.P.PoolSize || up&p.cur != s.ceph.full
	remapped := false
	if st == stActive && p.rec == 0 && p.back != noBack {
		remapped = s.startBackfillBack(pi)
	}
	if st == stActive && !deg && p.rec == 0 && !remapped {
		st = stClean
	}
	s.setPGState(pi, st, deg)
}

func (s *Sim) pgRecovered(pi int, gen uint32) {
	p := &s.pgs[pi]
	if p.gen != gen || p.rec == 0 {
		return
	}
	done := p.rec & s.pgUp(p)
	s.metrics.MovedMB += float64(p.recMB)
	p.cur |= done
	p.data |= done
	p.rec = 0
	s.release(pi)
	s.pgSettle(pi)
}

func (s *Sim) pgStuck(pi int, since uint32) {
	p := &s.pgs[pi]
	if !p.state.active() && !p.stuck && uint32(p.inactiveSince) == since {
		p.stuck = true
		s.ceph.nStuck++
	}
}

// pgBlocked recomputes whether active PG pi's I/O blocks: an OSD of its
// acting set is up in the map but cannot serve (dead, cut off, or without
// a network). With quorum it lasts until the OSD is marked down
// (osd_heartbeat_grace); without, the frozen map keeps it.
func (s *Sim) pgBlocked(pi int) {
	p := &s.pgs[pi]
	b := false
	if p.state.active() {
		for k := 0; k < s.P.PoolSize; k++ {
			if o := p.slot[k]; o >= 0 && s.osds[o].up && !s.osds[o].canUp {
				b = true
				break
			}
		}
	}
	if b != p.blocked {
		p.blocked = b
		if b {
			s.ceph.nBlocked++
		} else {
			s.ceph.nBlocked--
		}
	}
}

func (s *Sim) setPGState(pi int, st pgState, deg bool) {
	p := &s.pgs[pi]
	if old := p.state; old != st {
		s.ceph.nState[old]--
		s.ceph.nState[st]++
		p.state = st
		if old.active() && !st.active() {
			s.ceph.nInactive++
			p.inactiveSince = s.now
			s.schedule(s.now+s.P.MonPGStuckThreshold, evPGStuck, int32(pi), 0, int64(uint32(s.now)))
		} else if !old.active() && st.active() {
			s.ceph.nInactive--
			if p.stuck {
				p.stuck = false
				s.ceph.nStuck--
			}
		}
	}
	if deg != p.degraded {
		p.degraded = deg
		if deg {
			s.ceph.nDegraded++
		} else {
			s.ceph.nDegraded--
		}
	}
	s.pgBlocked(pi)
}

// wipe destroys the data on machine i's OSDs (delete-with-wipe fence).
func (s *Sim) wipe(i int) {
	for _, oi := range s.machines[i].osds {
		s.cancelBack(int(oi))
		for _, pi := range s.osds[oi].away {
			p := &s.pgs[pi]
			if k := homeSlot(p, int(oi)); k >= 0 {
				p.homeStale[k] = -1
			}
		}
		for _, pi := range s.osds[oi].pgs {
			p := &s.pgs[pi]
			bit := uint8(1) << slotOf(p, int(oi))
			p.cur &^= bit
			p.data &^= bit
			if p.cur == 0 {
				s.violate(4, fmt.Sprintf("PG %d lost its last replica with the latest writes when %s was wiped", pi, s.machines[i].Name))
			}
			s.pgChanged(int(pi))
		}
	}
}
