package sim

// Pods on a node that fails, as Kubernetes handles them: taint-based
// eviction, the owners' replacement pods, and the attach-detach
// controller's hold on a ReadWriteOnce volume.
//
// A node NotReady for the not-ready/unreachable taints' tolerationSeconds
// (podEvictionTimeout, 300 s) has its pods evicted: marked for deletion,
// but an unreachable kubelet never confirms it, so they stay Terminating.
// A StatefulSet waits for its pod to be gone before it recreates it; a
// Deployment's ReplicaSet creates the replacement at once. The replacement
// needs the volume, and while the CSI driver requires attachment (ceph-csi
// RBD's CSIDriver does; cluster.attachRequired) the attach-detach
// controller keeps it attached to the old node as long as the old pod
// exists in the API. The old pod leaves the API when its kubelet comes back
// and deletes it (after killing its containers), when the Node object is
// deleted (the pod GC), or when the node gets the out-of-service taint
// (the pod GC force-deletes it). Then the volume is detached: at once
// under the out-of-service taint or when the kubelet unmounted it, else
// after maxWaitForUnmount (6 min) - the attach-detach controller's force
// detach on timeout, on an unhealthy or deleted node. The replacement then
// starts (workloadStartTime) and takes the image's exclusive lock.
//
// Without attachment (attachRequired false) nothing holds the replacement
// back: a Deployment's new pod starts at the eviction while the old one may
// still run - split-brain without any fence; attachment is what prevents
// it. machine-api-operator deletes the Node only after the instance is gone
// (mhc.go), so a delete fence moves workloads then.

// WorkloadKind is the kind of controller that owns the workloads' pods.
type WorkloadKind uint8

// Workload kinds.
const (
	WorkloadStatefulSet WorkloadKind = iota
	WorkloadDeployment
)

var workloadKindNames = []string{"statefulset", "deployment"}

// String returns the scenario-file name of the kind.
func (k WorkloadKind) String() string { return workloadKindNames[k] }

// podEvict: machine i has been NotReady for podEvictionTimeout; its pods
// are evicted (taint-based eviction).
func (s *Sim) podEvict(i int, gen int32) {
	m := &s.machines[i]
	if m.readyGen != gen || m.ready || !m.hasNode {
		return
	}
	n := 0
	for w := range s.cl.workloads {
		if wl := &s.cl.workloads[w]; wl.home == int32(i) && !wl.evicted {
			wl.evicted = true
			n++
		}
	}
	if n == 0 {
		return
	}
	if s.rec != nil {
		s.logf("client", "%d pod(s) on %s evicted after %s NotReady (Terminating: the kubelet cannot confirm)", n, m.Name, s.P.PodEvictionTimeout.Dur())
	}
	if s.cfg.Cluster.WorkloadKind == WorkloadDeployment && s.cfg.Cluster.NoAttach {
		s.moveEvicted(i, "their ReplicaSets' new pods need no volume attachment", s.now)
	}
}

// kubeletBack: machine i's kubelet reaches the API again; after
// staleKillTime it has killed the containers of its evicted pods and
// deleted them (evictedDeleted).
func (s *Sim) kubeletBack(i int) {
	for w := range s.cl.workloads {
		if wl := &s.cl.workloads[w]; wl.home == int32(i) && wl.evicted {
			s.schedule(s.now+s.P.StaleKillTime, evEvictedDeleted, int32(i), s.machines[i].hbGen, 0)
			return
		}
	}
}

// evictedDeleted: the kubelet on machine i killed the containers of its
// evicted pods and deleted them; their volumes are unmounted, so they are
// detached at once.
func (s *Sim) evictedDeleted(i int, hbGen int32) {
	m := &s.machines[i]
	if m.hbGen != hbGen || !m.hbOK {
		return
	}
	for _, ci := range m.clients {
		if c := &s.cl.clients[ci]; c.current && s.cl.workloads[c.w].evicted {
			c.dead = true
		}
	}
	s.clientsOn(i)
	s.moveEvicted(i, "its kubelet killed and deleted the evicted pods", s.now)
}

// nodeDeleted: machine i's Node object is deleted (after its instance is
// gone); the pod GC deletes its pods and the volumes are force-detached
// after maxWaitForUnmount.
func (s *Sim) nodeDeleted(i int) {
	s.moveWorkloads(i, "the pod GC deleted their pods with the Node, deleted once the instance was gone", s.now+s.detachWait())
}

// detachWait is how long the attach-detach controller waits before it
// detaches a volume from a node that cannot confirm the unmount.
func (s *Sim) detachWait() Time {
	if s.cfg.Cluster.NoAttach {
		return 0
	}
	return s.P.MaxWaitForUnmount
}

// moveWorkloads deletes the pods on machine i from the API: their
// workloads start elsewhere once their volumes are free (free). Old
// processes keep running until their host dies or their kubelet kills them.
func (s *Sim) moveWorkloads(i int, why string, free Time) { s.move(i, why, free, false) }

// moveEvicted is moveWorkloads for the pods evicted from machine i only
// (pods started there since are not).
func (s *Sim) moveEvicted(i int, why string, free Time) { s.move(i, why, free, true) }

func (s *Sim) move(i int, why string, free Time, evicted bool) {
	n := 0
	for w := range s.cl.workloads {
		wl := &s.cl.workloads[w]
		if wl.home != int32(i) || (evicted && !wl.evicted) {
			continue
		}
		if wl.cur >= 0 {
			s.cl.nSplit -= int(wl.staleW)
			c := &s.cl.clients[wl.cur]
			if c.writes {
				s.cl.nCurWriting--
				s.cl.nStaleWriting++
				wl.staleW++
			}
			c.current = false
		}
		wl.cur, wl.home, wl.prev, wl.evicted = -1, -1, int32(i), false
		wl.moveGen++
		n++
		s.schedule(free+s.jit(s.P.WorkloadStartTime), evClientStart, int32(w), wl.moveGen, -1)
	}
	if n > 0 && s.rec != nil {
		how := "their volumes are detached at once"
		if d := free - s.now; d > 0 {
			how = "their volumes are detached in " + d.Dur()
		}
		s.logf("client", "%d workload(s) leave %s (%s); %s", n, s.machines[i].Name, why, how)
	}
}

// clientStart starts workload w's new client: on machine h if h >= 0 (a
// restart in place), else on the first Ready machine after its old one.
func (s *Sim) clientStart(w int, gen int32, h int) {
	wl := &s.cl.workloads[w]
	if wl.moveGen != gen || wl.cur >= 0 {
		return
	}
	if !s.ceph.quorum {
		// a new client needs the mons for its map and its auth ticket
		s.schedule(s.now+s.P.CephStatusInterval, evClientStart, int32(w), gen, int64(h))
		return
	}
	if h >= 0 {
		m := &s.machines[h]
		if m.phase == PhaseRunning && m.alive() && m.ready && !wl.evicted {
			s.startClient(w, h)
			return
		}
		// the pod stays on its node until the node is back or deleted
		return
	}
	if wait := s.lockWait(w); wait > 0 {
		s.schedule(s.now+wait, evClientStart, int32(w), gen, -1)
		return
	}
	n := len(s.machines)
	for k := 1; k <= n; k++ {
		j := (w + k) % n
		m := &s.machines[j]
		if m.phase == PhaseRunning && m.alive() && m.ready && !m.tainted {
			s.startClient(w, j)
			if s.rec != nil {
				s.logf("client", "workload w%d started on %s (takes the exclusive lock)", w, m.Name)
			}
			return
		}
	}
	s.schedule(s.now+s.mhcRetry(), evClientStart, int32(w), gen, -1)
}

// restartLocal restarts, on a machine that is back, the workloads whose
// current client died with it and whose pod was not deleted.
func (s *Sim) restartLocal(i int) {
	for w := range s.cl.workloads {
		wl := &s.cl.workloads[w]
		if wl.cur < 0 && wl.home == int32(i) && !wl.evicted {
			s.schedule(s.now+s.jit(s.P.WorkloadStartTime), evClientStart, int32(w), wl.moveGen, int64(i))
		}
	}
}
