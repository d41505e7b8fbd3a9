package sim

// The Kubernetes non-graceful node shutdown flow: a remediator (policies
// rook-oos and csi-oos) adds the node.kubernetes.io/out-of-service taint
// (NoExecute) to a node that stays NotReady for the MHC's unhealthy
// timeout. The taint evicts every pod that does not tolerate it - none of
// the cluster's do: the pod GC force-deletes them at once and the
// attach-detach controller detaches their volumes without waiting, so the
// workloads move (pods.go) and the storage operator's pod restarts on
// another node (operator.go). Pods pinned to the node - its OSDs, its mon,
// ceph-csi's node plugin - cannot run anywhere else: their containers on a
// node that is only cut off run on until its kubelet is back and kills
// them, and then they cannot be scheduled there until the taint goes
// (oosEvicted: OSDs down, the mon out of quorum). Kubernetes never removes
// the taint - an operator does (the remove-oos-taint fault, or
// oosTaintRemovalDelay). The two Ceph fencers that follow the taint are
// Rook's NetworkFence (rook.go) and ceph-csi's (csi.go).

// taint adds the out-of-service taint to machine i's Node.
func (k *kube) taint(i int) {
	n := &k.nodes[i]
	if n.tainted {
		return
	}
	n.tainted = true
	k.fleet.m[i].remediated = true
	if k.rec != nil {
		k.logf("FENCE", "%s tainted node.kubernetes.io/out-of-service (pods force-deleted, volumes detached without waiting)", k.fleet.m[i].Name)
		k.rec.fence(k.now, i, "out-of-service")
	}
	k.watch.metrics.Fences++
	k.watch.fenceAction()
	k.watch.livenessUpdate(i)
	k.op.taintDeleted(i)
	if k.pol.CSIFence {
		k.csi.unpublish(i, k.fleet.m[i].gen)
		return
	}
	k.moveWorkloads(i, "out-of-service taint: the pod GC force-deleted their pods", k.now)
	k.op.taintAdded(i)
}

// oosReady: tainted machine i is Ready again; an operator removes the
// taint oosTaintRemovalDelay later when that is set.
func (k *kube) oosReady(i int) {
	if k.nodes[i].tainted && k.P.OOSTaintRemovalDelay > 0 {
		k.faults.untaintAfter(i, k.P.OOSTaintRemovalDelay, k.nodes[i].readyGen)
	}
}

// untaint: an operator removes the out-of-service taint from machine i;
// its OSD pods can run there again, Rook deletes its NetworkFence when it
// reconciles, and ceph-csi's node plugin lifts its own entry.
func (k *kube) untaint(i int) {
	n := &k.nodes[i]
	if !n.tainted {
		return
	}
	n.tainted = false
	k.fleet.m[i].remediated = false
	if k.rec != nil {
		k.logf("machine", "%s: out-of-service taint removed by an operator", k.fleet.m[i].Name)
	}
	if k.pol.CSIFence {
		k.csi.untainted(i)
	} else {
		k.op.untainted(i)
	}
	k.fleet.changed(i)
}

// oosEvicted reports whether machine i's pods are gone because of the
// out-of-service taint: its kubelet is back and killed them, and they
// cannot be scheduled there until the taint is removed.
func (k *kube) oosEvicted(i int) bool { n := &k.nodes[i]; return n.tainted && n.hbOK }
