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
func (s *Sim) monsChanged() {
	up := 0
	for k, mi := range s.ceph.mons {
		m := &s.machines[mi]
		if m.alive() && m.link[linkPublic] && !s.ceph.monEmpty[k] {
			up++
		}
	}
	s.ceph.monsUp = up
	q := up*2 > len(s.ceph.mons)
	for k, mi := range s.ceph.mons {
		if !s.ceph.monEmpty[k] {
			continue
		}
		m := &s.machines[mi]
		can := q && m.alive() && m.link[linkPublic]
		switch {
		case can && !s.ceph.monSyncing[k]:
			s.ceph.monSyncing[k] = true
			s.ceph.monSyncGen[k]++
			s.schedule(s.now+s.P.MonSyncTime, evMonSynced, int32(k), s.ceph.monSyncGen[k], 0)
		case !can && s.ceph.monSyncing[k]:
			s.ceph.monSyncing[k] = false
			s.ceph.monSyncGen[k]++
		}
	}
	if q == s.ceph.quorum {
		return
	}
	s.ceph.quorum = q
	s.allClients()
	if s.rec != nil {
		if q {
			s.logf("ceph", "mon quorum regained (%d/%d)", up, len(s.ceph.mons))
		} else {
			s.logf("ceph", "mon quorum lost (%d/%d up): the OSD map is frozen", up, len(s.ceph.mons))
		}
	}
	if !q {
		return
	}
	for i := range s.osds {
		o := &s.osds[i]
		switch {
		case o.up && !o.canUp:
			s.schedule(s.now+s.P.OSDHeartbeatGrace, evOSDMarkDown, int32(i), o.gen, 0)
		case !o.up && o.canUp:
			s.schedule(s.now+s.jit(s.P.OSDBootTime), evOSDBoot, int32(i), o.gen, 0)
		}
	}
}

// monStoreLost: mon k's store is gone with its machine (deleted, or wiped).
func (s *Sim) monStoreLost(k int) {
	if s.ceph.monEmpty[k] {
		return
	}
	s.ceph.monEmpty[k], s.ceph.monSyncing[k] = true, false
	s.ceph.monSyncGen[k]++
	if s.rec != nil {
		s.logf("ceph", "mon on %s lost its store with the machine; it must sync from a quorum to rejoin", s.machines[s.ceph.mons[k]].Name)
	}
	s.monsChanged()
}

// monSynced: empty mon k finished syncing from the quorum and rejoins.
func (s *Sim) monSynced(k int, gen int32) {
	m := &s.machines[s.ceph.mons[k]]
	if s.ceph.monSyncGen[k] != gen || !s.ceph.monEmpty[k] || !s.ceph.quorum || !m.alive() || !m.link[linkPublic] {
		return
	}
	s.ceph.monEmpty[k], s.ceph.monSyncing[k] = false, false
	if s.rec != nil {
		s.logf("ceph", "mon on %s synced its store from the quorum and rejoins", m.Name)
	}
	s.monsChanged()
}

// health returns the status and the set of raised checks, as `ceph status`
// computes them: OSD_DOWN counts OSDs down and in; PG_DEGRADED counts
// degraded or undersized PGs; PG_AVAILABILITY counts PGs not active
// (peering, inactive, down, incomplete); MON_DOWN counts mons out of quorum.
// Without quorum there is no answer.
func (s *Sim) health() (Health, uint8) {
	if !s.ceph.quorum {
		return HealthNoAnswer, chkNoAnswer
	}
	var c uint8
	if s.ceph.nDownIn > 0 {
		c |= chkOSDDown
	}
	if s.ceph.nDegraded > 0 {
		c |= chkPGDegraded
	}
	if s.ceph.nInactive > 0 {
		c |= chkPGAvailability
	}
	if s.ceph.monsUp < len(s.ceph.mons) {
		c |= chkMonDown
	}
	if s.ceph.flags != 0 {
		c |= chkOSDMapFlags
	}
	if c == 0 {
		return HealthOK, 0
	}
	return HealthWarn, c
}

// allClean reports whether every PG is active+clean (Rook's gate).
func (s *Sim) allClean() bool { return s.ceph.nState[stClean] == len(s.pgs) }

func (s *Sim) healthText() string {
	h, c := s.health()
	if h != HealthWarn {
		return h.String()
	}
	var b strings.Builder
	b.WriteString("HEALTH_WARN")
	if c&chkOSDDown != 0 {
		fmt.Fprintf(&b, " OSD_DOWN(%d)", s.ceph.nDownIn)
	}
	if c&chkPGDegraded != 0 {
		fmt.Fprintf(&b, " PG_DEGRADED(%d)", s.ceph.nDegraded)
	}
	if c&chkPGAvailability != 0 {
		fmt.Fprintf(&b, " PG_AVAILABILITY(%d inactive", s.ceph.nInactive)
		if s.ceph.nStuck > 0 {
			fmt.Fprintf(&b, ", %d stuck inactive", s.ceph.nStuck)
		}
		b.WriteString(")")
	}
	if c&chkMonDown != 0 {
		fmt.Fprintf(&b, " MON_DOWN(%d/%d)", len(s.ceph.mons)-s.ceph.monsUp, len(s.ceph.mons))
	}
	if c&chkOSDMapFlags != 0 {
		fmt.Fprintf(&b, " OSDMAP_FLAGS(%s)", s.flagText())
	}
	return b.String()
}

// pgStats are the PG counters the mgr reports to the mons.
type pgStats struct {
	degraded, inactive, stuck, clean int
}

func (s *Sim) pgStatsNow() pgStats {
	return pgStats{s.ceph.nDegraded, s.ceph.nInactive, s.ceph.nStuck, s.ceph.nState[stClean]}
}

// setMgrStale freezes (or thaws) the PG stats `ceph status` reports.
func (s *Sim) setMgrStale(on bool) {
	if on && !s.mgrStale {
		s.pgSnap = s.pgStatsNow()
	}
	s.mgrStale = on
}

// cephAnswers reports whether the operators' ceph commands get an answer.
func (s *Sim) cephAnswers() bool { return s.ceph.quorum && !s.statusHang }

// observed is `ceph status` as a controller sees it: no answer without
// quorum or while its commands hang; the PG checks (PG_DEGRADED,
// PG_AVAILABILITY) from the mgr's last stats, frozen while the mgr is
// stale; the mon's own checks (OSD_DOWN, MON_DOWN, OSDMAP_FLAGS) live.
// Invariants and metrics use the true health.
func (s *Sim) observed() (Health, pgStats) {
	if !s.cephAnswers() {
		return HealthNoAnswer, pgStats{}
	}
	pg := s.pgStatsNow()
	if s.mgrStale {
		pg = s.pgSnap
	}
	if s.ceph.nDownIn > 0 || pg.degraded > 0 || pg.inactive > 0 || s.ceph.monsUp < len(s.ceph.mons) || s.ceph.flags != 0 {
		return HealthWarn, pg
	}
	return HealthOK, pg
}
