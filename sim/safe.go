package sim

import "fmt"

// The safe policy's controller.
//
// The MHC uses external remediation (a remediationTemplate): it only marks
// machines unhealthy and the safe controller performs the fence, so the
// decision and the action happen on one observation. Every OSD machine is
// also labelled with the MDB at maxUnavailable 0, so the MHC cannot fence
// one on its own. safe does not depend on the MHC to see a failed machine:
// it reads the Node's Ready condition itself with the MHC's timeout (a
// stalled MHC stalls nothing), and it counts a flapping machine - down,
// with short returns that restart the MHC's timer, for half the liveness
// bound (liveness.go) - as unhealthy too. For an unhealthy machine, on an
// observation taken when it acts (never a cached one) it:
//  1. waits while another OSD machine is fenced and not back (invariant 1);
//  2. without an answer from Ceph (no quorum, or its commands hang), grants
//     only if all its OSDs are down in the last OSD map (a frozen map
//     cannot mark them up again; not while the commands hang: the map
//     cannot be read), or the provider reports the instance powered off
//     and its OSDs' peers confirm they stopped heartbeating (a power report
//     alone can be late or wrong), else waits and names the blocker;
//  3. waits while any of its OSDs is up in the OSD map: Ceph still counts
//     it as a storage host (a kubelet/API partition, a stale label), and
//     cutting serving OSDs off can take a PG below min_size when another
//     failure is not detected yet (invariants 3 and 5);
//  4. cuts the machine off from storage (blocklists its OSDs and its
//     clients' address, without expiry) so that it cannot come back and
//     serve or write between the decision and the deletion (invariants 5
//     and 7), then re-checks;
//  5. for a delete-with-wipe fence, falls back to reboot (bare metal) or a
//     disk-keeping delete (cloud) unless every PG on the machine keeps
//     min_size current replicas elsewhere (invariant 4) - and always while
//     the mgr's PG stats are stale;
//  6. power-cycles a machine holding a mon whose store would go with it;
//  7. fences (the machine's remediation kind), recording the observation
//     time (invariant 2).
// If the node turns Ready before the fence, it lifts the cut-off. The
// operator has the same availability as every other policy's
// (cluster.operatorHA). Writes are re-validated when they land (an
// OSD-map-epoch precondition), so the operator's lag delays but never
// staleness.

// safeEventKind names an event of the safe controller.
type safeEventKind uint8

const (
	evSafeCheck       safeEventKind = iota // look at an unhealthy machine and act
	evSafeRevoke                           // lift the cut-off of a machine back Ready
	evSafeClientFence                      // blocklist a NotReady node's clients before their eviction
	evSafeDeleteNode                       // delete the Node of a cut-off host whose BMC does not answer
)

// safeEvent is an event of the safe controller for machine m: gen is the
// Node's Ready generation it was scheduled for, epoch the operator epoch
// that issued it, write whether the observation was taken and the write is
// due (evSafeClientFence).
type safeEvent struct {
	kind  safeEventKind
	m     int32
	gen   int32
	epoch int32
	write bool
}

// guard is the safe controller's record of one machine.
type guard struct {
	granted      bool   // a fence was granted (the MHC's external remediation)
	grantObs     Time   // the observation the grant was taken on
	clientFenced bool   // its client address was blocklisted before its pods' eviction
	why          string // what it waits for
}

// safeController is the safe policy's controller; it runs in the storage
// operator's pod.
type safeController struct {
	*core
	events  mailbox[safeEvent]
	fleet   *fleet
	kube    *kube
	ceph    *cephCluster
	pgs     *pgMap
	clients *rbdClients
	op      *operator
	watch   *monitor

	g []guard
}

func (sc *safeController) handle(e safeEvent) {
	i := int(e.m)
	switch e.kind {
	case evSafeCheck:
		sc.check(i, e.gen)
	case evSafeRevoke:
		if sc.op.live(e.epoch) {
			sc.revoke(i)
		}
	case evSafeClientFence:
		sc.clientFence(i, e.gen, e.epoch, e.write)
	case evSafeDeleteNode:
		sc.deleteNode(i, e.epoch)
	}
}

// due is when safe deems NotReady machine i unhealthy: the MHC's
// timeout after the Ready condition's last transition, or half the
// liveness bound into a down episode that keeps flapping.
func (sc *safeController) due(i int) Time {
	at := sc.fleet.unhealthyAt(i)
	if e := &sc.watch.downEp[i]; e.start >= 0 {
		at = min(at, e.start+sc.P.LivenessBound/2)
	}
	return at
}

func (sc *safeController) trigger(i int) {
	sc.events.at(max(sc.due(i), sc.now)+sc.jit(sc.P.OperatorLag), safeEvent{kind: evSafeCheck, m: int32(i), gen: sc.kube.nodes[i].readyGen, epoch: sc.op.epoch})
}

func (sc *safeController) revokeLater(i int) {
	sc.events.at(sc.now+sc.jit(sc.P.OperatorLag), safeEvent{kind: evSafeRevoke, m: int32(i), epoch: sc.op.epoch})
}

// fencing reports whether safe holds machine i cut off, granted or its
// clients fenced.
func (sc *safeController) fencing(i int) bool {
	g := &sc.g[i]
	return sc.ceph.cutOff[i] || g.granted || g.clientFenced
}

// readyChanged: machine i's Node turned Ready or NotReady.
func (sc *safeController) readyChanged(i int) {
	if sc.kube.nodes[i].ready {
		sc.g[i].why = ""
	}
	if !sc.pol.Grants || !sc.op.up || sc.fleet.m[i].phase != PhaseRunning {
		return
	}
	if !sc.kube.nodes[i].ready {
		sc.trigger(i)
		sc.clientFenceAt(i)
	} else if sc.fencing(i) {
		sc.revokeLater(i)
	}
}

// resync: the restarted operator's safe controller looks at machine i.
func (sc *safeController) resync(i int) {
	if !sc.pol.Grants {
		return
	}
	ready := sc.kube.nodes[i].ready
	if !ready && sc.fleet.m[i].phase == PhaseRunning {
		sc.trigger(i)
		sc.clientFenceAt(i)
	} else if ready && sc.fencing(i) {
		sc.revokeLater(i)
	}
}

// recheckAfterReboot: machine i is still NotReady after its power cycle;
// safe looks again one unhealthy timeout later.
func (sc *safeController) recheckAfterReboot(i int) {
	if sc.pol.Grants {
		sc.events.at(sc.now+sc.P.MHCUnhealthyTimeout+sc.jit(sc.P.OperatorLag), safeEvent{kind: evSafeCheck, m: int32(i), gen: sc.kube.nodes[i].readyGen, epoch: sc.op.epoch})
	}
}

// machineRebooted: machine i's power cycle is done; safe's entries for it
// are void.
func (sc *safeController) machineRebooted(i int) {
	if sc.pol.Grants {
		sc.ceph.blocks[i] = blockEntry{}
		sc.g[i].clientFenced = false
	}
}

// machineReplaced: machine i is a new Machine.
func (sc *safeController) machineReplaced(i int) {
	sc.g[i] = guard{}
	if sc.pol.Grants {
		sc.ceph.blocks[i] = blockEntry{}
	}
}

func (sc *safeController) check(i int, gen int32) {
	m := &sc.fleet.m[i]
	n := &sc.kube.nodes[i]
	if !sc.op.up || n.readyGen != gen || n.ready || m.phase != PhaseRunning || m.remediated || len(sc.ceph.hostOSDs[i]) == 0 {
		return
	}
	why := sc.step(i)
	if why == "" {
		return
	}
	if sc.g[i].why != why && sc.rec != nil {
		sc.logf("safe", "%s: waiting: %s", m.Name, why)
	}
	sc.g[i].why = why
	sc.events.at(sc.now+sc.P.CephStatusInterval, safeEvent{kind: evSafeCheck, m: int32(i), gen: gen})
}

// step advances the safe controller for machine i by one step and
// returns why it must wait, or "" when it needs no retry.
func (sc *safeController) step(i int) string {
	m := &sc.fleet.m[i]
	pol := sc.pol
	if !m.unhealthy && sc.now < sc.due(i) {
		return "not unhealthy yet"
	}
	if sc.watch.otherFencedDoms(i) > 0 && !pol.NoSerialize {
		return "another OSD machine is fenced and not back"
	}
	if !sc.ceph.answers() {
		// The provider's power report alone can be late or wrong: it counts
		// only when the surviving OSDs confirm that the machine's OSDs
		// stopped heartbeating (TrustPowerReport is the first-generation
		// rule, kept to show what the power-report-wrong scenario catches).
		// Without quorum the last OSD map is frozen and still valid; while
		// the commands hang safe cannot read it.
		off := sc.fleet.providerOff(i) && (pol.TrustPowerReport || sc.ceph.hostSilent(i))
		if off || (!sc.ceph.quorum && sc.ceph.upOSDs[i] == 0) {
			if sc.fleet.kindOf(i) == FenceDeleteWipe && !pol.NoWipeCheck {
				sc.noWipe(i, "Ceph does not answer, so the replicas cannot be checked")
			}
			sc.grant(i)
			return ""
		}
		return "Ceph does not answer (no mon quorum, or its commands hang), its OSDs may be up and the instance is not both reported powered off and silent to its OSD peers"
	}
	if sc.ceph.upOSDs[i] > 0 && !pol.NoUpOSDCheck {
		return "its OSDs are up in the OSD map: Ceph still counts it as a storage host, so it is not fenced"
	}
	if !sc.ceph.cutOff[i] && !pol.NoStorageFence {
		sc.storageFence(i)
		sc.events.at(sc.now+sc.jit(sc.P.PeeringTime), safeEvent{kind: evSafeCheck, m: int32(i), gen: sc.kube.nodes[i].readyGen})
		return ""
	}
	if sc.ceph.upOSDs[i] > 0 && !pol.NoStorageFence {
		return "waiting for the OSD map to show its OSDs down"
	}
	if sc.fleet.kindOf(i) == FenceDeleteWipe && !pol.NoWipeCheck {
		switch {
		case sc.ceph.mgrStale && !pol.TrustStalePGStats:
			sc.noWipe(i, "the mgr's PG stats are stale, so the replicas cannot be checked")
		case sc.ceph.mgrStale:
			// the broken variant: stale stats that said all PGs
			// active+clean are taken for the truth
			if sc.ceph.pgSnap.clean != len(sc.pgs.pgs) {
				sc.noWipe(i, "the (stale) PG stats show PGs not active+clean")
			}
		default:
			if pi := sc.pgs.withoutCurrentElsewhere(i); pi >= 0 {
				sc.noWipe(i, fmt.Sprintf("wiping would leave PG %d with fewer than min_size current replicas", pi))
			}
		}
	}
	sc.grant(i)
	return ""
}

// noWipe replaces a delete-with-wipe fence by a reboot (bare metal) or
// a disk-keeping delete (cloud).
func (sc *safeController) noWipe(i int, why string) {
	k := FenceDelete
	if sc.cfg.Cluster.BareMetal {
		k = FenceReboot
	}
	sc.fleet.m[i].kindOverride = int8(k)
	if sc.rec != nil {
		sc.logf("safe", "%s: %s: fence kind %s instead", sc.fleet.m[i].Name, why, k)
	}
}

func (sc *safeController) storageFence(i int) {
	if sc.rec != nil {
		sc.logf("FENCE", "%s cut off from storage by safe: OSDs marked down and blocklisted", sc.fleet.m[i].Name)
	}
	sc.watch.checkCutOff(i, "cutting "+sc.fleet.m[i].Name+" off")
	sc.watch.fenceAction()
	if !sc.pol.NoClientBlocklist {
		sc.ceph.blocklist(i, forever, "safe")
	}
	sc.ceph.cutOff[i] = true
	sc.watch.setFenced(i)
	sc.watch.plotNode(i)
	sc.fleet.changed(i)
	for _, oi := range sc.ceph.hostOSDs[i] {
		if sc.ceph.osds[oi].up {
			sc.ceph.markDown(int(oi), "marked down and blocklisted by safe")
		}
	}
}

// grant fences machine i as the MHC's external remediation, on the
// observation just taken.
func (sc *safeController) grant(i int) {
	m := &sc.fleet.m[i]
	if k := sc.fleet.kindOf(i); sc.ceph.hostMon[i] >= 0 && k != FenceReboot && (k == FenceDeleteWipe || sc.cfg.Cluster.MonStore == MonStoreHost) {
		// deleting the machine would take the mon's store with it, and an
		// empty mon cannot rejoin without a quorum: power-cycle it instead
		// (a BMC cycle, or the provider's stop/start on cloud)
		m.kindOverride = int8(FenceReboot)
		if sc.rec != nil {
			sc.logf("safe", "%s holds a mon whose store would go with the machine: fence kind reboot (power cycle) instead", m.Name)
		}
	}
	g := &sc.g[i]
	g.granted = true
	g.grantObs = sc.now
	g.why = ""
	sc.watch.setFenced(i)
	sc.fleet.fence(i, "safe (MHC external remediation)")
}

func (sc *safeController) revoke(i int) {
	m := &sc.fleet.m[i]
	g := &sc.g[i]
	if !sc.kube.nodes[i].ready || m.phase != PhaseRunning || !sc.fencing(i) {
		return
	}
	if sc.clients.staleOn(i) {
		// its deleted or evicted pods still run: lift the fence once the
		// kubelet has killed them
		sc.events.at(sc.now+sc.P.StaleKillTime, safeEvent{kind: evSafeRevoke, m: int32(i), epoch: sc.op.epoch})
		return
	}
	sc.ceph.cutOff[i], g.granted, g.clientFenced = false, false, false
	m.kindOverride = -1
	if sc.ceph.blocks[i].until > sc.now {
		sc.ceph.blocklist(i, 0, "safe")
	}
	if sc.rec != nil {
		sc.logf("safe", "%s Ready again: cut-off lifted", m.Name)
	}
	sc.fleet.changed(i)
}

// bmcUnreachable: the reboot remediation safe granted for machine i cannot
// power the host off - it has no power, so its BMC does not answer - and
// so never deletes its Node. A host safe cut off from storage (its OSDs
// and its client address blocklisted) can write nothing even if it comes
// back, so safe deletes the Node itself: its pods are deleted and the
// workloads move.
func (sc *safeController) bmcUnreachable(i int) {
	if sc.pol.Grants && sc.ceph.cutOff[i] && !sc.pol.NoClientBlocklist {
		sc.events.at(sc.now+sc.jit(sc.P.OperatorLag), safeEvent{kind: evSafeDeleteNode, m: int32(i), epoch: sc.op.epoch})
	}
}

func (sc *safeController) deleteNode(i int, epoch int32) {
	m := &sc.fleet.m[i]
	if !sc.op.live(epoch) || m.bmh != bmhPowerOff || !sc.ceph.cutOff[i] || !sc.kube.nodes[i].hasNode {
		return
	}
	if sc.rec != nil {
		sc.logf("safe", "%s: its BMC does not answer (no power), so the remediation cannot power it off; it is cut off from storage, so safe deletes its Node", m.Name)
	}
	sc.kube.nodeDeleted(i)
	sc.fleet.changed(i)
}

// clientFence: with Deployments whose volumes need no attachment
// (pods.go), the eviction of a NotReady node's pods starts their
// replacements while the old ones may still run. safe blocklists the
// node's client address (no expiry) just before the eviction - observed
// first, written one operator lag later - and lifts it when the node is
// back and its evicted pods are gone.
func (sc *safeController) clientFence(i int, gen, epoch int32, write bool) {
	n := &sc.kube.nodes[i]
	g := &sc.g[i]
	if !sc.op.live(epoch) || n.readyGen != gen || n.ready || sc.fleet.m[i].phase != PhaseRunning || g.clientFenced || sc.ceph.cutOff[i] {
		return
	}
	if !write {
		sc.events.at(sc.now+sc.jit(sc.P.OperatorLag), safeEvent{kind: evSafeClientFence, m: int32(i), gen: gen, epoch: epoch, write: true})
		return
	}
	if !sc.ceph.answers() {
		sc.events.at(sc.now+sc.P.CephStatusInterval, safeEvent{kind: evSafeClientFence, m: int32(i), gen: gen, epoch: epoch, write: true})
		return
	}
	g.clientFenced = true
	sc.ceph.blocklist(i, forever, "safe, before its pods are evicted (their replacements need no volume attachment)")
}

// clientFenceAt schedules clientFence for NotReady machine i so that the
// write lands before its pods are evicted.
func (sc *safeController) clientFenceAt(i int) {
	c := &sc.cfg.Cluster
	if c.WorkloadKind != WorkloadDeployment || !c.NoAttach || len(sc.clients.workloads) == 0 {
		return
	}
	n := &sc.kube.nodes[i]
	at := n.readyLT + sc.P.PodEvictionTimeout - sc.P.OperatorLag*6/5 - Second
	sc.events.at(max(at, sc.now), safeEvent{kind: evSafeClientFence, m: int32(i), gen: n.readyGen, epoch: sc.op.epoch})
}
