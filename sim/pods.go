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
func (k *kube) podEvict(i int, gen int32) {
	n := &k.nodes[i]
	if n.readyGen != gen || n.ready || !n.hasNode {
		return
	}
	evicted := 0
	for w := range k.clients.workloads {
		if wl := &k.clients.workloads[w]; wl.home == int32(i) && !wl.evicted {
			wl.evicted = true
			evicted++
		}
	}
	if evicted == 0 {
		return
	}
	if k.rec != nil {
		k.logf("client", "%d pod(s) on %s evicted after %s NotReady (Terminating: the kubelet cannot confirm)", evicted, k.fleet.m[i].Name, k.P.PodEvictionTimeout.Dur())
	}
	if k.cfg.Cluster.WorkloadKind == WorkloadDeployment && k.cfg.Cluster.NoAttach {
		k.moveEvicted(i, "their ReplicaSets' new pods need no volume attachment", k.now)
	}
}

// kubeletBack: machine i's kubelet reaches the API again; after
// staleKillTime it has killed the containers of its evicted pods and
// deleted them (evictedDeleted).
func (k *kube) kubeletBack(i int) {
	for w := range k.clients.workloads {
		if wl := &k.clients.workloads[w]; wl.home == int32(i) && wl.evicted {
			k.at(k.now+k.P.StaleKillTime, evEvictedGone, i, k.nodes[i].hbGen)
			return
		}
	}
}

// evictedDeleted: the kubelet on machine i killed the containers of its
// evicted pods and deleted them; their volumes are unmounted, so they are
// detached at once.
func (k *kube) evictedDeleted(i int, hbGen int32) {
	n := &k.nodes[i]
	if n.hbGen != hbGen || !n.hbOK {
		return
	}
	k.clients.killEvicted(i)
	k.moveEvicted(i, "its kubelet killed and deleted the evicted pods", k.now)
}

// staleKill: the kubelet, back on the API, kills the containers of pods
// that were deleted while it was away.
func (k *kube) staleKill(i int, hbGen int32) {
	if k.nodes[i].hbGen != hbGen || !k.fleet.m[i].reaches(linkAPI) {
		return
	}
	k.clients.killDeleted(i)
}

// staleKillAfter: machine i's kubelet reaches the API and still runs the
// containers of a deleted pod; it kills them staleKillTime later.
func (k *kube) staleKillAfter(i int) {
	k.at(k.now+k.P.StaleKillTime, evStaleKill, i, k.nodes[i].hbGen)
}

// nodeDeleted: machine i's Node object is deleted (after its instance is
// gone); the pod GC deletes its pods and the volumes are force-detached
// after maxWaitForUnmount.
func (k *kube) nodeDeleted(i int) {
	k.nodes[i].hasNode = false
	k.moveWorkloads(i, "the pod GC deleted their pods with the Node, deleted once the instance was gone", k.now+k.detachWait())
}

// detachWait is how long the attach-detach controller waits before it
// detaches a volume from a node that cannot confirm the unmount.
func (k *kube) detachWait() Time {
	if k.cfg.Cluster.NoAttach {
		return 0
	}
	return k.P.MaxWaitForUnmount
}

// moveWorkloads deletes the pods on machine i from the API: their
// workloads start elsewhere once their volumes are free (free). Old
// processes keep running until their host dies or their kubelet kills them.
func (k *kube) moveWorkloads(i int, why string, free Time) { k.move(i, why, free, false) }

// moveEvicted is moveWorkloads for the pods evicted from machine i only
// (pods started there since are not).
func (k *kube) moveEvicted(i int, why string, free Time) { k.move(i, why, free, true) }

func (k *kube) move(i int, why string, free Time, evicted bool) {
	moved := 0
	for w := range k.clients.workloads {
		wl := &k.clients.workloads[w]
		if wl.home != int32(i) || (evicted && !wl.evicted) {
			continue
		}
		k.clients.podDeleted(w, i)
		moved++
		k.events.at(free+k.jit(k.P.WorkloadStartTime), kubeEvent{kind: evPodStart, n: int32(w), gen: wl.moveGen, host: -1})
	}
	if moved > 0 && k.rec != nil {
		how := "their volumes are detached at once"
		if d := free - k.now; d > 0 {
			how = "their volumes are detached in " + d.Dur()
		}
		k.logf("client", "%d workload(s) leave %s (%s); %s", moved, k.fleet.m[i].Name, why, how)
	}
}

// podStart starts workload w's new pod and client: on machine h if h >= 0
// (a restart in place), else on the first Ready machine after its old one.
func (k *kube) podStart(w int, gen int32, h int) {
	wl := &k.clients.workloads[w]
	if wl.moveGen != gen || wl.cur >= 0 {
		return
	}
	if !k.ceph.quorum {
		// a new client needs the mons for its map and its auth ticket
		k.events.at(k.now+k.P.CephStatusInterval, kubeEvent{kind: evPodStart, n: int32(w), gen: gen, host: int32(h)})
		return
	}
	if h >= 0 {
		if k.fleet.m[h].alive() && k.nodes[h].ready && !wl.evicted {
			k.clients.start(w, h)
			return
		}
		// the pod stays on its node until the node is back or deleted
		return
	}
	if wait := k.clients.lockWait(w); wait > 0 {
		k.events.at(k.now+wait, kubeEvent{kind: evPodStart, n: int32(w), gen: gen, host: -1})
		return
	}
	n := len(k.nodes)
	for j := 1; j <= n; j++ {
		c := (w + j) % n
		if k.fleet.m[c].alive() && k.nodes[c].ready && !k.nodes[c].tainted {
			k.clients.start(w, c)
			if k.rec != nil {
				k.logf("client", "workload w%d started on %s (takes the exclusive lock)", w, k.fleet.m[c].Name)
			}
			return
		}
	}
	k.events.at(k.now+k.fleet.mhcRetry(), kubeEvent{kind: evPodStart, n: int32(w), gen: gen, host: -1})
}

// restartPod restarts workload w's pod on machine h, whose client died
// with the host while the pod stayed bound to it.
func (k *kube) restartPod(w, h int) {
	k.events.at(k.now+k.jit(k.P.WorkloadStartTime), kubeEvent{kind: evPodStart, n: int32(w), gen: k.clients.workloads[w].moveGen, host: int32(h)})
}

// restartLocal restarts, on a machine that is back, the workloads whose
// current client died with it and whose pod was not deleted.
func (k *kube) restartLocal(i int) {
	for w := range k.clients.workloads {
		wl := &k.clients.workloads[w]
		if wl.cur < 0 && wl.home == int32(i) && !wl.evicted {
			k.restartPod(w, i)
		}
	}
}
