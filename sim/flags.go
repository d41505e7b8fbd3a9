package sim

import (
	"math"
	"strings"
)

// OSD map flags and OSD flapping.
//
// Flags: `ceph osd set noout` keeps the mon from marking down OSDs out
// (no backfill onto other hosts; the down→out timer resumes when the flag
// goes); `ceph osd set norebalance` pauses backfill of PGs that are only
// misplaced (here: the backfill back onto a returned OSD), not the
// recovery of degraded PGs. Either flag raises OSDMAP_FLAGS, so Ceph is
// HEALTH_WARN while it is set. The flags are controller faults in the
// fault table (set-noout/unset-noout, set-norebalance/unset-norebalance).
//
// Flapping: an OSD whose daemon runs and reaches the mons but whose peers
// lose its heartbeats (cluster network cut) is marked down on their
// reports, sees itself marked down in the new map ("wrongly marked me
// down"), and boots again: up, reported, down, up... Each markdown it sees
// goes into its markdown log; more than osd_max_markdown_count within
// osd_max_markdown_period and the daemon stops itself. It stays stopped
// until its container restarts (osdRestartBackoff, the kubelet's
// CrashLoopBackOff) or its host restarts.

// OSD map flags.
const (
	flagNoOut uint8 = 1 << iota
	flagNoRebalance
)

var flagNames = []string{"noout", "norebalance"}

func (s *Sim) flagText() string {
	var out []string
	for i, n := range flagNames {
		if s.ceph.flags&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}

// setFlag sets or clears an OSD map flag (a controller fault).
func (s *Sim) setFlag(f uint8, on bool) {
	if on == (s.ceph.flags&f != 0) {
		return
	}
	if on {
		s.ceph.flags |= f
	} else {
		s.ceph.flags &^= f
	}
	if s.rec != nil {
		s.logf("ceph", "osd map flags: [%s]", s.flagText())
	}
	if !on && f == flagNoRebalance {
		w := s.ceph.rebalWait
		s.ceph.rebalWait = nil
		for _, pi := range w {
			p := &s.pgs[pi]
			p.rwait = false
			if !p.peering && p.rec == 0 && p.bf == 0 && p.state.active() {
				s.pgSettle(int(pi))
			}
		}
	}
}

// outHeld reports whether the mon must not mark down OSD i out now: the
// noout flag, or a whole down subtree at or above
// mon_osd_down_out_subtree_limit.
func (s *Sim) outHeld(i int) bool {
	o := &s.osds[i]
	why := ""
	if s.ceph.flags&flagNoOut != 0 {
		why = "noout flag"
	} else if t, down := s.subtreeDown(i); down {
		why = "whole " + t.String() + " down (mon_osd_down_out_subtree_limit " + s.P.MonOSDDownOutSubtreeLimit.String() + ")"
	}
	if why != "" && !o.held && s.rec != nil {
		s.logf("ceph", "osd.%d down but not marked out: %s", i, why)
	}
	o.held = why != ""
	return o.held
}

// seeMarkdown: a running daemon marked down (mdPending) sees it once it
// reaches the mons - at once, or when its network returns.
func (s *Sim) seeMarkdown(i int) {
	if o := &s.osds[i]; o.mdPending && o.beacon && !o.up {
		o.mdPending = false
		s.wronglyDown(i)
	}
}

// wronglyDown: OSD i was marked down while its daemon runs and reaches the
// mons. It logs the markdown and boots again, or stops itself.
func (s *Sim) wronglyDown(i int) {
	o := &s.osds[i]
	s.metrics.WronglyDown++
	n := 1
	for _, t := range o.mdLog[:min(int(o.mdN), len(o.mdLog))] {
		if s.now-t < s.P.OSDMaxMarkdownPeriod {
			n++
		}
	}
	o.mdLog[int(o.mdN)%len(o.mdLog)] = s.now
	o.mdN++
	if n > s.P.OSDMaxMarkdownCount {
		o.selfStop = true
		o.stopGen++
		s.metrics.SelfStops++
		if s.rec != nil {
			s.logf("ceph", "osd.%d: marked down %d times in %s > osd_max_markdown_count %d: the daemon stops itself", i, n, s.P.OSDMaxMarkdownPeriod.Dur(), s.P.OSDMaxMarkdownCount)
		}
		s.schedule(s.now+s.P.OSDRestartBackoff, evOSDRestart, int32(i), o.stopGen, 0)
		s.osdReeval(i)
		return
	}
	if s.rec != nil {
		s.logf("ceph", "osd.%d: \"wrongly marked me down\" (%d in %s): boots again", i, n, s.P.OSDMaxMarkdownPeriod.Dur())
	}
	s.schedule(s.now+s.jit(s.P.OSDBootTime), evOSDReassert, int32(i), o.downGen, 0)
}

// osdReassert: the wrongly marked-down OSD's boot reaches the mon.
func (s *Sim) osdReassert(i int, downGen int32) {
	o := &s.osds[i]
	if o.downGen != downGen || o.up || !o.beacon || !s.ceph.quorum {
		return
	}
	s.markUp(i)
	if !o.canUp {
		// its peers still miss its heartbeats: a new failure
		o.failAt = s.now
		s.schedule(s.now+s.P.OSDHeartbeatGrace, evOSDMarkDown, int32(i), o.gen, 0)
	}
}

// osdRestart: the self-stopped daemon's container restarts.
func (s *Sim) osdRestart(i int, gen int32) {
	o := &s.osds[i]
	if o.stopGen != gen || !o.selfStop {
		return
	}
	o.selfStop = false
	o.mdN, o.downSame = 0, false // a new daemon
	s.osdReeval(i)
	if !o.up && o.beacon && !o.canUp {
		s.schedule(s.now+s.jit(s.P.OSDBootTime), evOSDReassert, int32(i), o.downGen, 0)
	}
}

// Laggy grace (OSDMonitor, mon_osd_adjust_heartbeat_grace): the mon keeps
// per-OSD laggy statistics. When an OSD that was marked down boots again in
// the same process (it was up all along: laggy), laggy_interval moves
// toward how long it was down (at most mon_osd_laggy_max_interval) and
// laggy_probability toward 1, by mon_osd_laggy_weight; a fresh daemon
// decays both. The grace its failure needs is then osd_heartbeat_grace +
// decay x laggy_interval x laggy_probability, decay halving every
// mon_osd_laggy_halflife of the failure: a flapping OSD stays up in the map
// longer (its PGs block instead of re-peering) and is marked down less often.

// laggyBoot updates OSD o's laggy statistics as it is marked up.
func (s *Sim) laggyBoot(o *OSD) {
	w := s.P.MonOSDLaggyWeight
	if o.downSame && o.downStamp > 0 {
		iv := float64(s.now-o.downStamp) / float64(Second)
		if mx := float64(s.P.MonOSDLaggyMaxInterval) / float64(Second); mx > 0 {
			iv = min(iv, mx)
		}
		o.laggyInterval = iv*w + o.laggyInterval*(1-w)
		o.laggyProb = w + o.laggyProb*(1-w)
	} else {
		o.laggyInterval *= 1 - w
		o.laggyProb *= 1 - w
	}
	o.downSame = false
}

// heartbeatGrace is the grace OSD o's failure needs once it has failed for
// failedFor.
func (s *Sim) heartbeatGrace(o *OSD, failedFor Time) Time {
	g := s.P.OSDHeartbeatGrace
	if !s.P.MonOSDAdjustHeartbeatGrace || o.laggyProb == 0 {
		return g
	}
	decay := math.Exp(float64(failedFor) / float64(s.P.MonOSDLaggyHalflife) * math.Log(0.5))
	return g + Time(decay*o.laggyInterval*o.laggyProb*float64(Second))
}
