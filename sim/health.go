package sim

import (
	"fmt"
	"strings"
)

// Mon quorum and the health checks `ceph status` reports, computed from
// counters kept incrementally (ceph.go, pgs.go, flags.go).

// Health check bits, named as Ceph names them.
const (
	chkOSDDown uint8 = 1 << iota
	chkPGDegraded
	chkPGAvailability
	chkMonDown
	chkNoAnswer
	chkOSDMapFlags
)

// Health is the overall status `ceph status` reports.
type Health uint8

// Health levels; HealthNoAnswer means `ceph status` got no answer (no quorum).
const (
	HealthOK Health = iota
	HealthWarn
	HealthNoAnswer
)

var healthNames = []string{"HEALTH_OK", "HEALTH_WARN", "NO_ANSWER"}

// String returns Ceph's name for the status.
func (h Health) String() string { return healthNames[h] }

// monsChanged recomputes mon quorum after a mon host changed. A mon whose
// store was lost (its machine deleted; monStore) counts only after it has
// synced a new store from a quorum of the others (monSyncTime): Rook
// recreates it empty, and an empty mon cannot form a quorum (Rook's
// documented recovery from a lost quorum is manual).
func (c *cephCluster) monsChanged() {
	up := 0
	for k := range c.mons {
		if c.monRuns(k) && !c.monEmpty[k] {
			up++
		}
	}
	c.monsUp = up
	q := up*2 > len(c.mons)
	for k := range c.mons {
		if !c.monEmpty[k] {
			continue
		}
		can := q && c.monRuns(k)
		switch {
		case can && !c.monSyncing[k]:
			c.monSyncing[k] = true
			c.monSyncGen[k]++
			c.at(c.now+c.P.MonSyncTime, evMonSynced, k, c.monSyncGen[k])
		case !can && c.monSyncing[k]:
			c.monSyncing[k] = false
			c.monSyncGen[k]++
		}
	}
	if q == c.quorum {
		return
	}
	c.quorum = q
	c.clients.allChanged()
	if c.rec != nil {
		if q {
			c.logf("ceph", "mon quorum regained (%d/%d)", up, len(c.mons))
		} else {
			c.logf("ceph", "mon quorum lost (%d/%d up): the OSD map is frozen", up, len(c.mons))
		}
	}
	if !q {
		return
	}
	for i := range c.osds {
		o := &c.osds[i]
		switch {
		case o.up && !o.canUp:
			// its peers have been reporting it since its failure: the
			// new leader marks it down once the grace is over
			c.at(max(c.now, o.failAt+c.P.OSDHeartbeatGrace), evOSDFailure, i, o.gen)
		case !o.up && o.canUp:
			c.at(c.now+c.jit(c.P.OSDBootTime), evOSDBoot, i, o.gen)
		}
	}
}

// monRuns reports whether mon k runs and reaches the public network: its
// host does, and its pod was not evicted by the out-of-service taint (Rook
// pins a mon to its node, so it cannot run elsewhere meanwhile).
func (c *cephCluster) monRuns(k int) bool {
	h := int(c.mons[k])
	return c.fleet.m[h].reaches(linkPublic) && !c.kube.oosEvicted(h)
}

// monStoreLost: mon k's store is gone with its machine (deleted, or wiped).
func (c *cephCluster) monStoreLost(k int) {
	if c.monEmpty[k] {
		return
	}
	c.monEmpty[k], c.monSyncing[k] = true, false
	c.monSyncGen[k]++
	if c.rec != nil {
		c.logf("ceph", "mon on %s lost its store with the machine; it must sync from a quorum to rejoin", c.fleet.m[c.mons[k]].Name)
	}
	c.monsChanged()
}

// monSynced: empty mon k finished syncing from the quorum and rejoins.
func (c *cephCluster) monSynced(k int, gen int32) {
	m := &c.fleet.m[c.mons[k]]
	if c.monSyncGen[k] != gen || !c.monEmpty[k] || !c.quorum || !c.monRuns(k) {
		return
	}
	c.monEmpty[k], c.monSyncing[k] = false, false
	if c.rec != nil {
		c.logf("ceph", "mon on %s synced its store from the quorum and rejoins", m.Name)
	}
	c.monsChanged()
}

// health returns the status and the set of raised checks, as `ceph status`
// computes them: OSD_DOWN counts OSDs down and in; PG_DEGRADED counts
// degraded or undersized PGs; PG_AVAILABILITY counts PGs not active
// (peering, inactive, down, incomplete); MON_DOWN counts mons out of quorum.
// Without quorum there is no answer.
func (c *cephCluster) health() (Health, uint8) {
	if !c.quorum {
		return HealthNoAnswer, chkNoAnswer
	}
	var chk uint8
	if c.nDownIn > 0 {
		chk |= chkOSDDown
	}
	if c.pgs.nDegraded > 0 {
		chk |= chkPGDegraded
	}
	if c.pgs.nInactive > 0 {
		chk |= chkPGAvailability
	}
	if c.monsUp < len(c.mons) {
		chk |= chkMonDown
	}
	if c.flags != 0 {
		chk |= chkOSDMapFlags
	}
	if chk == 0 {
		return HealthOK, 0
	}
	return HealthWarn, chk
}

// allClean reports whether every PG is active+clean (Rook's gate).
func (c *cephCluster) allClean() bool { return c.pgs.nState[stClean] == len(c.pgs.pgs) }

func (c *cephCluster) healthText() string {
	h, chk := c.health()
	if h != HealthWarn {
		return h.String()
	}
	var b strings.Builder
	b.WriteString("HEALTH_WARN")
	if chk&chkOSDDown != 0 {
		fmt.Fprintf(&b, " OSD_DOWN(%d)", c.nDownIn)
	}
	if chk&chkPGDegraded != 0 {
		fmt.Fprintf(&b, " PG_DEGRADED(%d)", c.pgs.nDegraded)
	}
	if chk&chkPGAvailability != 0 {
		fmt.Fprintf(&b, " PG_AVAILABILITY(%d inactive", c.pgs.nInactive)
		if c.pgs.nStuck > 0 {
			fmt.Fprintf(&b, ", %d stuck inactive", c.pgs.nStuck)
		}
		b.WriteString(")")
	}
	if chk&chkMonDown != 0 {
		fmt.Fprintf(&b, " MON_DOWN(%d/%d)", len(c.mons)-c.monsUp, len(c.mons))
	}
	if chk&chkOSDMapFlags != 0 {
		fmt.Fprintf(&b, " OSDMAP_FLAGS(%s)", c.flagText())
	}
	return b.String()
}

// pgStats are the PG counters the mgr reports to the mons.
type pgStats struct {
	degraded, inactive, stuck, clean int
}

func (c *cephCluster) pgStatsNow() pgStats {
	return pgStats{c.pgs.nDegraded, c.pgs.nInactive, c.pgs.nStuck, c.pgs.nState[stClean]}
}

// setMgrStale freezes (or thaws) the PG stats `ceph status` reports.
func (c *cephCluster) setMgrStale(on bool) {
	if on && !c.mgrStale {
		c.pgSnap = c.pgStatsNow()
	}
	c.mgrStale = on
}

// answers reports whether the operators' ceph commands get an answer.
func (c *cephCluster) answers() bool { return c.quorum && !c.statusHang }

// observed is `ceph status` as a controller sees it: no answer without
// quorum or while its commands hang; the PG checks (PG_DEGRADED,
// PG_AVAILABILITY) from the mgr's last stats, frozen while the mgr is
// stale; the mon's own checks (OSD_DOWN, MON_DOWN, OSDMAP_FLAGS) live.
// Invariants and metrics use the true health.
func (c *cephCluster) observed() (Health, pgStats) {
	if !c.answers() {
		return HealthNoAnswer, pgStats{}
	}
	pg := c.pgStatsNow()
	if c.mgrStale {
		pg = c.pgSnap
	}
	if c.nDownIn > 0 || pg.degraded > 0 || pg.inactive > 0 || c.monsUp < len(c.mons) || c.flags != 0 {
		return HealthWarn, pg
	}
	return HealthOK, pg
}
