package sim

import "strings"

// Rook's NetworkFence for the out-of-service taint (policy rook-oos):
// Rook's operator, when it reconciles the taint, lists the watchers of the
// images of the node's volumes (`rbd status`) and creates a NetworkFence
// for their addresses; ceph-csi blocklists each for 157784760 s (5 years,
// networkFenceExpire), and Rook deletes the NetworkFence when the taint is
// removed. Two real bugs follow from that order (regression scenarios
// rook-14832 and rook-16513): an operator that is down when the taint is
// added reconciles after the workloads moved and fences the new node's
// address; and pods move although no fence was created (no watcher found).

// rookFence is Rook's NetworkFence for one tainted machine.
type rookFence struct {
	done   bool    // Rook reconciled the taint
	fenced []int32 // machines whose addresses the NetworkFence covers
}

// taintAdded: machine i got the out-of-service taint; Rook reconciles it
// one operator lag later.
func (o *operator) taintAdded(i int) {
	o.rook[i].done = false
	if o.up {
		o.reconcileLater(operatorEvent{kind: evRookFence, m: int32(i)})
	}
}

// untainted: machine i's taint was removed; Rook deletes its NetworkFence
// when it reconciles.
func (o *operator) untainted(i int) {
	if o.up {
		o.reconcileLater(operatorEvent{kind: evRookUnfence, m: int32(i)})
	}
}

// rookResync: the restarted operator reconciles machine i's taint.
func (o *operator) rookResync(i int) {
	if !o.pol.OOSTaint || o.pol.CSIFence {
		return
	}
	t := o.kube.nodes[i].tainted
	if t && !o.rook[i].done {
		o.reconcileLater(operatorEvent{kind: evRookFence, m: int32(i)})
	}
	if !t && len(o.rook[i].fenced) > 0 {
		o.reconcileLater(operatorEvent{kind: evRookUnfence, m: int32(i)})
	}
}

// rookFence is Rook's reconcile of the taint on machine i: fence the
// addresses of the watchers of the moved workloads' images, as it finds
// them now.
func (o *operator) rookFence(i int, epoch int32) {
	r := &o.rook[i]
	if !o.live(epoch) || !o.kube.nodes[i].tainted || r.done {
		return
	}
	if !o.ceph.answers() {
		// `rbd status` and the blocklist need the mons: Rook requeues
		o.events.at(o.now+o.P.CephStatusInterval, operatorEvent{kind: evRookFence, m: int32(i), epoch: epoch})
		return
	}
	r.done = true
	var targets []int32
	add := func(h int32) {
		for _, t := range targets {
			if t == h {
				return
			}
		}
		targets = append(targets, h)
	}
	for _, h := range o.clients.watchers(i) {
		add(h)
	}
	name := o.fleet.m[i].Name
	if len(targets) == 0 {
		if o.rec != nil {
			o.logf("operator", "rook: no watchers of %s's volumes found; no NetworkFence created", name)
		}
		return
	}
	var names []string
	for _, t := range targets {
		names = append(names, o.fleet.m[t].Name)
		o.ceph.blocklist(int(t), o.now+o.P.NetworkFenceExpire, "rook NetworkFence for "+name)
	}
	r.fenced = targets
	if o.rec != nil {
		o.logf("operator", "rook: NetworkFence for %s covers the addresses of %s", name, strings.Join(names, ", "))
	}
}

// rookUnfence: Rook deletes the NetworkFence of machine i, whose taint is
// gone.
func (o *operator) rookUnfence(i int, epoch int32) {
	if !o.live(epoch) || o.kube.nodes[i].tainted {
		return
	}
	for _, t := range o.rook[i].fenced {
		if o.ceph.blocks[t].until > o.now {
			o.ceph.blocklist(int(t), 0, "rook (NetworkFence deleted)")
		}
	}
	o.rook[i].fenced, o.rook[i].done = nil, false
}
