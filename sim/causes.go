package sim

import (
	"fmt"
	"sort"
	"strings"
)

// What invariant 6's violations and the end-of-run blockers name as the
// cause: the first link of the chain that did not act, read from the
// state of the actor that owns it, never a guess. A machine down and
// unfenced: its remediation that cannot act (no power for the BMC), the
// policy, the storage operator (stalled, restarting, its host down), the
// MachineHealthCheck (stalled, refused by maxUnhealthy or the MDB - and
// why the MDB is 0: the health it waits for, a flag such as noout, the
// operator that writes it), or the MHC's timer (restarted by Ready
// transitions, or still running). PGs degraded: down OSDs kept in (noout,
// the subtree limit, mon_osd_min_in_ratio, no quorum) or not out yet,
// machines down, PGs blocked on OSDs the frozen map says are up, too few
// hosts, data still to move. No quorum: each missing mon and why.

// blockReason names why machine i, down, has not been fenced.
func (w *monitor) blockReason(i int) string {
	m := &w.fleet.m[i]
	switch {
	case m.remediated && m.bmh == bmhPowerOff:
		return "its reboot remediation cannot power it off: the host has no power, so its BMC does not answer"
	case w.pol.NoRemediation:
		return "the policy never fences"
	case w.pol.Grants:
		if !w.op.up {
			return "safe runs in the storage operator, which " + w.op.downReason()
		}
		if why := w.safe.g[i].why; why != "" {
			return "safe waits: " + why + w.safeCause(why)
		}
		return w.timerReason(i)
	case w.fleet.mhcStall:
		return "the MachineHealthCheck is stalled"
	case m.blocked != "":
		if strings.HasPrefix(m.blocked, "MachineDisruptionBudget") {
			why := m.blocked + ": " + w.mdbCause()
			if m.labelled && !w.op.wantLabel(i) && !w.op.up {
				why += "; its label stays: the storage operator that would remove it " + w.op.downReason()
			}
			return why
		}
		return m.blocked
	case w.pol.usesOperator() && !w.op.up && w.pol.OOSTaint:
		return "the storage operator " + w.op.downReason()
	}
	return w.timerReason(i)
}

// timerReason: the MHC (or safe, with the MHC's timeout) has not deemed
// machine i unhealthy yet.
func (w *monitor) timerReason(i int) string {
	n := &w.kube.nodes[i]
	if flips := n.readyGen - w.downEpGen[i]; flips > 1 {
		return fmt.Sprintf("its Ready condition flaps (%d transitions in this episode, the last at %s): the MachineHealthCheck's timer restarts at every transition", flips, n.readyLT)
	}
	if !n.everUp {
		return fmt.Sprintf("its Node has not been Ready since the Machine was created at %s: the MachineHealthCheck waits nodeStartupTimeout (%s)", n.readyLT, w.P.MHCNodeStartupTimeout.Dur())
	}
	if n.ready {
		return "its Node is Ready (the kubelet posts) while the host serves nothing"
	}
	return fmt.Sprintf("NotReady since %s: the MachineHealthCheck's unhealthyTimeout (%s) has not passed", n.readyLT, w.P.MHCUnhealthyTimeout.Dur())
}

// safeCause adds what lies behind a wait of safe's that names Ceph.
func (w *monitor) safeCause(why string) string {
	if strings.Contains(why, "Ceph does not answer") {
		return " (" + w.cephSilence() + ")"
	}
	return ""
}

// cephSilence says why the operators' ceph commands get no answer.
func (w *monitor) cephSilence() string {
	if !w.ceph.quorum {
		return "no mon quorum: " + w.monsOut()
	}
	if w.ceph.statusHang {
		return "the ceph commands hang (ceph-status-hang)"
	}
	return "Ceph answers"
}

// downReason says why the storage operator does not reconcile.
func (o *operator) downReason() string {
	switch {
	case o.stalled:
		return "is stalled (operator-stall)"
	case !o.started:
		return "is restarting after its pod was evicted"
	case o.host >= 0:
		h := &o.fleet.m[o.host]
		return fmt.Sprintf("runs on %s, which %s", h.Name, o.watch.hostState(o.host))
	}
	return "is down"
}

// mdbCause says why the MDB allows no disruption.
func (w *monitor) mdbCause() string {
	f := w.fleet
	if f.mdbMax > 0 {
		healthy, labelled := 0, 0
		for i := range f.m {
			if f.m[i].labelled && f.m[i].phase != PhaseGone {
				labelled++
				if w.kube.nodes[i].ready && f.m[i].phase == PhaseRunning {
					healthy++
				}
			}
		}
		return fmt.Sprintf("maxUnavailable %d is used up (%d of %d labelled machines healthy, the MachineSet expects %d)", f.mdbMax, healthy, labelled, f.scale())
	}
	var why string
	switch w.pol.Gate {
	case gateHealthOK:
		why = "its controller writes maxUnavailable 0 unless ceph status is HEALTH_OK"
	case gateAllClean:
		why = "its controller writes maxUnavailable 0 unless every PG is active+clean"
	default:
		return "maxUnavailable 0"
	}
	switch {
	case !w.op.up:
		return why + "; the storage operator that writes it " + w.op.downReason() + ", so the 0 stays"
	case !w.ceph.answers():
		return why + "; " + w.cephSilence()
	case w.pol.Gate == gateAllClean:
		why += "; " + w.pgs.summary()
		if w.ceph.flags&flagNoOut != 0 && w.ceph.nDownIn > 0 {
			why += "; the noout flag keeps the down OSDs in, so nothing backfills"
		}
		return why
	case w.ceph.flags != 0:
		return why + "; the " + w.ceph.flagText() + " flag keeps it at HEALTH_WARN (OSDMAP_FLAGS): " + w.ceph.healthText()
	}
	return why + "; " + w.ceph.healthText()
}

// hostState says what machine i's host is doing, as the cause of its
// absence.
func (w *monitor) hostState(i int) string {
	m := &w.fleet.m[i]
	switch {
	case m.phase == PhaseGone:
		return "is gone"
	case m.phase != PhaseRunning:
		return "is " + strings.ToLower(m.phase.String())
	case !m.powered && m.powerLost:
		return "has no power"
	case !m.powered || !m.booted:
		return "is booting"
	case m.hung:
		return "is hung"
	case w.ceph.cutOff[i]:
		return "is cut off from storage by safe"
	case w.kube.oosEvicted(i):
		return "lost its pods to the out-of-service taint"
	}
	if m.link == [3]bool{} {
		return "has no network"
	}
	var cut []string
	for l, name := range [...]string{"the Kubernetes API", "the Ceph public network", "the Ceph cluster network"} {
		if !m.link[l] {
			cut = append(cut, name)
		}
	}
	if len(cut) > 0 {
		return "is cut from " + strings.Join(cut, " and ")
	}
	return "runs"
}

// monsOut names the mons out of quorum and why.
func (w *monitor) monsOut() string {
	c := w.ceph
	var out []string
	for k, mi := range c.mons {
		switch {
		case c.monEmpty[k]:
			out = append(out, fmt.Sprintf("the mon on %s lost its store with the machine and must sync from a quorum", w.fleet.m[mi].Name))
		case !c.monRuns(k):
			out = append(out, fmt.Sprintf("%s %s", w.fleet.m[mi].Name, w.hostState(int(mi))))
		}
	}
	return "mons out: " + strings.Join(out, "; ")
}

// degradedCause says why PGs are degraded or unavailable.
func (w *monitor) degradedCause() string {
	c := w.ceph
	var why []string
	if !c.quorum {
		why = append(why, "no mon quorum, the OSD map is frozen ("+w.monsOut()+")")
	}
	held := map[string]int{}
	hosts := map[int]bool{}
	for i := range c.osds {
		o := &c.osds[i]
		if o.up {
			continue
		}
		hosts[int(o.m)] = true
		if o.in {
			held[c.downInReason(i)]++
		}
	}
	var keys []string
	for k := range held {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		why = append(why, fmt.Sprintf("%d down OSD(s) in: %s", held[k], k))
	}
	var hs []int
	for h := range hosts {
		hs = append(hs, h)
	}
	sort.Ints(hs)
	for _, h := range hs {
		why = append(why, fmt.Sprintf("%s's OSDs are down: it %s", w.fleet.m[h].Name, w.hostState(h)))
	}
	if b := w.pgs.nBlocked; b > 0 {
		why = append(why, fmt.Sprintf("%d PG(s) blocked on OSDs up in the map that cannot serve", b))
	}
	if in := c.hostsIn(); in < w.P.PoolSize && len(w.pgs.pgs) > 0 {
		why = append(why, fmt.Sprintf("only %d hosts with OSDs in for pool size %d: PGs cannot be fully placed", in, w.P.PoolSize))
	}
	if mb := w.pgs.toMoveMB(); mb > 0 {
		why = append(why, fmt.Sprintf("%.0f GB still to recover or backfill", mb/1024))
	}
	if len(why) == 0 {
		return w.pgs.summary()
	}
	return w.pgs.summary() + "; " + strings.Join(why, "; ")
}

// downInReason says why down OSD i is still in: why the mon has not
// marked it out.
func (c *cephCluster) downInReason(i int) string {
	o := &c.osds[i]
	switch {
	case !c.quorum:
		return "no quorum to mark them out"
	case c.flags&flagNoOut != 0:
		return "the noout flag keeps them in"
	}
	if t, down := c.subtreeDown(i); down {
		return "a whole " + t.String() + " is down (mon_osd_down_out_subtree_limit " + c.P.MonOSDDownOutSubtreeLimit.String() + ")"
	}
	if float64(c.nIn) < c.P.MonOSDMinInRatio*float64(c.nOSDs) {
		return fmt.Sprintf("mon_osd_min_in_ratio %.2f keeps them in", c.P.MonOSDMinInRatio)
	}
	if c.now-o.downStamp < c.P.MonOSDDownOutInterval {
		return "down for less than mon_osd_down_out_interval"
	}
	return "waiting for the mon's tick"
}

// hostsIn counts the hosts with an OSD in.
func (c *cephCluster) hostsIn() int {
	n := 0
	for i := range c.hostOSDs {
		for _, o := range c.hostOSDs[i] {
			if c.osds[o].in {
				n++
				break
			}
		}
	}
	return n
}
