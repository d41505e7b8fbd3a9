package sim

import "fmt"

// This file models the clients fencing protects: RBD/CephFS clients of
// workloads (pods with a ReadWriteOnce volume) on the machines, the
// volume's exclusive lock, and Ceph's client blocklist.
//
// A workload has one current client (the pod Kubernetes believes runs it).
// When its pod is deleted from the API (the node object is deleted, or the
// out-of-service taint force-deletes it) the workload moves: a new client
// starts on another Ready node after WorkloadStartTime and takes the
// exclusive lock. RBD's exclusive lock is cooperative (the owner hands it
// over on request and takes it back to write), so it does not stop the old
// client: a process that still runs on the old host keeps writing unless
// its address is blocklisted. The old process dies when its host loses
// power, reboots or is replaced, or when its kubelet reaches the API again
// and kills the deleted pod (StaleKillTime later).
//
// A blocklist entry covers one machine's client address and has an expiry
// (Ceph's mon_osd_blocklist_default_expire, 1 h, unless the fencer sets
// one). On cloud a replacement machine gets a new address; a bare-metal
// host keeps its address across reprovisioning and reboots.

// client is one RBD client process of a workload.
type client struct {
	w       int32 // workload
	host    int32 // machine
	gen     int32 // host incarnation the process runs on
	addr    int32 // address generation (see addrGen)
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

// blockEntry is a blocklist entry for one machine's client address.
type blockEntry struct {
	addr  int32
	until Time // 0: none
}

type clientState struct {
	clients   []client
	workloads []workload
	// counters kept incrementally for the metrics
	nStaleWriting int // stale clients whose writes are accepted
	nCurWriting   int // current clients whose writes are accepted
	// stale clients whose writes are accepted while their workload's new
	// client holds the lock: the writes it never sees (split-brain)
	nSplit int
}

// addrGen is the address generation of machine i: a cloud replacement gets
// a new address, a bare-metal host keeps its own.
func (s *Sim) addrGen(i int) int32 {
	if s.cfg.Cluster.BareMetal {
		return 0
	}
	return s.machines[i].gen
}

func (s *Sim) initClients() {
	n := s.cfg.Cluster.Clients
	s.cl.workloads = make([]workload, n)
	for w := 0; w < n; w++ {
		h := w % len(s.machines)
		s.cl.workloads[w].cur, s.cl.workloads[w].prev = -1, -1
		s.startClient(w, h)
	}
}

// lockWait is how long workload w's new client must wait for the
// exclusive lock: an old client that lost Ceph less than
// osdClientWatchTimeout ago still has its watch, and librbd breaks the
// lock of an owner only once its watch is gone (0: no wait).
func (s *Sim) lockWait(w int) Time {
	var wait Time
	for k := range s.cl.clients {
		// the OSDs drop a blocklisted client's watch at once
		// (check_blocklisted_watchers)
		if c := &s.cl.clients[k]; c.w == int32(w) && !c.current && !c.dead && !c.writes && !s.blocklisted(c) && c.broken <= s.now {
			wait = max(wait, c.since+s.P.OSDClientWatchTimeout-s.now)
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
func (s *Sim) breakLocks(w, h int) {
	if !s.P.RBDBlocklistOnBreakLock {
		return
	}
	exp := s.P.RBDBlocklistExpire
	if exp == 0 {
		exp = s.P.BlocklistExpire
	}
	for k := range s.cl.clients {
		c := &s.cl.clients[k]
		if c.w != int32(w) || c.current || c.dead || c.writes || c.broken > s.now {
			continue
		}
		c.broken = s.now + exp
		s.schedule(c.broken, evLockBreakExpire, int32(k), 0, int64(c.broken))
		if s.rec != nil {
			s.logf("client", "w%d's new client on %s broke the lock of its old client on %s (watch expired) and blocklisted that client until %s", w, s.machines[h].Name, s.machines[c.host].Name, c.broken)
		}
	}
}

// lockBreakExpire: the blocklist entry of a broken lock's client expired.
func (s *Sim) lockBreakExpire(ci int, until Time) {
	if c := &s.cl.clients[ci]; c.broken == until {
		s.clientsOn(int(c.host))
	}
}

// startClient starts workload w's client on machine h; it holds the lock.
func (s *Sim) startClient(w, h int) {
	s.breakLocks(w, h)
	ci := int32(len(s.cl.clients))
	s.cl.clients = append(s.cl.clients, client{w: int32(w), host: int32(h), gen: s.machines[h].gen, addr: s.addrGen(h), current: true, started: true})
	s.machines[h].clients = append(s.machines[h].clients, ci)
	wl := &s.cl.workloads[w]
	wl.cur, wl.home = ci, int32(h)
	s.cl.nSplit += int(wl.staleW)
	s.clientEval(int(ci))
	if s.cl.nStaleWriting > 0 {
		for k := range s.cl.clients {
			if c := &s.cl.clients[k]; c.w == int32(w) && !c.current && c.writes {
				s.violate(7, fmt.Sprintf("split-brain: workload w%d started on %s while its old client on %s still writes (not blocklisted)", w, s.machines[h].Name, s.machines[c.host].Name))
				break
			}
		}
	}
}

// blocklisted reports whether client c's address is on the blocklist.
func (s *Sim) blocklisted(c *client) bool {
	e := &s.machines[c.host].block
	return e.until > s.now && e.addr == c.addr
}

// clientEval recomputes whether client ci's writes are accepted and checks
// the split-brain invariant.
func (s *Sim) clientEval(ci int) {
	c := &s.cl.clients[ci]
	m := &s.machines[c.host]
	if !c.dead && (m.gen != c.gen || m.phase != PhaseRunning || !m.powered) {
		c.dead = true
	}
	// without quorum a client that has its map and sessions keeps writing
	// to the PGs that serve (metrics.go counts the others)
	w := !c.dead && m.alive() && m.link[linkPublic] && !s.blocklisted(c) && c.broken <= s.now
	if w == c.writes {
		return
	}
	c.writes, c.since = w, s.now
	d := 1
	if !w {
		d = -1
	}
	if c.current {
		s.cl.nCurWriting += d
		return
	}
	s.cl.nStaleWriting += d
	wl := &s.cl.workloads[c.w]
	wl.staleW += int32(d)
	if wl.cur >= 0 {
		s.cl.nSplit += d
	}
	if w {
		if wl.cur >= 0 && s.cl.clients[wl.cur].started {
			s.violate(7, fmt.Sprintf("split-brain: workload w%d moved to %s but its old client on %s writes (not blocklisted)", c.w, s.machines[s.cl.clients[wl.cur].host].Name, m.Name))
		}
	}
}

// clientsOn re-evaluates the clients on machine i and drops dead ones.
func (s *Sim) clientsOn(i int) {
	m := &s.machines[i]
	k := 0
	for _, ci := range m.clients {
		s.clientEval(int(ci))
		c := &s.cl.clients[ci]
		if !c.dead {
			m.clients[k] = ci
			k++
		} else if c.current {
			s.workloadLost(int(c.w), int(ci))
		}
	}
	m.clients = m.clients[:k]
	if len(m.clients) > 0 && m.alive() && m.link[linkAPI] {
		// the kubelet reaches the API: it kills pods deleted meanwhile
		for _, ci := range m.clients {
			if !s.cl.clients[ci].current {
				s.schedule(s.now+s.P.StaleKillTime, evStaleKill, int32(i), m.hbGen, 0)
				break
			}
		}
	}
}

// staleOn reports whether machine i still runs a client whose pod was
// deleted or evicted.
func (s *Sim) staleOn(i int) bool {
	for _, ci := range s.machines[i].clients {
		if c := &s.cl.clients[ci]; !c.dead && (!c.current || s.cl.workloads[c.w].evicted) {
			return true
		}
	}
	return false
}

// allClients re-evaluates every client (a change of mon quorum).
func (s *Sim) allClients() {
	for i := range s.machines {
		if len(s.machines[i].clients) > 0 {
			s.clientsOn(i)
		}
	}
}

// staleKill: the kubelet, back on the API, kills the containers of pods
// that were deleted while it was away.
func (s *Sim) staleKill(i int, hbGen int32) {
	m := &s.machines[i]
	if m.hbGen != hbGen || !m.alive() || !m.link[linkAPI] {
		return
	}
	for _, ci := range m.clients {
		if c := &s.cl.clients[ci]; !c.current && !c.dead {
			c.dead = true
			if s.rec != nil {
				s.logf("client", "kubelet on %s killed the deleted pod of w%d", m.Name, c.w)
			}
		}
	}
	s.clientsOn(i)
}

// workloadLost: the current client of w died with its host but the pod is
// not deleted; Kubernetes restarts it on the same machine when it is back
// (a reboot), or it moves when the node object is deleted.
func (s *Sim) workloadLost(w, ci int) {
	c := &s.cl.clients[ci]
	s.cl.clients[ci].current = false
	if c.writes {
		s.cl.nCurWriting--
		c.writes = false
	}
	wl := &s.cl.workloads[w]
	wl.cur = -1
	s.cl.nSplit -= int(wl.staleW)
	s.schedule(s.now+s.jit(s.P.WorkloadStartTime), evClientStart, int32(w), wl.moveGen, int64(c.host))
}

// blocklist adds (until > now) or removes (until 0) the blocklist entry of
// machine i's current address.
func (s *Sim) blocklist(i int, until Time, by string) {
	m := &s.machines[i]
	m.block = blockEntry{addr: s.addrGen(i), until: until}
	if s.rec != nil {
		if until >= forever {
			s.logf("ceph", "client address of %s blocklisted by %s (no expiry)", m.Name, by)
		} else if until > s.now {
			s.logf("ceph", "client address of %s blocklisted by %s until %s", m.Name, by, until)
		} else {
			s.logf("ceph", "client address of %s removed from the blocklist by %s", m.Name, by)
		}
	}
	if until > s.now && until < forever {
		s.schedule(until, evBlockExpire, int32(i), 0, int64(until))
	}
	if until > s.now && m.ready && !m.tainted {
		s.violate(8, fmt.Sprintf("%s blocklisted the client address of %s, a Ready node that may run workloads", by, m.Name))
	}
	s.clientsOn(i)
}

// forever is a blocklist entry without expiry.
const forever = Time(1) << 62

func (s *Sim) blockExpire(i int, until Time) {
	m := &s.machines[i]
	if m.block.until != until {
		return
	}
	if s.rec != nil {
		s.logf("ceph", "blocklist entry of %s expired", m.Name)
	}
	s.clientsOn(i)
}
