package sim

import "fmt"

// This file models the clients fencing protects: RBD/CephFS clients of
// workloads (pods with a ReadWriteOnce volume) on the machines, and the
// volume's exclusive lock; the blocklist is the OSD map's (blocklist.go).
//
// A workload has one current client (the pod Kubernetes believes runs it).
// When its pod is deleted from the API (the node object is deleted, or the
// out-of-service taint force-deletes it) the workload moves: a new client
// starts on another Ready node after WorkloadStartTime and takes the
// exclusive lock (pods.go). RBD's exclusive lock is cooperative (the owner
// hands it over on request and takes it back to write), so it does not
// stop the old client: a process that still runs on the old host keeps
// writing unless its address is blocklisted. The old process dies when its
// host loses power, reboots or is replaced, or when its kubelet reaches
// the API again and kills the deleted pod (StaleKillTime later).

// client is one RBD client process of a workload.
type client struct {
	w       int32 // workload
	host    int32 // machine
	gen     int32 // host incarnation the process runs on
	addr    int32 // address generation (see fleet.addr)
	dead    bool  // the process is gone
	current bool  // the workload's current client (holds the lease)
	started bool  // has taken the lock (current clients only)
	writes  bool  // cached: the client's writes are accepted now
	since   Time  // when writes last changed (its watch times out osdClientWatchTimeout after it lost Ceph)
	broken  Time  // its lock was broken and this instance blocklisted until then (rbd_blocklist_on_break_lock)
}

// workload is a pod with a ReadWriteOnce volume (pods.go moves it).
type workload struct {
	cur     int32 // current client (-1: none running)
	home    int32 // machine of the latest client
	prev    int32 // machine it moved away from last (-1: never moved)
	moveGen int32
	evicted bool  // its pod on home is marked for deletion (taint-based eviction)
	staleW  int32 // its old clients whose writes are accepted
}

// clientEvent is the end of client c's blocklisting by a lock break.
type clientEvent struct {
	c     int32
	until Time
}

// rbdClients is the workloads' RBD clients and their exclusive locks.
type rbdClients struct {
	*core
	events mailbox[clientEvent]
	fleet  *fleet
	kube   *kube
	ceph   *cephCluster
	watch  *monitor

	clients   []client
	workloads []workload
	onHost    [][]int32 // per machine: its client processes
	staleEnd  []Time    // per machine: when a client process there last died
	// counters kept incrementally for the metrics
	nStaleWriting int // stale clients whose writes are accepted
	nCurWriting   int // current clients whose writes are accepted
	// stale clients whose writes are accepted while their workload's new
	// client holds the lock: the writes it never sees (split-brain)
	nSplit int
}

func (r *rbdClients) init() {
	n := r.cfg.Cluster.Clients
	r.onHost = make([][]int32, len(r.fleet.m))
	r.staleEnd = make([]Time, len(r.fleet.m))
	r.workloads = make([]workload, n)
	for w := 0; w < n; w++ {
		h := w % len(r.fleet.m)
		r.workloads[w].cur, r.workloads[w].prev = -1, -1
		r.start(w, h)
	}
}

func (r *rbdClients) handle(e clientEvent) {
	if c := &r.clients[e.c]; c.broken == e.until {
		r.clientsOn(int(c.host))
	}
}

// lockWait is how long workload w's new client must wait for the
// exclusive lock: an old client that lost Ceph less than
// osdClientWatchTimeout ago still has its watch, and librbd breaks the
// lock of an owner only once its watch is gone (0: no wait).
func (r *rbdClients) lockWait(w int) Time {
	var wait Time
	for k := range r.clients {
		// the OSDs drop a blocklisted client's watch at once
		// (check_blocklisted_watchers)
		if c := &r.clients[k]; c.w == int32(w) && !c.current && !c.dead && !c.writes && !r.blocklisted(c) && c.broken <= r.now {
			wait = max(wait, c.since+r.P.OSDClientWatchTimeout-r.now)
		}
	}
	return wait
}

// breakLocks: workload w's new client on machine h takes the exclusive
// lock. An old client whose watch is alive (it runs and reaches Ceph)
// hands the lock over and asks for it back when it writes again
// (cooperative: both write). One whose watch expired is a dead owner:
// librbd breaks its lock and, with rbd_blocklist_on_break_lock (true),
// blocklists that client instance for rbd_blocklist_expire_seconds (0: the
// OSD default, mon_osd_blocklist_default_expire, 1 h).
func (r *rbdClients) breakLocks(w, h int) {
	if !r.P.RBDBlocklistOnBreakLock {
		return
	}
	exp := r.P.RBDBlocklistExpire
	if exp == 0 {
		exp = r.P.BlocklistExpire
	}
	for k := range r.clients {
		c := &r.clients[k]
		if c.w != int32(w) || c.current || c.dead || c.writes || c.broken > r.now {
			continue
		}
		c.broken = r.now + exp
		r.events.at(c.broken, clientEvent{c: int32(k), until: c.broken})
		if r.rec != nil {
			r.logf("client", "w%d's new client on %s broke the lock of its old client on %s (watch expired) and blocklisted that client until %s", w, r.fleet.m[h].Name, r.fleet.m[c.host].Name, c.broken)
		}
	}
}

// start starts workload w's client on machine h; it holds the lock.
func (r *rbdClients) start(w, h int) {
	r.breakLocks(w, h)
	ci := int32(len(r.clients))
	r.clients = append(r.clients, client{w: int32(w), host: int32(h), gen: r.fleet.m[h].gen, addr: r.fleet.addr(h), current: true, started: true})
	r.onHost[h] = append(r.onHost[h], ci)
	wl := &r.workloads[w]
	wl.cur, wl.home = ci, int32(h)
	r.nSplit += int(wl.staleW)
	r.eval(int(ci))
	if r.nStaleWriting > 0 {
		for k := range r.clients {
			if c := &r.clients[k]; c.w == int32(w) && !c.current && c.writes {
				r.watch.violate(7, fmt.Sprintf("split-brain: workload w%d started on %s while its old client on %s still writes (not blocklisted)", w, r.fleet.m[h].Name, r.fleet.m[c.host].Name))
				break
			}
		}
	}
}

// blocklisted reports whether client c's address is on the blocklist.
func (r *rbdClients) blocklisted(c *client) bool { return r.ceph.blocklisted(int(c.host), c.addr) }

// eval recomputes whether client ci's writes are accepted and checks the
// split-brain invariant.
func (r *rbdClients) eval(ci int) {
	c := &r.clients[ci]
	m := &r.fleet.m[c.host]
	if !c.dead && (m.gen != c.gen || m.phase != PhaseRunning || !m.powered) {
		c.dead = true
	}
	// without quorum a client that has its map and sessions keeps writing
	// to the PGs that serve (metrics.go counts the others)
	w := !c.dead && m.reaches(linkPublic) && !r.blocklisted(c) && c.broken <= r.now
	if w == c.writes {
		return
	}
	c.writes, c.since = w, r.now
	d := 1
	if !w {
		d = -1
	}
	if c.current {
		r.nCurWriting += d
		return
	}
	r.nStaleWriting += d
	wl := &r.workloads[c.w]
	wl.staleW += int32(d)
	if wl.cur >= 0 {
		r.nSplit += d
	}
	if w {
		if wl.cur >= 0 && r.clients[wl.cur].started {
			r.watch.violate(7, fmt.Sprintf("split-brain: workload w%d moved to %s but its old client on %s writes (not blocklisted)", c.w, r.fleet.m[r.clients[wl.cur].host].Name, m.Name))
		}
	}
}

// hostChanged: machine i's hardware, network or blocklist entry changed.
func (r *rbdClients) hostChanged(i int) {
	if len(r.onHost[i]) > 0 {
		r.clientsOn(i)
	}
}

// clientsOn re-evaluates the clients on machine i and drops dead ones.
func (r *rbdClients) clientsOn(i int) {
	on := r.onHost[i]
	k := 0
	for _, ci := range on {
		r.eval(int(ci))
		c := &r.clients[ci]
		switch {
		case !c.dead:
			on[k] = ci
			k++
			continue
		case c.current:
			r.workloadLost(int(c.w), int(ci))
		}
		r.staleEnd[i] = r.now
	}
	r.onHost[i] = on[:k]
	if k > 0 && r.fleet.m[i].reaches(linkAPI) {
		// the kubelet reaches the API: it kills pods deleted meanwhile
		for _, ci := range r.onHost[i] {
			if !r.clients[ci].current {
				r.kube.staleKillAfter(i)
				break
			}
		}
	}
}

// staleOn reports whether machine i still runs a client whose pod was
// deleted or evicted.
func (r *rbdClients) staleOn(i int) bool {
	for _, ci := range r.onHost[i] {
		if c := &r.clients[ci]; !c.dead && (!c.current || r.workloads[c.w].evicted) {
			return true
		}
	}
	return false
}

// allChanged re-evaluates every client (a change of mon quorum).
func (r *rbdClients) allChanged() {
	for i := range r.onHost {
		r.hostChanged(i)
	}
}

// killDeleted: the kubelet on machine i killed the containers of its pods
// deleted while it was away.
func (r *rbdClients) killDeleted(i int) {
	for _, ci := range r.onHost[i] {
		if c := &r.clients[ci]; !c.current && !c.dead {
			c.dead = true
			if r.rec != nil {
				r.logf("client", "kubelet on %s killed the deleted pod of w%d", r.fleet.m[i].Name, c.w)
			}
		}
	}
	r.clientsOn(i)
}

// killEvicted: the kubelet on machine i killed the containers of its
// evicted pods.
func (r *rbdClients) killEvicted(i int) {
	for _, ci := range r.onHost[i] {
		if c := &r.clients[ci]; c.current && r.workloads[c.w].evicted {
			c.dead = true
		}
	}
	r.clientsOn(i)
}

// podDeleted: workload w's pod on machine i left the API; its client, if
// it runs, is no longer current.
func (r *rbdClients) podDeleted(w, i int) {
	wl := &r.workloads[w]
	if wl.cur >= 0 {
		r.nSplit -= int(wl.staleW)
		c := &r.clients[wl.cur]
		if c.writes {
			r.nCurWriting--
			r.nStaleWriting++
			wl.staleW++
		}
		c.current = false
	}
	wl.cur, wl.home, wl.prev, wl.evicted = -1, -1, int32(i), false
	wl.moveGen++
}

// workloadLost: the current client of w died with its host but the pod is
// not deleted; Kubernetes restarts it on the same machine when it is back
// (a reboot), or it moves when the node object is deleted.
func (r *rbdClients) workloadLost(w, ci int) {
	c := &r.clients[ci]
	c.current = false
	if c.writes {
		r.nCurWriting--
		c.writes = false
	}
	wl := &r.workloads[w]
	wl.cur = -1
	r.nSplit -= int(wl.staleW)
	r.kube.restartPod(w, int(c.host))
}

// watchers lists the machines whose clients watch the images of the
// workloads that moved away from machine i, as `rbd status` shows them:
// the new client once it holds the lock, else an old client that still
// writes.
func (r *rbdClients) watchers(i int) []int32 {
	var out []int32
	for w := range r.workloads {
		wl := &r.workloads[w]
		if wl.prev != int32(i) {
			continue
		}
		if wl.cur >= 0 && r.clients[wl.cur].started {
			out = append(out, r.clients[wl.cur].host)
			continue
		}
		for _, ci := range r.onHost[i] {
			if c := &r.clients[ci]; c.w == int32(w) && c.writes {
				out = append(out, int32(i))
			}
		}
	}
	return out
}
