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

// safeDue is when safe deems NotReady machine i unhealthy: the MHC's
// timeout after the Ready condition's last transition, or half the
// liveness bound into a down episode that keeps flapping.
func (s *Sim) safeDue(i int) Time {
	m := &s.machines[i]
	at := s.unhealthyAt(i)
	if e := &m.downEp; e.start >= 0 {
		at = min(at, e.start+s.P.LivenessBound/2)
	}
	return at
}

func (s *Sim) safeTrigger(i int) {
	m := &s.machines[i]
	s.schedule(max(s.safeDue(i), s.now)+s.jit(s.P.OperatorLag), evSafeCheck, int32(i), m.readyGen, int64(s.opEpoch))
}

func (s *Sim) safeCheck(i int, gen int32) {
	m := &s.machines[i]
	if !s.opUp || m.readyGen != gen || m.ready || m.phase != PhaseRunning || m.remediated || len(m.osds) == 0 {
		return
	}
	why := s.safeStep(i)
	if why == "" {
		return
	}
	if m.safeWhy != why && s.rec != nil {
		s.logf("safe", "%s: waiting: %s", m.Name, why)
	}
	m.safeWhy = why
	s.schedule(s.now+s.P.CephStatusInterval, evSafeCheck, int32(i), gen, 0)
}

// safeStep advances the safe controller for machine i by one step and
// returns why it must wait, or "" when it needs no retry.
func (s *Sim) safeStep(i int) string {
	m := &s.machines[i]
	pol := s.pol
	if !m.unhealthy && s.now < s.safeDue(i) {
		return "not unhealthy yet"
	}
	if s.otherFencedDoms(i) > 0 && !pol.NoSerialize {
		return "another OSD machine is fenced and not back"
	}
	if !s.cephAnswers() {
		// The provider's power report alone can be late or wrong: it counts
		// only when the surviving OSDs confirm that the machine's OSDs
		// stopped heartbeating (TrustPowerReport is the first-generation
		// rule, kept to show what the power-report-wrong scenario catches).
		// Without quorum the last OSD map is frozen and still valid; while
		// the commands hang safe cannot read it.
		off := s.providerOff(i) && (pol.TrustPowerReport || s.peersSeeDead(i))
		if off || (!s.ceph.quorum && m.upOSDs == 0) {
			if s.kindOf(i) == FenceDeleteWipe && !pol.NoWipeCheck {
				s.safeNoWipe(i, "Ceph does not answer, so the replicas cannot be checked")
			}
			s.safeGrant(i)
			return ""
		}
		return "Ceph does not answer (no mon quorum, or its commands hang), its OSDs may be up and the instance is not both reported powered off and silent to its OSD peers"
	}
	if m.upOSDs > 0 && !pol.NoUpOSDCheck {
		return "its OSDs are up in the OSD map: Ceph still counts it as a storage host, so it is not fenced"
	}
	if !m.storageFenced && !pol.NoStorageFence {
		s.safeStorageFence(i)
		s.schedule(s.now+s.jit(s.P.PeeringTime), evSafeCheck, int32(i), m.readyGen, 0)
		return ""
	}
	if m.upOSDs > 0 && !pol.NoStorageFence {
		return "waiting for the OSD map to show its OSDs down"
	}
	if s.kindOf(i) == FenceDeleteWipe && !pol.NoWipeCheck {
		switch {
		case s.mgrStale && !pol.TrustStalePGStats:
			s.safeNoWipe(i, "the mgr's PG stats are stale, so the replicas cannot be checked")
		case s.mgrStale:
			// the broken variant: stale stats that said all PGs
			// active+clean are taken for the truth
			if s.pgSnap.clean != len(s.pgs) {
				s.safeNoWipe(i, "the (stale) PG stats show PGs not active+clean")
			}
		default:
			if pi := s.pgWithoutCurrentElsewhere(i); pi >= 0 {
				s.safeNoWipe(i, fmt.Sprintf("wiping would leave PG %d with fewer than min_size current replicas", pi))
			}
		}
	}
	s.safeGrant(i)
	return ""
}

// safeNoWipe replaces a delete-with-wipe fence by a reboot (bare metal) or
// a disk-keeping delete (cloud).
func (s *Sim) safeNoWipe(i int, why string) {
	k := FenceDelete
	if s.cfg.Cluster.BareMetal {
		k = FenceReboot
	}
	s.machines[i].kindOverride = int8(k)
	if s.rec != nil {
		s.logf("safe", "%s: %s: fence kind %s instead", s.machines[i].Name, why, k)
	}
}

// pgWithoutCurrentElsewhere returns a PG on machine i that lacks min_size
// up replicas with the latest writes on other machines, or -1.
func (s *Sim) pgWithoutCurrentElsewhere(i int) int {
	for _, oi := range s.machines[i].osds {
		for _, pi := range s.osds[oi].pgs {
			p := &s.pgs[pi]
			n := 0
			for k := 0; k < s.P.PoolSize; k++ {
				o := p.slot[k]
				if o >= 0 && s.osds[o].m != int32(i) && p.cur&(1<<k) != 0 && s.osds[o].up {
					n++
				}
			}
			if n < s.P.PoolMinSize {
				return int(pi)
			}
		}
	}
	return -1
}

func (s *Sim) safeStorageFence(i int) {
	m := &s.machines[i]
	if s.rec != nil {
		s.logf("FENCE", "%s cut off from storage by safe: OSDs marked down and blocklisted", m.Name)
	}
	s.checkCutOff(i)
	s.metrics.fenceHealth(s)
	if !s.pol.NoClientBlocklist {
		s.blocklist(i, forever, "safe")
	}
	m.storageFenced = true
	s.setFenced(i)
	if s.rec != nil {
		s.rec.nodeState(s, i)
	}
	s.machineChanged(i)
	for _, oi := range m.osds {
		if s.osds[oi].up {
			s.markDown(int(oi), "marked down and blocklisted by safe")
		}
	}
}

// safeGrant fences machine i as the MHC's external remediation, on the
// observation just taken.
func (s *Sim) safeGrant(i int) {
	m := &s.machines[i]
	if k := s.kindOf(i); m.mon >= 0 && k != FenceReboot && (k == FenceDeleteWipe || s.cfg.Cluster.MonStore == MonStoreHost) {
		// deleting the machine would take the mon's store with it, and an
		// empty mon cannot rejoin without a quorum: power-cycle it instead
		// (a BMC cycle, or the provider's stop/start on cloud)
		m.kindOverride = int8(FenceReboot)
		if s.rec != nil {
			s.logf("safe", "%s holds a mon whose store would go with the machine: fence kind reboot (power cycle) instead", m.Name)
		}
	}
	m.granted = true
	m.grantObs = s.now
	m.safeWhy = ""
	s.setFenced(i)
	s.fence(i, "safe (MHC external remediation)")
}

func (s *Sim) safeRevoke(i int) {
	m := &s.machines[i]
	if !m.ready || m.phase != PhaseRunning || (!m.storageFenced && !m.granted && !m.clientFenced) {
		return
	}
	if m.clientFenced && !m.storageFenced && !m.granted && s.staleOn(i) {
		// its evicted pods still run: lift the client fence once the
		// kubelet has killed them
		s.schedule(s.now+s.P.StaleKillTime, evSafeRevoke, int32(i), s.opEpoch, 0)
		return
	}
	m.storageFenced, m.granted, m.clientFenced = false, false, false
	m.kindOverride = -1
	if m.block.until > s.now {
		s.blocklist(i, 0, "safe")
	}
	if s.rec != nil {
		s.logf("safe", "%s Ready again: cut-off lifted", m.Name)
	}
	s.machineChanged(i)
}

// safeClientFence: with Deployments whose volumes need no attachment
// (pods.go), the eviction of a NotReady node's pods starts their
// replacements while the old ones may still run. safe blocklists the
// node's client address (no expiry) just before the eviction - observed
// at phase 0, written one operator lag later at phase 1 - and lifts it
// when the node is back and its evicted pods are gone.
func (s *Sim) safeClientFence(i int, gen int32, c int64) {
	m := &s.machines[i]
	epoch, phase := int32(c>>1), c&1
	if !s.opLive(epoch) || m.readyGen != gen || m.ready || m.phase != PhaseRunning || m.clientFenced || m.storageFenced {
		return
	}
	if phase == 0 {
		s.schedule(s.now+s.jit(s.P.OperatorLag), evSafeClientFence, int32(i), gen, int64(epoch)<<1|1)
		return
	}
	if !s.cephAnswers() {
		s.schedule(s.now+s.P.CephStatusInterval, evSafeClientFence, int32(i), gen, int64(epoch)<<1|1)
		return
	}
	m.clientFenced = true
	s.blocklist(i, forever, "safe, before its pods are evicted (their replacements need no volume attachment)")
}

// safeClientFenceAt schedules safeClientFence for NotReady machine i so
// that the write lands before its pods are evicted.
func (s *Sim) safeClientFenceAt(i int) {
	c := &s.cfg.Cluster
	if c.WorkloadKind != WorkloadDeployment || !c.NoAttach || len(s.cl.workloads) == 0 {
		return
	}
	m := &s.machines[i]
	at := m.readyLT + s.P.PodEvictionTimeout - s.P.OperatorLag*6/5 - Second
	s.schedule(max(at, s.now), evSafeClientFence, int32(i), m.readyGen, int64(s.opEpoch)<<1)
}
