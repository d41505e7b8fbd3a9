package sim

import "strings"

// Today's Rook fencing path (policy rook-oos): the Kubernetes non-graceful
// node shutdown flow. A remediator adds the node.kubernetes.io/out-of-service
// taint to a node that stays NotReady for the MHC's unhealthy timeout; the
// pod GC controller force-deletes its pods at once and the attach-detach
// controller force-detaches its volumes, so the workloads move without
// waiting for anything. Rook's operator, when it reconciles the taint, lists
// the watchers of the images of the node's volumes and creates a
// NetworkFence for their addresses (a blocklist entry each, with Ceph's
// default expiry). Two real bugs follow from that order and are the
// regression scenarios rook-14832 and rook-16513: an operator that is down
// when the taint is added reconciles after the workloads moved and fences
// the new node's address; and pods are rescheduled although no fence was
// created (no watcher found, or the operator never reconciled).

// oosTaint adds the out-of-service taint to machine i.
func (s *Sim) oosTaint(i int) {
	m := &s.machines[i]
	if m.tainted {
		return
	}
	m.tainted, m.oosDone, m.remediated = true, false, true
	if s.rec != nil {
		s.logf("FENCE", "%s tainted node.kubernetes.io/out-of-service (pods force-deleted, volumes force-detached)", m.Name)
		s.rec.fence(s, i, "out-of-service")
	}
	s.metrics.Fences++
	s.metrics.fenceHealth(s)
	s.moveWorkloads(i, "out-of-service taint: the pod GC force-deleted their pods", s.now)
	s.livenessUpdate(i)
	if s.opUp {
		s.schedule(s.now+s.jit(s.P.OperatorLag), evOOSFence, int32(i), s.opEpoch, 0)
	}
}

// oosFence is Rook's reconcile of the taint on machine i: fence the
// addresses of the watchers of the moved workloads' images, as it finds
// them now.
func (s *Sim) oosFence(i int, epoch int32) {
	m := &s.machines[i]
	if !s.opLive(epoch) || !m.tainted || m.oosDone {
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
			if c := &s.cl.clients[ci]; c.w == int32(w) && !c.dead && m.alive() && m.link[linkPublic] {
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
		s.blocklist(int(t), s.now+s.P.BlocklistExpire, "rook NetworkFence for "+m.Name)
	}
	m.oosFenced = targets
	if s.rec != nil {
		s.logf("operator", "rook: NetworkFence for %s covers the addresses of %s", m.Name, strings.Join(names, ", "))
	}
}

// oosUntaint: the node is Ready again; the remediator removes the taint
// and Rook removes the NetworkFence when it reconciles.
func (s *Sim) oosUntaint(i int) {
	m := &s.machines[i]
	if !m.tainted {
		return
	}
	m.tainted, m.remediated = false, false
	if s.rec != nil {
		s.logf("machine", "%s Ready: out-of-service taint removed", m.Name)
	}
	if s.opUp {
		s.schedule(s.now+s.jit(s.P.OperatorLag), evOOSUnfence, int32(i), s.opEpoch, 0)
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
