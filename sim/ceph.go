package sim

import "fmt"

// This file holds Ceph's OSD rules: failure detection (heartbeat grace and
// reporters, the report timeout), down→out with mon_osd_min_in_ratio, the
// noout flag and the subtree limit (flags.go, domains.go), and PG placement
// in the pool's failure domain. Quorum and health are in health.go, PG
// peering, states and recovery in pgs.go, backfill reservations in
// recovery.go, mapping back in remap.go. Nothing here iterates over all
// PGs: a change to an OSD touches only its PGs.

// maxSize is the largest supported pool size.
const maxSize = 4

// OSD is one ceph-osd daemon and its map state.
type OSD struct {
	m       int32
	up      bool
	in      bool
	autoOut bool
	canUp   bool
	beacon  bool // the daemon runs and reaches the mons
	silent  Time // when beacons stopped
	gen     int32
	downGen int32
	failAt  Time
	pgs     []int32
	// recovery reservations (recovery.go): remote ones as a target,
	// local ones as a primary, and the PGs waiting for each
	backfills, localBackfills int
	waiting, lwaiting         []pgWait
	// PGs remapped away from this OSD while it was out, and PGs backfilling
	// back onto it since it came back in (remap.go)
	away    []int32
	backPGs []int32
	// flapping (flags.go)
	mdLog    [16]Time // markdowns the daemon saw (ring)
	mdN      uint8
	selfStop bool // stopped itself after too many markdowns
	stopGen  int32
	// the daemon process: it dies with its host; one marked down while it
	// ran but could not reach the mons sees the markdown when it does
	// (mdPending); the mon's laggy stats of the OSD (flags.go)
	procDead      bool
	mdPending     bool
	downSame      bool // marked down while this process ran
	laggyProb     float64
	laggyInterval float64 // seconds
	downStamp     Time
	held          bool // down but kept in (noout or subtree limit)
	// blocksPeering: a PG could not peer because this up OSD was unreachable
	blocksPeering bool
}

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
	resv          [maxSize]int32 // OSDs holding a remote recovery reservation for this PG (-1: none)
	homeStale     [maxSize]Time  // since when the home OSD's copy misses writes (remap.go; -1: no data)
	home          [maxSize]int32 // CRUSH's OSD for the slot while it is remapped away (remap.go; -1: none)
	back          [maxSize]int32 // a returned home OSD the slot backfills onto (remap.go; -1: none)
	bf            uint8          // slots backfilling onto back[k]
	rwait         bool           // waits for norebalance to go (flags.go)
	recMB         float32        // data the running recovery or backfill moves
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
	stuck         bool
}

type cephState struct {
	quorum       bool
	mons         []int32
	monEmpty     []bool // the mon's store was lost: it rejoins only by syncing from a quorum
	monSyncing   []bool
	monSyncGen   []int32
	monsUp       int
	nOSDs        int
	nIn          int
	nDownIn      int
	healthyHosts int
	nState       [numPGStates]int
	nInactive    int
	nBlocked     int // active PGs whose I/O blocks on an acting OSD up in the map that cannot serve
	nDegraded    int
	nStuck       int
	full         uint8
	flags        uint8   // OSD map flags (flags.go)
	rebalWait    []int32 // PGs whose backfill norebalance paused
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (s *Sim) initCeph() {
	c := s.cfg.Cluster
	n := c.Machines * c.OSDsPerMachine
	s.osds = make([]OSD, n)
	s.ceph.nOSDs, s.ceph.nIn = n, n
	for i := range s.osds {
		o := &s.osds[i]
		o.m = int32(i / c.OSDsPerMachine)
		o.up, o.in, o.canUp, o.beacon = true, true, true, true
		m := &s.machines[o.m]
		m.osds = append(m.osds, int32(i))
		m.upOSDs++
		m.healthy++
	}
	for i := range s.machines {
		if s.machines[i].healthy > 0 {
			s.ceph.healthyHosts++
		}
	}
	for i := 0; i < c.Mons; i++ {
		h := i
		if len(c.MonsOn) > 0 {
			h = c.MonsOn[i]
		}
		s.ceph.mons = append(s.ceph.mons, int32(h))
		s.ceph.monEmpty = append(s.ceph.monEmpty, false)
		s.ceph.monSyncGen = append(s.ceph.monSyncGen, 0)
		s.ceph.monSyncing = append(s.ceph.monSyncing, false)
		s.machines[h].mon = i
	}
	for i := range s.osds {
		s.countUp(i, 1)
	}
	s.ceph.monsUp, s.ceph.quorum = c.Mons, true
	size := s.P.PoolSize
	s.ceph.full = uint8(1<<size - 1)
	if n == 0 {
		c.PGs = 0
	}
	s.pgs = make([]PG, c.PGs)
	per := (c.PGs*size)/max(n, 1) + 8
	for i := range s.osds {
		s.osds[i].pgs = make([]int32, 0, per)
	}
	for pi := range s.pgs {
		p := &s.pgs[pi]
		for k := range p.slot {
			p.slot[k], p.resv[k], p.home[k], p.back[k] = -1, -1, -1, -1
		}
		p.lresv = -1
		for k := 0; k < size; k++ {
			o := s.chooseOSD(pi, p, k)
			p.slot[k] = int32(o)
			s.osds[o].pgs = append(s.osds[o].pgs, int32(pi))
		}
		p.cur, p.data = s.ceph.full, s.ceph.full
	}
	s.ceph.nState[stClean] = c.PGs
}

// chooseOSD picks an "in" OSD for slot k of PG pi on a host no other slot
// uses, walking a per-PG pseudo-random host sequence (a stand-in for CRUSH
// straw2 with a host failure domain). It returns -1 when no host qualifies.
func (s *Sim) chooseOSD(pi int, p *PG, k int) int {
	nh := len(s.machines)
	per := s.cfg.Cluster.OSDsPerMachine
	for try := 0; try < 4*nh+8; try++ {
		hv := splitmix(uint64(pi)<<20 ^ uint64(try))
		var h int
		if try < 3*nh {
			h = int(hv % uint64(nh))
		} else {
			h = (try - 3*nh) % nh
		}
		if !s.domainFree(p, k, h) || s.machines[h].phase == PhaseGone {
			continue
		}
		start := int((hv >> 32) % uint64(per))
		for r := 0; r < per; r++ {
			o := h*per + (start+r)%per
			if s.osds[o].in {
				return o
			}
		}
	}
	return -1
}

func (s *Sim) osdCanUp(o *OSD) bool {
	m := &s.machines[o.m]
	return m.alive() && !m.storageFenced && !o.selfStop && !m.osdCrashed && m.link[linkPublic] && m.link[linkCluster] && !s.oosEvicted(m)
}

// oosEvicted reports whether machine m's OSD pods are gone because of the
// out-of-service taint: its kubelet is back and killed them, and they
// cannot be scheduled there until the taint is removed (oos.go).
func (s *Sim) oosEvicted(m *Machine) bool { return m.tainted && m.hbOK }

// serving reports whether OSD i may serve client I/O: its daemon runs, it
// is not blocklisted, it reaches the public network and the map says up.
func (s *Sim) serving(i int) bool {
	o := &s.osds[i]
	m := &s.machines[o.m]
	return o.up && m.alive() && !m.storageFenced && m.link[linkPublic]
}

func (s *Sim) hostHealth(o *OSD, was bool) {
	now := o.up && o.canUp
	if now == was {
		return
	}
	m := &s.machines[o.m]
	if now {
		m.healthy++
		if m.healthy == 1 {
			s.ceph.healthyHosts++
		}
	} else {
		m.healthy--
		if m.healthy == 0 {
			s.ceph.healthyHosts--
		}
	}
}

func (s *Sim) osdReeval(i int) {
	o := &s.osds[i]
	m := &s.machines[o.m]
	if !m.alive() || m.osdCrashed {
		// the daemon dies with its host, or crashed; a new one starts when
		// it is back
		o.selfStop, o.procDead, o.mdPending = false, true, false
	} else if o.procDead {
		o.procDead, o.mdN, o.downSame = false, 0, false
	}
	if bc := m.alive() && m.link[linkPublic] && !m.storageFenced && !o.selfStop && !m.osdCrashed && !s.oosEvicted(m); bc != o.beacon {
		o.beacon = bc
		o.silent = s.now
		if !bc && o.up {
			// Beacons stop: the mon marks it down after the report timeout
			// even when no peer can report it.
			s.schedule(s.now+s.P.MonOSDReportTimeout, evOSDReportTimeout, int32(i), o.gen, int64(o.downGen))
		}
	}
	c := s.osdCanUp(o)
	if c == o.canUp {
		s.seeMarkdown(i)
		return
	}
	was := o.up && o.canUp
	o.canUp = c
	o.gen++
	s.hostHealth(o, was)
	if o.up {
		for _, p := range o.pgs {
			s.pgBlocked(int(p))
		}
	}
	if !c {
		o.failAt = s.now
		switch {
		case o.up && s.connRefused(o):
			// the daemon died on a live host: its peers' next heartbeat
			// is refused and they report it at once
			// (osd_fast_fail_on_connection_refused)
			s.schedule(s.now+s.jit(s.P.OSDHeartbeatInterval), evOSDMarkDown, int32(i), o.gen, fastFail)
		case o.up:
			s.schedule(s.now+s.P.OSDHeartbeatGrace, evOSDMarkDown, int32(i), o.gen, 0)
		}
	} else if !o.up {
		s.schedule(s.now+s.jit(s.P.OSDBootTime), evOSDBoot, int32(i), o.gen, 0)
	} else if o.blocksPeering {
		o.blocksPeering = false
		for _, p := range o.pgs {
			if s.pgs[p].state == stPeering && !s.pgs[p].peering {
				s.pgChanged(int(p))
			}
		}
	}
	s.seeMarkdown(i)
}

func (s *Sim) osdBoot(i int, gen int32) {
	o := &s.osds[i]
	if o.gen == gen && o.canUp && !o.up && s.ceph.quorum {
		s.markUp(i)
	}
}

func (s *Sim) osdDownOut(i int, gen int32) {
	o := &s.osds[i]
	if o.downGen != gen || o.up || !o.in {
		return
	}
	if !s.ceph.quorum || float64(s.ceph.nIn) < s.P.MonOSDMinInRatio*float64(s.ceph.nOSDs) || s.outHeld(i) {
		s.schedule(s.monTick(s.now+1), evOSDOut, int32(i), gen, 0)
		return
	}
	s.markOut(i)
}

// monTick is the leader mon's first tick at or after t: OSDMonitor::tick
// marks down OSDs out, every mon_tick_interval from the mon's start (the
// run's start), once they have been down mon_osd_down_out_interval.
func (s *Sim) monTick(t Time) Time {
	T := s.P.MonTickInterval
	return (t + T - 1) / T * T
}

func (s *Sim) markDown(i int, why string) {
	o := &s.osds[i]
	was := o.up && o.canUp
	o.up = false
	o.downGen++
	s.countUp(i, -1)
	s.hostHealth(o, was)
	if o.in {
		s.ceph.nDownIn++
	}
	m := &s.machines[o.m]
	m.upOSDs--
	if s.rec != nil {
		s.logf("ceph", "osd.%d down (%s)", i, why)
	}
	for _, p := range o.pgs {
		s.pgChanged(int(p))
	}
	for _, p := range o.backPGs {
		s.pgChanged(int(p))
	}
	s.schedule(s.monTick(s.now+s.P.MonOSDDownOutInterval), evOSDOut, int32(i), o.downGen, 0)
	s.metrics.Markdowns++
	o.downStamp, o.downSame = s.now, !o.procDead
	if s.P.OSDMaxMarkdownCount > 0 && !o.procDead && m.alive() && !o.selfStop {
		// the daemon runs: it sees the markdown now, or when it reaches
		// the mons again (seeMarkdown)
		o.mdPending = true
		s.seeMarkdown(i)
	}
	s.livenessUpdate(int(o.m))
}

func (s *Sim) markUp(i int) {
	o := &s.osds[i]
	o.up = true
	s.laggyBoot(o)
	s.countUp(i, 1)
	s.hostHealth(o, false)
	if o.in {
		s.ceph.nDownIn--
	}
	m := &s.machines[o.m]
	m.upOSDs++
	if s.rec != nil {
		s.logf("ceph", "osd.%d up", i)
	}
	if !o.in && o.autoOut {
		o.in, o.autoOut = true, false
		s.ceph.nIn++
		if s.rec != nil {
			s.logf("ceph", "osd.%d in (auto-marked out earlier)", i)
		}
		s.markIn(i)
	}
	for _, p := range o.pgs {
		s.pgChanged(int(p))
	}
	for _, p := range o.backPGs {
		s.pgChanged(int(p))
	}
	s.livenessUpdate(int(o.m))
	s.backCheck(int(o.m))
}

// markOut marks a down OSD out and remaps its PGs: each slot moves to an OSD
// on a host the PG does not use yet, which must then backfill. A slot whose
// OSD has the latest writes stays when no up replica has them (the PG is
// down and Ceph waits for that OSD rather than forget it).
func (s *Sim) markOut(i int) {
	o := &s.osds[i]
	o.in, o.autoOut = false, true
	s.ceph.nIn--
	s.ceph.nDownIn--
	s.cancelBack(i)
	moved := 0
	for j := len(o.pgs) - 1; j >= 0; j-- {
		pi := int(o.pgs[j])
		p := &s.pgs[pi]
		k := slotOf(p, i)
		bit := uint8(1) << k
		if p.cur&bit != 0 && (p.cur&^bit)&s.pgUp(p) == 0 {
			continue
		}
		no := s.chooseOSD(pi, p, k)
		if no < 0 || no == i {
			continue
		}
		stale := s.replicaStale(p, k)
		p.slot[k] = int32(no)
		p.cur &^= bit
		p.data &^= bit
		o.pgs[j] = o.pgs[len(o.pgs)-1]
		o.pgs = o.pgs[:len(o.pgs)-1]
		s.osds[no].pgs = append(s.osds[no].pgs, int32(pi))
		s.noteRemap(pi, k, i, no, stale)
		moved++
		s.pgChanged(pi)
	}
	if s.rec != nil {
		s.logf("ceph", "osd.%d out after mon_osd_down_out_interval; %d PGs remapped", i, moved)
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func slotOf(p *PG, o int) int {
	for k, v := range p.slot {
		if int(v) == o {
			return k
		}
	}
	panic(fmt.Sprintf("sim: osd.%d not in PG slots %v", o, p.slot))
}
