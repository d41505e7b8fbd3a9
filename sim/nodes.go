package sim

// The Kubernetes controllers: the Node (its kubelet's heartbeat, the node
// lifecycle controller's Ready condition), the pods on it (pods.go) and the
// out-of-service taint (oos.go).

// node is a machine's Node object as the API server holds it.
type node struct {
	hasNode  bool  // the Node object exists
	hbOK     bool  // the kubelet posts status (the host runs and reaches the API)
	hbGen    int32 // changes whenever hbOK does
	ready    bool  // the Ready condition
	readyLT  Time  // its lastTransitionTime
	readyGen int32 // changes at every transition
	everUp   bool  // Ready since the Machine was created
	tainted  bool  // node.kubernetes.io/out-of-service
}

// kubeEventKind names a Kubernetes controllers' event.
type kubeEventKind uint8

const (
	evNodeNotReady kubeEventKind = iota // the node-monitor grace expired
	evPodsEvicted                       // the not-ready taints' tolerationSeconds expired
	evEvictedGone                       // the kubelet deleted the evicted pods it killed
	evStaleKill                         // the kubelet killed the containers of deleted pods
	evPodStart                          // a workload's new pod runs and its client takes the lock
)

// kubeEvent is an event of the Kubernetes controllers. For node events n
// is the machine and gen the Node's heartbeat or Ready generation; for
// evPodStart n is the workload, gen its move generation and host the
// machine of a restart in place (-1: scheduled anywhere).
type kubeEvent struct {
	kind kubeEventKind
	n    int32
	gen  int32
	host int32
}

// kube is the Kubernetes controllers: the node lifecycle controller, the
// taint manager, the pod GC, the attach-detach controller, the workloads'
// StatefulSets or ReplicaSets, and each node's kubelet.
type kube struct {
	*core
	events  mailbox[kubeEvent]
	fleet   *fleet
	clients *rbdClients
	ceph    *cephCluster
	op      *operator
	csi     *cephCSI
	faults  *injector
	watch   *monitor

	nodes []node
}

func (k *kube) init(machines int) {
	k.nodes = make([]node, machines)
	for i := range k.nodes {
		n := &k.nodes[i]
		n.hasNode, n.hbOK, n.ready, n.everUp = true, true, true, true
	}
}

func (k *kube) handle(e kubeEvent) {
	i := int(e.n)
	switch e.kind {
	case evNodeNotReady:
		if n := &k.nodes[i]; e.gen == n.hbGen && !n.hbOK && n.ready {
			k.setReady(i, false)
		}
	case evPodsEvicted:
		k.podEvict(i, e.gen)
	case evEvictedGone:
		k.evictedDeleted(i, e.gen)
	case evStaleKill:
		k.staleKill(i, e.gen)
	case evPodStart:
		k.podStart(i, e.gen, int(e.host))
	}
}

func (k *kube) at(t Time, kind kubeEventKind, i int, gen int32) {
	k.events.at(t, kubeEvent{kind: kind, n: int32(i), gen: gen, host: -1})
}

// heartbeat follows machine i's kubelet: it posts status while the host
// runs and reaches the API; the node lifecycle controller marks the Node
// NotReady nodeMonitorGracePeriod after the last post, Ready at the next.
func (k *kube) heartbeat(i int) {
	m := &k.fleet.m[i]
	n := &k.nodes[i]
	hb := m.reaches(linkAPI) && n.hasNode
	if hb == n.hbOK {
		return
	}
	if hb && n.tainted {
		// the kubelet is back under the out-of-service taint: it kills
		// the pods the taint evicted, OSDs included - the taint's fence
		// takes effect now
		k.watch.checkCutOff(i, "the out-of-service taint, "+m.Name+"'s kubelet back, evicting its OSD pods,")
	}
	n.hbOK = hb
	n.hbGen++
	if hb {
		if !n.ready {
			k.setReady(i, true)
		}
	} else if n.ready {
		k.at(k.now+k.P.NodeMonitorGracePeriod, evNodeNotReady, i, n.hbGen)
	}
}

// setReady moves the Node's Ready condition and its lastTransitionTime.
func (k *kube) setReady(i int, v bool) {
	n := &k.nodes[i]
	if n.ready == v {
		return
	}
	n.ready = v
	n.readyLT = k.now
	n.readyGen++
	if k.rec != nil {
		st := "Ready"
		if !v {
			st = "NotReady"
		}
		k.logf("node", "%s %s", k.fleet.m[i].Name, st)
		k.watch.plotNode(i)
	}
	if v {
		n.everUp = true
		k.fleet.nodeReady(i)
		k.oosReady(i)
		k.kubeletBack(i)
		k.restartLocal(i)
	} else {
		k.fleet.recheck(i, n.readyGen)
		k.op.nodeNotReady(i, n.readyGen)
		if len(k.clients.workloads) > 0 {
			k.at(k.now+k.P.PodEvictionTimeout, evPodsEvicted, i, n.readyGen)
		}
	}
	k.op.readyChanged(i)
	k.watch.machineChanged(i)
}

// nodeRegistered: machine i's kubelet registered its Node.
func (k *kube) nodeRegistered(i int) { k.nodes[i].hasNode = true }

// nodeCreated: machine i is a new Machine whose Node does not exist yet
// (never Ready); it returns the Ready generation the MHC watches.
func (k *kube) nodeCreated(i int) int32 {
	n := &k.nodes[i]
	n.everUp = false
	n.readyLT = k.now
	n.readyGen++
	return n.readyGen
}
