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

func (c *cephCluster) flagText() string {
	var out []string
	for i, n := range flagNames {
		if c.flags&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, ",")
}

// setFlag sets or clears an OSD map flag (a controller fault).
func (c *cephCluster) setFlag(f uint8, on bool) {
	if on == (c.flags&f != 0) {
		return
	}
	if on {
		c.flags |= f
	} else {
		c.flags &^= f
	}
	if c.rec != nil {
		c.logf("ceph", "osd map flags: [%s]", c.flagText())
	}
	if !on && f == flagNoRebalance {
		c.pgs.rebalanceResumed()
	}
}

// outHeld reports whether the mon must not mark down OSD i out now: the
// noout flag, or a whole down subtree at or above
// mon_osd_down_out_subtree_limit.
func (c *cephCluster) outHeld(i int) bool {
	o := &c.osds[i]
	why := ""
	if c.flags&flagNoOut != 0 {
		why = "noout flag"
	} else if t, down := c.subtreeDown(i); down {
		why = "whole " + t.String() + " down (mon_osd_down_out_subtree_limit " + c.P.MonOSDDownOutSubtreeLimit.String() + ")"
	}
	if why != "" && !o.held && c.rec != nil {
		c.logf("ceph", "osd.%d down but not marked out: %s", i, why)
	}
	o.held = why != ""
	return o.held
}

// seeMarkdown: a running daemon marked down (mdPending) sees it once it
// reaches the mons - at once, or when its network returns.
func (c *cephCluster) seeMarkdown(i int) {
	if o := &c.osds[i]; o.mdPending && o.beacon && !o.up {
		o.mdPending = false
		c.wronglyDown(i)
	}
}

// wronglyDown: OSD i was marked down while its daemon runs and reaches the
// mons. It logs the markdown and boots again, or stops itself.
func (c *cephCluster) wronglyDown(i int) {
	o := &c.osds[i]
	c.watch.metrics.WronglyDown++
	n := 1
	for _, t := range o.mdLog[:min(int(o.mdN), len(o.mdLog))] {
		if c.now-t < c.P.OSDMaxMarkdownPeriod {
			n++
		}
	}
	o.mdLog[int(o.mdN)%len(o.mdLog)] = c.now
	o.mdN++
	if n > c.P.OSDMaxMarkdownCount {
		o.selfStop = true
		o.stopGen++
		c.watch.metrics.SelfStops++
		if c.rec != nil {
			c.logf("ceph", "osd.%d: marked down %d times in %s > osd_max_markdown_count %d: the daemon stops itself", i, n, c.P.OSDMaxMarkdownPeriod.Dur(), c.P.OSDMaxMarkdownCount)
		}
		c.at(c.now+c.P.OSDRestartBackoff, evOSDRestart, i, o.stopGen)
		c.osdReeval(i)
		return
	}
	if c.rec != nil {
		c.logf("ceph", "osd.%d: \"wrongly marked me down\" (%d in %s): boots again", i, n, c.P.OSDMaxMarkdownPeriod.Dur())
	}
	c.at(c.now+c.jit(c.P.OSDBootTime), evOSDReassert, i, o.downGen)
}

// osdReassert: the wrongly marked-down OSD's boot reaches the mon.
func (c *cephCluster) osdReassert(i int, downGen int32) {
	o := &c.osds[i]
	if o.downGen != downGen || o.up || !o.beacon || !c.quorum {
		return
	}
	c.markUp(i)
	if !o.canUp {
		// its peers still miss its heartbeats: a new failure
		o.failAt = c.now
		c.at(c.now+c.P.OSDHeartbeatGrace, evOSDFailure, i, o.gen)
	}
}

// osdRestart: the self-stopped daemon's container restarts.
func (c *cephCluster) osdRestart(i int, gen int32) {
	o := &c.osds[i]
	if o.stopGen != gen || !o.selfStop {
		return
	}
	o.selfStop = false
	o.mdN, o.downSame = 0, false // a new daemon
	c.osdReeval(i)
	if !o.up && o.beacon && !o.canUp {
		c.at(c.now+c.jit(c.P.OSDBootTime), evOSDReassert, i, o.downGen)
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
func (c *cephCluster) laggyBoot(o *OSD) {
	w := c.P.MonOSDLaggyWeight
	if o.downSame && o.downStamp > 0 {
		iv := float64(c.now-o.downStamp) / float64(Second)
		if mx := float64(c.P.MonOSDLaggyMaxInterval) / float64(Second); mx > 0 {
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

// heartbeatGrace is how long OSD o must have failed, once it has failed for
// failedFor, before the mon can mark it down: osd_heartbeat_grace (grown
// for a laggy OSD) and the lag of noticing it. The first ping it left
// unanswered went out up to an osd_heartbeat_interval after it stopped,
// and its peers notice the missed deadline at their next heartbeat check
// (both every 0.5-1.5 interval: an interval together on average); they
// report failed_for in whole seconds and the mon waits for reporters on
// two hosts (about a second more). Those paces are random: a drawn
// reportLag (0-ReportSpread) adds their spread. The calibration's hangs
// were marked down 1.1-4.7 s after the grace with 1-s heartbeats.
func (c *cephCluster) heartbeatGrace(o *OSD, failedFor Time) Time {
	g := c.P.OSDHeartbeatGrace + c.P.OSDHeartbeatInterval + Second + o.reportLag
	if !c.P.MonOSDAdjustHeartbeatGrace || o.laggyProb == 0 {
		return g
	}
	decay := math.Exp(float64(failedFor) / float64(c.P.MonOSDLaggyHalflife) * math.Log(0.5))
	return g + Time(decay*o.laggyInterval*o.laggyProb*float64(Second))
}
