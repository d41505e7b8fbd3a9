package sim

import "fmt"

// This file holds Ceph's OSD rules: the daemons and their map state
// (up/in), down→out with mon_osd_min_in_ratio, the noout flag and the
// subtree limit (flags.go, domains.go). Failure detection is in detect.go,
// quorum and health in health.go, the client blocklist in blocklist.go;
// the PGs (peering, states, recovery, mapping back) are the pgMap's
// (pgs.go, recovery.go, remap.go). Nothing here iterates over all PGs: a
// change to an OSD touches only its PGs.

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
	// reportLag is this failure's reports' delay past the grace
	// (ReportSpread)
	reportLag Time
	pgs       []int32
	// recovery reservations (recovery.go): remote ones as a target,
	// local ones as a primary, and the PGs waiting for each
	backfills, localBackfills int
	waiting, lwaiting         waitQueue
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
	// oldInstance: a new daemon runs while the map still has the dead one
	// up (the mons had no quorum, or had not marked it down yet); it boots
	// as a new instance once the mon marks the old one down
	oldInstance bool
	// missSince is since when the OSD, up in the map or marked down since,
	// has not applied its PGs' writes (-1: it serves): the primaries apply
	// and log writes it never acknowledges, and it recovers them when it
	// is back
	missSince Time
	upAt      Time // when it was last marked up
}

// cephEventKind names an event of the Ceph cluster's mons and daemons.
type cephEventKind uint8

const (
	evOSDBoot          cephEventKind = iota // a starting OSD's boot reaches the mon
	evOSDFailure                            // peers report an OSD (after the grace, or at once)
	evOSDReportTimeout                      // the mon has had no beacon for mon_osd_report_timeout
	evOSDDownOut                            // the mon's first tick mon_osd_down_out_interval after the markdown
	evOSDReassert                           // a wrongly marked-down OSD's boot reaches the mon
	evOSDRestart                            // a self-stopped daemon's container restarts
	evMonSynced                             // an empty mon finished syncing its store
	evBlocklistExpired                      // a client address's blocklist entry expires
)

// failureReport is how peers report an OSD's failure.
type failureReport uint8

const (
	reportGrace    failureReport = iota // heartbeats missed for the grace
	reportAgain                         // still missing; more reporters may exist now
	reportFastFail                      // heartbeats refused: the daemon is gone
)

// cephEvent is an event of the mons and daemons: id is the OSD (the mon,
// or the machine of a blocklist entry), gen the generation it was
// scheduled for, how the failure report, until a blocklist entry's expiry.
type cephEvent struct {
	kind  cephEventKind
	id    int32
	gen   int32
	how   failureReport
	until Time
}

// cephCluster is the Ceph cluster's mons and OSD daemons: the OSD map,
// quorum, health, flags and the client blocklist. Its PGs are the pgMap.
type cephCluster struct {
	*core
	events  mailbox[cephEvent]
	fleet   *fleet
	kube    *kube
	pgs     *pgMap
	clients *rbdClients
	watch   *monitor

	osds     []OSD
	topo     topology
	hostOSDs [][]int32    // per machine: its OSDs
	upOSDs   []int        // per machine: OSDs up in the map
	healthy  []int        // per machine: OSDs up and able to serve
	hostMon  []int        // per machine: its mon (-1: none)
	cutOff   []bool       // per machine: safe cut it off (its OSDs blocklisted)
	blocks   []blockEntry // per machine: the blocklist entry of its client address

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
	flags        uint8 // OSD map flags (flags.go)
	// statusHang: the operators' ceph commands hang; mgrStale: the PG
	// stats `ceph status` reports are frozen at pgSnap (health.go)
	statusHang bool
	mgrStale   bool
	pgSnap     pgStats
}

func (c *cephCluster) handle(e cephEvent) {
	i := int(e.id)
	switch e.kind {
	case evOSDBoot:
		c.osdBoot(i, e.gen)
	case evOSDFailure:
		c.osdFailureReported(i, e.gen, e.how)
	case evOSDReportTimeout:
		c.osdReportTimeout(i, e.gen)
	case evOSDDownOut:
		c.osdDownOut(i, e.gen)
	case evOSDReassert:
		c.osdReassert(i, e.gen)
	case evOSDRestart:
		c.osdRestart(i, e.gen)
	case evMonSynced:
		c.monSynced(i, e.gen)
	case evBlocklistExpired:
		c.blockExpire(i, e.until)
	}
}

func (c *cephCluster) at(t Time, k cephEventKind, id int, gen int32) {
	c.events.at(t, cephEvent{kind: k, id: int32(id), gen: gen})
}

func (c *cephCluster) init() {
	cl := c.cfg.Cluster
	nm := len(c.fleet.m)
	c.initTopology()
	n := cl.Machines * cl.OSDsPerMachine
	c.osds = make([]OSD, n)
	c.hostOSDs = make([][]int32, nm)
	c.upOSDs, c.healthy, c.hostMon = make([]int, nm), make([]int, nm), make([]int, nm)
	c.cutOff, c.blocks = make([]bool, nm), make([]blockEntry, nm)
	for i := range c.hostMon {
		c.hostMon[i] = -1
	}
	c.nOSDs, c.nIn = n, n
	for i := range c.osds {
		o := &c.osds[i]
		o.m = int32(i / cl.OSDsPerMachine)
		o.up, o.in, o.canUp, o.beacon = true, true, true, true
		o.missSince = -1
		c.hostOSDs[o.m] = append(c.hostOSDs[o.m], int32(i))
		c.upOSDs[o.m]++
		c.healthy[o.m]++
	}
	for i := 0; i < nm; i++ {
		if c.healthy[i] > 0 {
			c.healthyHosts++
		}
	}
	for i := 0; i < cl.Mons; i++ {
		h := i
		if len(cl.MonsOn) > 0 {
			h = cl.MonsOn[i]
		}
		c.mons = append(c.mons, int32(h))
		c.monEmpty = append(c.monEmpty, false)
		c.monSyncGen = append(c.monSyncGen, 0)
		c.monSyncing = append(c.monSyncing, false)
		c.hostMon[h] = i
	}
	for i := range c.osds {
		c.countUp(i, 1)
	}
	c.monsUp, c.quorum = cl.Mons, true
}

func (c *cephCluster) osdCanUp(o *OSD) bool {
	m := &c.fleet.m[o.m]
	return m.alive() && !c.cutOff[o.m] && !o.selfStop && !m.osdCrashed && m.link[linkPublic] && m.link[linkCluster] && !c.kube.oosEvicted(int(o.m)) && !o.oldInstance
}

// serving reports whether OSD i may serve client I/O: its daemon runs
// (its host is up and it neither crashed, stopped itself nor was evicted),
// it is not blocklisted, it reaches the public network and the map says up.
func (c *cephCluster) serving(i int) bool {
	o := &c.osds[i]
	m := &c.fleet.m[o.m]
	return o.up && m.alive() && !o.procDead && !o.selfStop && !m.osdCrashed && !c.kube.oosEvicted(int(o.m)) && !c.cutOff[o.m] && m.link[linkPublic]
}

// hostSilent reports whether every OSD of machine i has stopped
// heartbeating to its peers (readable from the surviving OSDs without mon
// quorum).
func (c *cephCluster) hostSilent(i int) bool {
	for _, o := range c.hostOSDs[i] {
		if c.osds[o].canUp {
			return false
		}
	}
	return true
}

// hostChanged: machine i's hardware, phase or cut-off changed; its
// daemons and its mon follow.
func (c *cephCluster) hostChanged(i int) {
	for _, o := range c.hostOSDs[i] {
		c.osdReeval(int(o))
	}
	if c.hostMon[i] >= 0 {
		c.monsChanged()
	}
}

// hostReplaced: machine i is a new Machine; nothing of Ceph cut it off.
func (c *cephCluster) hostReplaced(i int) { c.cutOff[i] = false }

// hostMonStoreLost: machine i's mon (if any) lost its store with the
// machine.
func (c *cephCluster) hostMonStoreLost(i int) {
	if k := c.hostMon[i]; k >= 0 {
		c.monStoreLost(k)
	}
}

func (c *cephCluster) hostHealth(o *OSD, was bool) {
	now := o.up && o.canUp
	if now == was {
		return
	}
	if now {
		c.healthy[o.m]++
		if c.healthy[o.m] == 1 {
			c.healthyHosts++
		}
	} else {
		c.healthy[o.m]--
		if c.healthy[o.m] == 0 {
			c.healthyHosts--
		}
	}
}

func (c *cephCluster) osdReeval(i int) {
	o := &c.osds[i]
	m := &c.fleet.m[o.m]
	if !m.alive() || m.osdCrashed {
		// the daemon dies with its host, or crashed; a new one starts when
		// it is back
		o.selfStop, o.procDead, o.mdPending = false, true, false
	} else if o.procDead {
		o.procDead, o.mdN, o.downSame = false, 0, false
		o.oldInstance = o.up
	}
	if bc := m.alive() && m.link[linkPublic] && !c.cutOff[o.m] && !o.selfStop && !m.osdCrashed && !c.kube.oosEvicted(int(o.m)); bc != o.beacon {
		o.beacon = bc
		o.silent = c.now
		if !bc && o.up {
			// Beacons stop: the mon marks it down after the report timeout
			// even when no peer can report it.
			c.at(c.now+c.P.MonOSDReportTimeout, evOSDReportTimeout, i, o.downGen)
		}
	}
	can := c.osdCanUp(o)
	if can == o.canUp {
		c.seeMarkdown(i)
		return
	}
	was := o.up && o.canUp
	o.canUp = can
	o.gen++
	switch {
	case !can && o.missSince < 0:
		o.missSince = c.now
	case can && o.up:
		o.missSince = -1 // back before it was marked down: its queued messages arrive
	}
	c.hostHealth(o, was)
	if o.up {
		for _, p := range o.pgs {
			c.pgs.pgBlocked(int(p))
			c.pgs.pgStall(int(p))
		}
		for _, p := range o.backPGs {
			c.pgs.pgStall(int(p))
		}
	}
	if !can {
		o.failAt = c.now
		if c.P.ReportSpread > 0 {
			o.reportLag = Time(c.rng.Float64() * float64(c.P.ReportSpread))
		}
		switch {
		case o.up && c.connRefused(o):
			// the daemon died on a live host: its peers' next heartbeat
			// is refused and they report it at once
			// (osd_fast_fail_on_connection_refused)
			c.events.at(c.now+c.jit(c.P.OSDHeartbeatInterval), cephEvent{kind: evOSDFailure, id: int32(i), gen: o.gen, how: reportFastFail})
		case o.up:
			c.at(c.now+c.P.OSDHeartbeatGrace, evOSDFailure, i, o.gen)
		}
	} else if !o.up {
		c.at(c.now+c.jit(c.P.OSDBootTime), evOSDBoot, i, o.gen)
	} else if o.blocksPeering {
		o.blocksPeering = false
		for _, p := range o.pgs {
			if pg := &c.pgs.pgs[p]; pg.state == stPeering && !pg.peering {
				c.pgs.pgChanged(int(p))
			}
		}
	}
	c.seeMarkdown(i)
}

func (c *cephCluster) osdBoot(i int, gen int32) {
	o := &c.osds[i]
	if o.gen == gen && o.canUp && !o.up && c.quorum {
		c.markUp(i)
	}
}

func (c *cephCluster) osdDownOut(i int, gen int32) {
	o := &c.osds[i]
	if o.downGen != gen || o.up || !o.in {
		return
	}
	if !c.quorum || float64(c.nIn) < c.P.MonOSDMinInRatio*float64(c.nOSDs) || c.outHeld(i) {
		c.at(c.monTick(c.now+1), evOSDDownOut, i, gen)
		return
	}
	c.markOut(i)
}

// monTick is the leader mon's first tick at or after t: OSDMonitor::tick
// marks down OSDs out, every mon_tick_interval from the mon's start (the
// run's start), once they have been down mon_osd_down_out_interval.
func (c *cephCluster) monTick(t Time) Time {
	T := c.P.MonTickInterval
	return (t + T - 1) / T * T
}

func (c *cephCluster) markDown(i int, why string) {
	o := &c.osds[i]
	was := o.up && o.canUp
	o.up = false
	o.downGen++
	c.countUp(i, -1)
	c.hostHealth(o, was)
	if o.in {
		c.nDownIn++
	}
	c.upOSDs[o.m]--
	if c.rec != nil {
		c.logf("ceph", "osd.%d down (%s)", i, why)
	}
	for _, p := range o.pgs {
		c.pgs.pgChanged(int(p))
	}
	for _, p := range o.backPGs {
		c.pgs.pgChanged(int(p))
	}
	c.at(c.monTick(c.now+c.P.MonOSDDownOutInterval), evOSDDownOut, i, o.downGen)
	c.watch.metrics.Markdowns++
	m := &c.fleet.m[o.m]
	o.downStamp, o.downSame = c.now, !o.procDead
	if c.P.OSDMaxMarkdownCount > 0 && !o.procDead && m.alive() && !o.selfStop {
		// the daemon runs: it sees the markdown now, or when it reaches
		// the mons again (seeMarkdown)
		o.mdPending = true
		c.seeMarkdown(i)
	}
	c.watch.livenessUpdate(int(o.m))
	if o.oldInstance {
		// the dead instance is out of the map: the new daemon boots
		o.oldInstance = false
		c.osdReeval(i)
	}
}

// missedSince is since when OSD o has missed its PGs' writes: now for one
// that served until now.
func (c *cephCluster) missedSince(o int32) Time {
	if o >= 0 {
		if s := c.osds[o].missSince; s >= 0 && s < c.now {
			return s
		}
	}
	return c.now
}

func (c *cephCluster) markUp(i int) {
	o := &c.osds[i]
	o.up = true
	o.missSince, o.upAt = -1, c.now
	c.laggyBoot(o)
	c.countUp(i, 1)
	c.hostHealth(o, false)
	if o.in {
		c.nDownIn--
	}
	c.upOSDs[o.m]++
	if c.rec != nil {
		c.logf("ceph", "osd.%d up", i)
	}
	if !o.in && o.autoOut {
		o.in, o.autoOut = true, false
		c.nIn++
		if c.rec != nil {
			c.logf("ceph", "osd.%d in (auto-marked out earlier)", i)
		}
		c.pgs.markIn(i)
	}
	for _, p := range o.pgs {
		c.pgs.pgChanged(int(p))
	}
	for _, p := range o.backPGs {
		c.pgs.pgChanged(int(p))
	}
	c.watch.livenessUpdate(int(o.m))
	c.watch.backCheck(int(o.m))
}

// markOut marks a down OSD out; CRUSH remaps its PGs (pgMap.remapOut).
func (c *cephCluster) markOut(i int) {
	o := &c.osds[i]
	o.in, o.autoOut = false, true
	c.nIn--
	c.nDownIn--
	moved := c.pgs.remapOut(i)
	if c.rec != nil {
		c.logf("ceph", "osd.%d out after mon_osd_down_out_interval; %d PGs remapped", i, moved)
	}
}

func slotOf(p *PG, o int) int {
	for k, v := range p.slot {
		if int(v) == o {
			return k
		}
	}
	panic(fmt.Sprintf("sim: osd.%d not in PG slots %v", o, p.slot))
}
