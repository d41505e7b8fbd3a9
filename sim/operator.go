package sim

// The storage operator's pod: where it runs, when it stalls, its eviction
// and restart, and leader-election failover. It runs the label and MDB
// controllers (policy.go), Rook's NetworkFence controller (rook.go) and
// the safe controller (safe.go).

// operatorEventKind names an event of the storage operator.
type operatorEventKind uint8

const (
	evLabelApply  operatorEventKind = iota // the label controller's write lands
	evMDBPoll                              // the MDB controller polls `ceph status`
	evMDBApply                             // the MDB controller's write lands
	evOpEvicted                            // the operator pod's eviction from its NotReady node
	evOpFailover                           // a standby replica may take the leader lease
	evOpStarted                            // the restarted operator pod reconciles
	evRookFence                            // Rook reconciles an out-of-service taint
	evRookUnfence                          // Rook reconciles a taint's removal
)

// operatorEvent is an event of the storage operator: m is the machine (a
// label, a taint, the operator's host), epoch the operator incarnation
// that issued it (a write of a stalled or restarted operator is dropped),
// gen the host's Ready generation (evOpEvicted), v the value written and
// obs when it was observed.
type operatorEvent struct {
	kind  operatorEventKind
	m     int32
	epoch int32
	gen   int32
	v     int32
	obs   Time
}

// operator is the storage operator (Rook, or the policy's own) and the
// controllers it runs.
type operator struct {
	*core
	events  mailbox[operatorEvent]
	fleet   *fleet
	kube    *kube
	ceph    *cephCluster
	pgs     *pgMap
	clients *rbdClients
	safe    *safeController
	watch   *monitor

	host    int   // the machine its pod runs on (-1: the control plane, or none)
	up      bool  // it reconciles
	started bool  // its pod runs (false while it restarts after an eviction)
	stalled bool  // the operator-stall fault
	epoch   int32 // changes whenever up does, or the pod moves
	rook    []rookFence
}

func (o *operator) init() {
	o.rook = make([]rookFence, len(o.fleet.m))
	for i := range o.fleet.m {
		if o.initialLabel(i) {
			o.fleet.setLabel(i, true, 0)
		}
	}
	o.fleet.mdbMax = o.pol.initialMDB()
	o.fleet.mdbObs = 0
	o.host = o.cfg.Cluster.OperatorOn
	o.up, o.started = true, true
}

func (o *operator) handle(e operatorEvent) {
	i := int(e.m)
	switch e.kind {
	case evLabelApply:
		if o.live(e.epoch) && e.obs >= o.fleet.m[i].labelObs {
			o.fleet.setLabel(i, e.v == 1, e.obs)
		}
	case evMDBPoll:
		o.mdbPoll()
	case evMDBApply:
		if o.live(e.epoch) && e.obs > o.fleet.mdbObs {
			o.fleet.setMDB(int(e.v), e.obs)
		}
	case evOpEvicted:
		o.evicted(i, e.gen)
	case evOpFailover:
		if o.host == i && !o.up {
			o.failover(i, e.epoch)
		}
	case evOpStarted:
		if e.epoch == o.epoch {
			o.started = true
			o.host = i
			o.recompute()
		}
	case evRookFence:
		o.rookFence(i, e.epoch)
	case evRookUnfence:
		o.rookUnfence(i, e.epoch)
	}
}

// reconcileLater schedules event e one operator lag from now, issued by
// the operator's current epoch.
func (o *operator) reconcileLater(e operatorEvent) {
	e.epoch = o.epoch
	o.events.at(o.now+o.jit(o.P.OperatorLag), e)
}

// live reports whether a write issued by the operator in epoch e still lands.
func (o *operator) live(e int32) bool { return o.up && e == o.epoch }

func (o *operator) recompute() {
	up := o.started && !o.stalled
	if up && o.host >= 0 {
		h := &o.fleet.m[o.host]
		up = h.alive() && h.link[linkAPI] && h.link[linkPublic]
	}
	if up == o.up {
		return
	}
	o.up = up
	o.epoch++
	if o.rec != nil {
		where := "control plane"
		if o.host >= 0 {
			where = o.fleet.m[o.host].Name
		}
		if up {
			o.logf("operator", "operator reconciling (on %s)", where)
		} else {
			o.logf("operator", "operator stalled (on %s)", where)
		}
	}
	if up {
		o.resync()
		return
	}
	if o.cfg.Cluster.OperatorHA && o.host >= 0 && o.started {
		o.events.at(o.now+o.P.OperatorFailoverTime, operatorEvent{kind: evOpFailover, m: int32(o.host), epoch: o.epoch})
	}
	if o.host >= 0 && !o.kube.nodes[o.host].ready && o.started {
		n := &o.kube.nodes[o.host]
		at := n.readyLT + o.P.PodEvictionTimeout
		if at < o.now {
			at = o.now
		}
		o.events.at(at, operatorEvent{kind: evOpEvicted, m: int32(o.host), gen: n.readyGen})
	}
}

// setStalled stalls or resumes the operator (the operator-stall fault).
func (o *operator) setStalled(on bool) {
	o.stalled = on
	o.recompute()
}

// hostChanged: machine i's hardware or phase changed.
func (o *operator) hostChanged(i int) {
	if o.host == i {
		o.recompute()
	}
	o.machineChanged(i)
}

// readyChanged: machine i's Node turned Ready or NotReady.
func (o *operator) readyChanged(i int) {
	if o.host == i {
		o.recompute()
	}
	o.nodeReadyChanged(i)
}

// nodeNotReady: machine i's Node turned NotReady; the operator's pod on it
// is evicted podEvictionTimeout later.
func (o *operator) nodeNotReady(i int, readyGen int32) {
	if o.host == i && !o.up {
		o.events.at(o.now+o.P.PodEvictionTimeout, operatorEvent{kind: evOpEvicted, m: int32(i), gen: readyGen})
	}
}

func (o *operator) evicted(host int, gen int32) {
	if o.host != host || o.up {
		return
	}
	if n := &o.kube.nodes[host]; n.readyGen != gen || n.ready {
		return
	}
	o.restart(host, "evicted from")
}

// taintDeleted: machine i got the out-of-service taint; the pod GC
// force-deleted the operator's pod if it ran there, and its Deployment
// starts a new one elsewhere.
func (o *operator) taintDeleted(i int) {
	if o.host == i && o.started {
		o.restart(i, "force-deleted by the out-of-service taint on")
	}
}

// restart starts the operator's pod anew on the first schedulable machine
// other than host.
func (o *operator) restart(host int, why string) {
	next := -1
	for i := range o.fleet.m {
		if c := &o.fleet.m[i]; i != host && o.kube.nodes[i].ready && !o.kube.nodes[i].tainted && c.link[linkAPI] && c.link[linkPublic] {
			next = i
			break
		}
	}
	o.started = false
	o.host = next
	o.epoch++
	o.up = false
	if o.rec != nil {
		o.logf("operator", "operator pod %s %s, restarting", why, o.fleet.m[host].Name)
	}
	o.events.at(o.now+o.P.OperatorStartTime, operatorEvent{kind: evOpStarted, m: int32(next), epoch: o.epoch})
}

// failover: with a highly available operator (leader election across
// nodes), a standby on a healthy machine takes the lease when the leader
// cannot reach the API or Ceph.
func (o *operator) failover(host int, epoch int32) {
	if epoch != o.epoch {
		return
	}
	for i := range o.fleet.m {
		c := &o.fleet.m[i]
		if i != host && o.kube.nodes[i].ready && c.alive() && c.link[linkAPI] && c.link[linkPublic] {
			if o.rec != nil {
				o.logf("operator", "leader on %s lost the API or Ceph; standby on %s takes the lease", o.fleet.m[host].Name, c.Name)
			}
			o.host = i
			o.recompute()
			return
		}
	}
	o.events.at(o.now+o.P.OperatorFailoverTime, operatorEvent{kind: evOpFailover, m: int32(host), epoch: o.epoch})
}
