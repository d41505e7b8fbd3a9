package sim

import "strings"

// The Kubernetes non-graceful node shutdown flow and the two Ceph fencers
// that follow it (policies rook-oos and csi-oos). A remediator adds the
// node.kubernetes.io/out-of-service taint to a node that stays NotReady for
// the MHC's unhealthy timeout; the pod GC force-deletes its pods at once
// and the attach-detach controller detaches their volumes without waiting,
// so the workloads move (pods.go). The taint also evicts the node's OSD
// pods: when its kubelet is back they are gone and cannot be scheduled
// there until the taint goes, and Kubernetes never removes it - an operator
// does (the remove-oos-taint fault, or oosTaintRemovalDelay).
//
// rook-oos: Rook's operator, when it reconciles the taint, lists the
// watchers of the images of the node's volumes (`rbd status`) and creates
// a NetworkFence for their addresses; ceph-csi blocklists each for
// 157784760 s (5 years, networkFenceExpire), and Rook deletes the
// NetworkFence when the taint is removed. Two real bugs follow from that
// order (regression scenarios rook-14832 and rook-16513): an operator that
// is down when the taint is added reconciles after the workloads moved and
// fences the new node's address; and pods move although no fence was
// created (no watcher found).
//
// csi-oos: the newest ceph-csi (--enable-fencing; ceph-csi pull requests
// 5429 and 5828) stores the node's client address in the image metadata
// when it publishes a volume, and its ControllerUnpublishVolume, called
// when the force-deleted pod's VolumeAttachment goes, blocklists that
// stored address if the node has the out-of-service taint (for a year,
// csiAutoFenceExpire) before the volume is detached - no operator, no
// watcher lookup, the old node's address by construction. Without quorum
// the blocklist fails, so does the unpublish, and the workloads wait. When
// the node is back without the taint, its node plugin lifts its own entry
// after a cooldown (csiUnfenceCooldown, 5 min).

// oosTaint adds the out-of-service taint to machine i.
func (s *Sim) oosTaint(i int) {
	m := &s.machines[i]
	if m.tainted {
		return
	}
	m.tainted, m.oosDone, m.remediated = true, false, true
	if s.rec != nil {
		s.logf("FENCE", "%s tainted node.kubernetes.io/out-of-service (pods force-deleted, volumes detached without waiting)", m.Name)
		s.rec.fence(s, i, "out-of-service")
	}
	s.metrics.Fences++
	s.metrics.fenceHealth(s)
	s.livenessUpdate(i)
	if s.pol.CSIFence {
		s.csiUnpublish(i, m.gen)
		return
	}
	s.moveWorkloads(i, "out-of-service taint: the pod GC force-deleted their pods", s.now)
	if s.opUp {
		s.schedule(s.now+s.jit(s.P.OperatorLag), evOOSFence, int32(i), s.opEpoch, 0)
	}
}

// csiUnpublish is ceph-csi's ControllerUnpublishVolume for the volumes of
// tainted machine i: blocklist the client address stored at publish time,
// then let the volumes detach. It retries while Ceph has no quorum.
func (s *Sim) csiUnpublish(i int, gen int32) {
	m := &s.machines[i]
	if m.gen != gen || !m.tainted {
		return
	}
	if !s.ceph.quorum {
		s.schedule(s.now+s.P.CephStatusInterval, evCSIUnpublish, int32(i), gen, 0)
		return
	}
	m.csiFenceAt = s.now
	s.blocklist(i, s.now+s.P.CSIAutoFenceExpire, "ceph-csi ControllerUnpublishVolume (the address stored in the image metadata)")
	s.moveWorkloads(i, "out-of-service taint: the pod GC force-deleted their pods", s.now)
}

// oosFence is Rook's reconcile of the taint on machine i: fence the
// addresses of the watchers of the moved workloads' images, as it finds
// them now.
func (s *Sim) oosFence(i int, epoch int32) {
	m := &s.machines[i]
	if !s.opLive(epoch) || !m.tainted || m.oosDone {
		return
	}
	if !s.cephAnswers() {
		// `rbd status` and the blocklist need the mons: Rook requeues
		s.schedule(s.now+s.P.CephStatusInterval, evOOSFence, int32(i), epoch, 0)
		return
	}
	m.oosDone = true
	var targets []int32
	add := func(h int32) {
		for _, t := range targets {
			if t == h {
				return
			}
		}
		targets = append(targets, h)
	}
	for w := range s.cl.workloads {
		wl := &s.cl.workloads[w]
		if wl.prev != int32(i) {
			continue
		}
		if wl.cur >= 0 && s.cl.clients[wl.cur].started {
			add(s.cl.clients[wl.cur].host) // the watcher now is the new client
			continue
		}
		for _, ci := range m.clients {
			if c := &s.cl.clients[ci]; c.w == int32(w) && c.writes {
				add(int32(i)) // the old client still watches the image
			}
		}
	}
	if len(targets) == 0 {
		if s.rec != nil {
			s.logf("operator", "rook: no watchers of %s's volumes found; no NetworkFence created", m.Name)
		}
		return
	}
	var names []string
	for _, t := range targets {
		names = append(names, s.machines[t].Name)
		s.blocklist(int(t), s.now+s.P.NetworkFenceExpire, "rook NetworkFence for "+m.Name)
	}
	m.oosFenced = targets
	if s.rec != nil {
		s.logf("operator", "rook: NetworkFence for %s covers the addresses of %s", m.Name, strings.Join(names, ", "))
	}
}

// oosReady: tainted machine i is Ready again; an operator removes the
// taint oosTaintRemovalDelay later when that is set.
func (s *Sim) oosReady(i int) {
	m := &s.machines[i]
	if m.tainted && s.P.OOSTaintRemovalDelay > 0 {
		s.schedule(s.now+s.P.OOSTaintRemovalDelay, evOOSRemoval, int32(i), m.readyGen, 0)
	}
}

// oosUntaint: an operator removes the out-of-service taint from machine i;
// its OSD pods can run there again, Rook deletes its NetworkFence when it
// reconciles, and ceph-csi's node plugin lifts its own entry.
func (s *Sim) oosUntaint(i int) {
	m := &s.machines[i]
	if !m.tainted {
		return
	}
	m.tainted, m.remediated = false, false
	if s.rec != nil {
		s.logf("machine", "%s: out-of-service taint removed by an operator", m.Name)
	}
	if s.pol.CSIFence {
		if m.csiFenceAt >= 0 {
			s.schedule(max(s.now, m.csiFenceAt+s.P.CSIUnfenceCooldown), evCSIUnfence, int32(i), m.gen, 0)
		}
	} else if s.opUp {
		s.schedule(s.now+s.jit(s.P.OperatorLag), evOOSUnfence, int32(i), s.opEpoch, 0)
	}
	s.machineChanged(i)
}

// csiUnfence: ceph-csi's node plugin on machine i, back without the taint,
// finds its own address blocklisted with the auto-fence expiry and lifts it.
func (s *Sim) csiUnfence(i int, gen int32) {
	m := &s.machines[i]
	if m.gen != gen || m.tainted || m.csiFenceAt < 0 {
		return
	}
	if !m.ready || !s.ceph.quorum {
		s.schedule(s.now+s.P.CephStatusInterval, evCSIUnfence, int32(i), gen, 0)
		return
	}
	m.csiFenceAt = -1
	if m.block.until > s.now {
		s.blocklist(i, 0, "ceph-csi node plugin (auto-unfence)")
	}
}

func (s *Sim) oosUnfence(i int, epoch int32) {
	m := &s.machines[i]
	if !s.opLive(epoch) || m.tainted {
		return
	}
	for _, t := range m.oosFenced {
		if s.machines[t].block.until > s.now {
			s.blocklist(int(t), 0, "rook (NetworkFence deleted)")
		}
	}
	m.oosFenced, m.oosDone = nil, false
}
