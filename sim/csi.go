package sim

// ceph-csi's fence for the out-of-service taint (policy csi-oos): the
// newest ceph-csi (--enable-fencing; ceph-csi pull requests 5429 and 5828)
// stores the node's client address in the image metadata when it publishes
// a volume, and its ControllerUnpublishVolume, called when the
// force-deleted pod's VolumeAttachment goes, blocklists that stored
// address if the node has the out-of-service taint (for a year,
// csiAutoFenceExpire) before the volume is detached - no operator, no
// watcher lookup, the old node's address by construction. Without quorum
// the blocklist fails, so does the unpublish, and the workloads wait.
//
// The node plugin (a DaemonSet pod, evicted by the taint like every pod
// that does not tolerate it) runs on the node again once the taint is
// removed; it lifts its own entry (csi-addons' GetFenceClients, ceph-csi
// pull request 5828) once the node's old pods are gone - its kubelet back
// on the API killed them - and csiUnfenceCooldown (5 min) after that: an
// operator who removes the taint as soon as the node is Ready must not
// unfence the writes of pods the kubelet has not killed yet. The
// CSIUnfenceFromFence variant runs the cooldown from the fence, as ceph-csi
// does: it unfences those pods (a split brain the explorer finds).

// csiEventKind names a ceph-csi event.
type csiEventKind uint8

const (
	evCSIUnpublish csiEventKind = iota // ControllerUnpublishVolume retried
	evCSIUnfence                       // the node plugin lifts its node's entry
)

// csiEvent is an event of ceph-csi for machine m in incarnation gen.
type csiEvent struct {
	kind csiEventKind
	m    int32
	gen  int32
}

// cephCSI is ceph-csi's controller and node plugins.
type cephCSI struct {
	*core
	events  mailbox[csiEvent]
	fleet   *fleet
	kube    *kube
	ceph    *cephCluster
	clients *rbdClients

	fenceAt []Time // when it fenced a machine's address for the taint (-1: not fenced)
}

func (d *cephCSI) init(machines int) {
	d.fenceAt = make([]Time, machines)
	for i := range d.fenceAt {
		d.fenceAt[i] = -1
	}
}

func (d *cephCSI) handle(e csiEvent) {
	switch e.kind {
	case evCSIUnpublish:
		d.unpublish(int(e.m), e.gen)
	case evCSIUnfence:
		d.unfence(int(e.m), e.gen)
	}
}

// unpublish is ControllerUnpublishVolume for the volumes of tainted
// machine i: blocklist the client address stored at publish time, then let
// the volumes detach. It retries while Ceph has no quorum.
func (d *cephCSI) unpublish(i int, gen int32) {
	if d.fleet.m[i].gen != gen || !d.kube.nodes[i].tainted {
		return
	}
	if !d.ceph.quorum {
		d.events.at(d.now+d.P.CephStatusInterval, csiEvent{kind: evCSIUnpublish, m: int32(i), gen: gen})
		return
	}
	d.fenceAt[i] = d.now
	d.ceph.blocklist(i, d.now+d.P.CSIAutoFenceExpire, "ceph-csi ControllerUnpublishVolume (the address stored in the image metadata)")
	d.kube.moveWorkloads(i, "out-of-service taint: the pod GC force-deleted their pods", d.now)
}

// untainted: machine i's taint was removed; its node plugin runs there
// again and lifts the entry when it may (unfence).
func (d *cephCSI) untainted(i int) {
	if d.fenceAt[i] < 0 {
		return
	}
	at := d.now
	if d.pol.CSIUnfenceFromFence {
		at = max(d.now, d.fenceAt[i]+d.P.CSIUnfenceCooldown)
	}
	d.events.at(at, csiEvent{kind: evCSIUnfence, m: int32(i), gen: d.fleet.m[i].gen})
}

// unfence: ceph-csi's node plugin on machine i, back without the taint,
// finds its own address blocklisted with the auto-fence expiry and lifts it
// once the node's old pods are gone and the cooldown since has passed.
func (d *cephCSI) unfence(i int, gen int32) {
	if d.fleet.m[i].gen != gen || d.kube.nodes[i].tainted || d.fenceAt[i] < 0 {
		return
	}
	retry := d.now + d.P.CephStatusInterval
	n := &d.kube.nodes[i]
	if !n.ready || !d.ceph.quorum || (!d.pol.CSIUnfenceFromFence && d.clients.staleOn(i)) {
		d.events.at(retry, csiEvent{kind: evCSIUnfence, m: int32(i), gen: gen})
		return
	}
	if due := max(n.readyLT, d.clients.staleEnd[i]) + d.P.CSIUnfenceCooldown; !d.pol.CSIUnfenceFromFence && d.now < due {
		// the cooldown runs from the node's return and its old pods' end
		d.events.at(due, csiEvent{kind: evCSIUnfence, m: int32(i), gen: gen})
		return
	}
	d.fenceAt[i] = -1
	if d.ceph.blocks[i].until > d.now {
		d.ceph.blocklist(i, 0, "ceph-csi node plugin (auto-unfence)")
	}
}
