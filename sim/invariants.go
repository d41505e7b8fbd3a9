package sim

import (
	"fmt"
	"sort"
	"strings"
)

// The invariants, checked after every step (event). Checks run where the
// state they depend on changes, so each costs O(1) or O(PGs on one machine):
//
//  1. At most one failure domain (the pool's; host by default) has
//     OSD-bearing machines fenced (remediated or cut off from storage) or
//     not yet back (Running, node Ready, all OSDs up): machines of one
//     domain share no PG, so fencing them together costs each PG one
//     replica at most.
//  2. A labelled machine is never fenced on a health observation older than
//     the fault (the MDB value, or the safe policy's grant, must have been
//     observed after the machine's latest fault).
//  3. No PG drops below min_size because of a fence: a fence, a cut-off, or
//     the out-of-service taint's eviction of a node's OSD pods when its
//     kubelet is back, that stops serving OSDs must leave every PG whose
//     acting set had min_size serving OSDs with min_size (a backfill
//     target is not in the acting set).
//  4. Every PG keeps at least one replica with the latest writes.
//  5. A node whose OSDs may still serve (daemon running, not blocklisted,
//     public network reachable, up in the map) is never deleted.
//  6. Bounded liveness (liveness.go): no machine down and unfenced, no
//     lost quorum, no degraded or unavailable PGs for longer than a stated
//     bound (for degraded PGs scaled with the data to move), whatever the
//     cause; each violation names its cause (causes.go).
//  7. Split-brain (clients.go): no write accepted from a client whose
//     workload has moved while the new client holds the lock.
//  8. No fence blocklists the client address of a Ready node that may run
//     workloads (blocklist.go).

// InvariantDocs describes each invariant by number.
var InvariantDocs = map[int]string{
	1: "at most one OSD-bearing machine (failure domain) fenced or not yet back",
	2: "no labelled machine fenced on a health observation older than the fault",
	3: "no PG drops below min_size because of a fence",
	4: "every PG keeps a replica with the latest writes",
	5: "no node whose OSDs may still serve is deleted before it is cut off from storage",
	6: "bounded liveness: no machine down and unfenced, no lost quorum, no degraded PGs for longer than a stated bound, whatever the cause",
	7: "split-brain: no write accepted from a client whose workload has moved",
	8: "no fence blocklists the client address of a Ready node that may run workloads (without the out-of-service taint)",
}

// numInvariants is one more than the highest invariant number.
const numInvariants = 9

// Violation is one broken invariant.
type Violation struct {
	Inv  int
	At   Time
	Text string
}

// String renders the violation with its time and invariant.
func (v Violation) String() string {
	return fmt.Sprintf("%s inv%d (%s): %s", v.At, v.Inv, InvariantDocs[v.Inv], v.Text)
}

// livenessEventKind names an event of invariant 6's episodes.
type livenessEventKind uint8

const (
	evEpisodeDue livenessEventKind = iota // an episode reached its bound
	evEpisodeEnd                          // a condition stayed away for livenessStable
)

// livenessEvent is an event of episode ep (of machine m for a node
// episode) in its generation gen.
type livenessEvent struct {
	kind livenessEventKind
	ep   episodeKind
	m    int32
	gen  int32
}

// monitor checks the invariants after every event and measures the run.
type monitor struct {
	*core
	events  mailbox[livenessEvent]
	fleet   *fleet
	kube    *kube
	ceph    *cephCluster
	pgs     *pgMap
	clients *rbdClients
	op      *operator
	safe    *safeController

	viols      []Violation
	stop       bool
	inv1Active bool
	// invariant 1: machines fenced or not yet back, per failure domain
	fenced       []bool
	nFenced      int
	fencedPerDom []int
	fencedDoms   int
	faultAt      []Time // invariant 2: a machine's latest fault while Ready (-1: none)
	// invariant 6's episodes (liveness.go)
	downEp               []episode
	downEpGen            []int32 // its Node's Ready generation when a machine's episode began
	quorumEp, degradedEp episode
	degMovedAt           float64 // the data recovery had moved when the degraded episode began (MB)
	metrics              Metrics
}

func (w *monitor) init() {
	n := len(w.fleet.m)
	w.fenced, w.fencedPerDom, w.faultAt, w.downEp = make([]bool, n), make([]int, n), make([]Time, n), make([]episode, n)
	w.downEpGen = make([]int32, n)
	for i := range w.faultAt {
		w.faultAt[i] = -1
		w.downEp[i].start = -1
	}
	w.quorumEp.start, w.degradedEp.start = -1, -1
}

func (w *monitor) violate(inv int, text string) {
	for _, v := range w.viols {
		if v.Inv == inv && v.At == w.now {
			return
		}
	}
	w.viols = append(w.viols, Violation{Inv: inv, At: w.now, Text: text})
	if w.rec != nil {
		w.logf("VIOLATION", "inv%d: %s", inv, text)
	}
	if !w.cfg.KeepGoing {
		w.stop = true
	}
}

// afterStep runs after every event: global O(1) checks and metrics.
func (w *monitor) afterStep() {
	if w.fencedDoms > 1 {
		if !w.inv1Active {
			w.inv1Active = true
			var names []string
			for i := range w.fleet.m {
				if w.fenced[i] {
					names = append(names, w.fleet.m[i].Name)
				}
			}
			what := "OSD machines"
			if fd := w.cfg.Cluster.failureDomain(); fd != CrushHost {
				what = fmt.Sprintf("%ss with OSD machines", fd)
			}
			w.violate(1, fmt.Sprintf("%d %s fenced or not back at once: %s", w.fencedDoms, what, strings.Join(names, ", ")))
		}
	} else {
		w.inv1Active = false
	}
	w.clusterLiveness()
	w.metrics.step(w)
}

// noteFault: a fault that breaks machine i starts now (invariant 2 compares
// the gating observation with it).
func (w *monitor) noteFault(i int) {
	if w.kube.nodes[i].ready {
		w.faultAt[i] = w.now
	}
}

// checkFence checks invariants 2, 3 and 5 just before machine i is fenced.
func (w *monitor) checkFence(i int, kind FenceKind) {
	m := &w.fleet.m[i]
	g := &w.safe.g[i]
	fa := w.faultAt[i]
	// The gating observation is the external remediation's own (safe) or,
	// for an MDB-covered machine, the one the MDB's value came from.
	if g.granted {
		if fa >= 0 && g.grantObs < fa {
			w.violate(2, fmt.Sprintf("%s fenced on a grant observed at %s, before its fault at %s", m.Name, g.grantObs, fa))
		}
	} else if m.labelled && w.pol.Gate != gateNone && fa >= 0 && w.fleet.mdbObs < fa {
		w.violate(2, fmt.Sprintf("%s fenced while labelled, on MDB maxUnavailable=%d observed at %s, before its fault at %s", m.Name, w.fleet.mdbMax, w.fleet.mdbObs, fa))
	}
	w.checkCutOff(i, "fencing "+m.Name)
	if kind == FenceDelete || kind == FenceDeleteWipe {
		for _, oi := range w.ceph.hostOSDs[i] {
			if w.ceph.serving(int(oi)) {
				w.violate(5, fmt.Sprintf("%s deleted while osd.%d may still serve (daemon running, up in the map, public network reachable)", m.Name, oi))
				break
			}
		}
	}
}

// checkCutOff checks invariant 3 for an action that stops machine i's
// OSDs: a PG whose acting set had min_size serving OSDs, this machine's
// among them, must keep min_size (a backfill target on it, or elsewhere,
// is no replica: it is not in the acting set).
func (w *monitor) checkCutOff(i int, what string) {
	c := w.ceph
	for _, oi := range c.hostOSDs[i] {
		if !c.serving(int(oi)) {
			continue
		}
		for _, pi := range c.osds[oi].pgs {
			p := &w.pgs.pgs[pi]
			if w.pgs.acting(p, 1<<slotOf(p, int(oi))) == 0 {
				continue
			}
			n := 0
			for k := 0; k < w.P.PoolSize; k++ {
				if o := p.slot[k]; o >= 0 && w.pgs.acting(p, 1<<k) != 0 && c.serving(int(o)) {
					n++
				}
			}
			if n >= w.P.PoolMinSize && n-1 < w.P.PoolMinSize {
				w.violate(3, fmt.Sprintf("%s drops PG %d from %d to %d serving replicas in its acting set (min_size %d)", what, pi, n, n-1, w.P.PoolMinSize))
				return
			}
		}
	}
}

// setFenced marks an OSD machine "fenced or not yet back" (invariant 1).
func (w *monitor) setFenced(i int) {
	if len(w.ceph.hostOSDs[i]) == 0 || w.fenced[i] {
		return
	}
	w.fenced[i] = true
	w.nFenced++
	w.fencedDom(i, 1)
}

// clearFenced drops machine i from "fenced or not yet back" (invariant 1).
func (w *monitor) clearFenced(i int) {
	if !w.fenced[i] {
		return
	}
	w.fenced[i] = false
	w.nFenced--
	w.fencedDom(i, -1)
	if w.rec != nil {
		w.logf("machine", "%s gone for good: no longer counted as fenced and not back", w.fleet.m[i].Name)
	}
}

// backCheck clears "fenced or not yet back" once the machine runs, its node
// is Ready and all its OSDs are up.
func (w *monitor) backCheck(i int) {
	m := &w.fleet.m[i]
	if !w.fenced[i] || m.phase != PhaseRunning || !w.kube.nodes[i].ready || w.ceph.upOSDs[i] != len(w.ceph.hostOSDs[i]) || w.ceph.cutOff[i] {
		return
	}
	w.fenced[i] = false
	w.nFenced--
	w.fencedDom(i, -1)
	if w.rec != nil {
		w.logf("machine", "%s back: node Ready, all OSDs up", m.Name)
	}
}

// fencedDom counts machine i into (d=1) or out of (d=-1) "fenced or not
// yet back" per failure domain.
func (w *monitor) fencedDom(i, d int) {
	dom := w.ceph.domainOf(i)
	w.fencedPerDom[dom] += d
	switch {
	case d > 0 && w.fencedPerDom[dom] == 1:
		w.fencedDoms++
	case d < 0 && w.fencedPerDom[dom] == 0:
		w.fencedDoms--
	}
}

// otherFencedDoms is the number of failure domains other than machine i's
// with machines fenced or not yet back.
func (w *monitor) otherFencedDoms(i int) int {
	if w.fencedPerDom[w.ceph.domainOf(i)] > 0 {
		return w.fencedDoms - 1
	}
	return w.fencedDoms
}

// machineChanged: machine i's hardware, phase, Node or OSDs changed.
func (w *monitor) machineChanged(i int) {
	w.livenessUpdate(i)
	w.backCheck(i)
}

// plotNode records machine i's state for the plot.
func (w *monitor) plotNode(i int) {
	if w.rec == nil {
		return
	}
	m := &w.fleet.m[i]
	st := "NotReady"
	switch {
	case m.phase != PhaseRunning:
		st = m.phase.String()
	case w.ceph.cutOff[i]:
		st = "CutOff"
	case w.kube.nodes[i].ready:
		st = "Ready"
	}
	w.rec.nodeState(w.now, i, st)
}

// blockers names what keeps Ceph from HEALTH_OK at the end of a run.
func (w *monitor) blockers() []string {
	c := w.ceph
	h, _ := c.health()
	if h == HealthOK {
		return nil
	}
	var out []string
	if !c.quorum {
		out = append(out, "mon quorum lost: "+w.monsOut())
	}
	for i := range w.fleet.m {
		downIn := 0
		for _, oi := range c.hostOSDs[i] {
			if c.osds[oi].in && !c.osds[oi].up {
				downIn++
			}
		}
		if downIn == 0 && c.upOSDs[i] == len(c.hostOSDs[i]) {
			continue
		}
		m := &w.fleet.m[i]
		why := w.hostState(i)
		if !w.kube.nodes[i].ready && m.phase == PhaseRunning && m.machineSet {
			if down, fenced := w.machineDown(i); down && !fenced {
				why += "; not fenced: " + w.blockReason(i)
			}
		}
		out = append(out, fmt.Sprintf("%s: %d OSD(s) down (it %s)", m.Name, len(c.hostOSDs[i])-c.upOSDs[i], why))
	}
	if in := c.hostsIn(); in < w.P.PoolSize && len(w.pgs.pgs) > 0 {
		out = append(out, fmt.Sprintf("capacity: only %d hosts with OSDs in for pool size %d, PGs cannot backfill", in, w.P.PoolSize))
	}
	rec := 0
	for st := stActive; st < numPGStates; st++ {
		rec += w.pgs.nState[st]
	}
	if rec > 0 {
		out = append(out, fmt.Sprintf("%d PGs not active+clean (%s)", rec, w.pgs.summary()))
	}
	sort.Strings(out)
	return out
}
