package sim

import "fmt"

// Invariant 6, bounded liveness, whatever the cause: a machine down and
// unfenced, a cluster without mon quorum, or with degraded or unavailable
// PGs, for longer than a stated bound is a violation - a stalled
// controller, a frozen OSD map or a flapping link excuse nothing.
//
// Each condition is tracked as an episode: it begins when the condition
// starts to hold and lasts through interruptions shorter than
// livenessStable (a NIC down 290 s of every 300 s is one episode, though
// the Ready condition's lastTransitionTime, and with it the MHC's timer,
// resets every cycle). When an episode is older than its bound while the
// condition holds, the invariant is broken.
//
//   - a machine of a MachineSet is down while its node is NotReady and it
//     serves nothing (its host is dead, hung or off the public network -
//     a kubelet that only lost the API is not down); fencing it (a
//     remediation or the out-of-service taint; a storage cut-off, which is
//     lifted when the node is back, does not count) ends the episode;
//     bound livenessBound;
//   - no mon quorum; bound noQuorumBound;
//   - some PG degraded, inactive or blocked; bound degradedBound plus
//     twice the time the data moved and still to move in the episode
//     takes at the recovery rate of the OSDs up and in (degradedBound): a
//     large backfill that progresses is no violation, one that is stuck
//     (noout, the subtree limit, too few hosts) is.
//
// A violation names the cause (causes.go).

// episode tracks one liveness condition.
type episode struct {
	bad   bool // the condition holds now
	start Time // the episode's start (-1: none)
	good  Time // when the condition stopped holding, within an episode
	gen   int32
}

// episodeKind is what an episode tracks.
type episodeKind uint8

const (
	epNode     episodeKind = iota // a machine down and unfenced
	epQuorum                      // no mon quorum
	epDegraded                    // degraded or unavailable PGs
)

// track moves episode e to bad now; bound is its bound, kind and i say
// what it is (for the events).
func (w *monitor) track(e *episode, bad bool, bound Time, kind episodeKind, i int) {
	if bad == e.bad {
		return
	}
	e.bad = bad
	if !bad {
		if e.start >= 0 {
			e.good = w.now
			w.events.at(w.now+w.P.LivenessStable, livenessEvent{kind: evEpisodeEnd, ep: kind, m: int32(i), gen: e.gen})
		}
		return
	}
	if e.start < 0 {
		e.start = w.now
		e.gen++
		switch kind {
		case epNode:
			w.downEpGen[i] = w.kube.nodes[i].readyGen
		case epDegraded:
			w.degMovedAt = w.metrics.MovedMB
		}
		w.events.at(w.now+bound, livenessEvent{kind: evEpisodeDue, ep: kind, m: int32(i), gen: e.gen})
		return
	}
	if w.now-e.start >= bound {
		w.boundReached(e, kind, i)
	}
}

// boundReached: episode e has lasted its base bound while its condition
// holds; a degraded episode whose data still moves gets the time that
// takes.
func (w *monitor) boundReached(e *episode, kind episodeKind, i int) {
	if kind == epDegraded {
		if b, _ := w.degradedBound(); w.now-e.start < b {
			w.events.at(e.start+b, livenessEvent{kind: evEpisodeDue, ep: kind, m: int32(i), gen: e.gen})
			return
		}
	}
	w.livenessBroken(kind, i)
}

// degradedBound is the degraded episode's bound: degradedBound plus twice
// the time the data the episode moved and still has to move takes at the
// recovery rate of the OSDs up and in (twice: the reservations keep the
// OSDs from all moving data at once); why says so.
func (w *monitor) degradedBound() (b Time, why string) {
	mb := w.metrics.MovedMB - w.degMovedAt + w.pgs.toMoveMB()
	rate := w.P.OSDRecoveryMBps
	if w.P.OSDMaxBackfills == 0 {
		rate = w.P.RecoveryMBps
	}
	osds := 0
	for i := range w.ceph.osds {
		if o := &w.ceph.osds[i]; o.up && o.in {
			osds++
		}
	}
	b = w.P.DegradedBound
	if mb <= 0 || osds == 0 {
		return b, b.Dur()
	}
	move := Time(2 * mb / (float64(osds) * rate) * float64(Second))
	return b + move, fmt.Sprintf("%s + %s to move %.0f GB at %d OSDs x %.0f MB/s, twice", w.P.DegradedBound.Dur(), move.Dur(), mb/1024, osds, rate)
}

// reset ends episode e at once (the machine was fenced).
func (e *episode) reset() {
	e.bad, e.start = false, -1
	e.gen++
}

func (w *monitor) episodeOf(kind episodeKind, i int) *episode {
	switch kind {
	case epQuorum:
		return &w.quorumEp
	case epDegraded:
		return &w.degradedEp
	}
	return &w.downEp[i]
}

func (w *monitor) handle(e livenessEvent) {
	i := int(e.m)
	ep := w.episodeOf(e.ep, i)
	switch e.kind {
	case evEpisodeDue:
		// the episode has reached its bound
		if ep.gen == e.gen && ep.start >= 0 && ep.bad {
			w.boundReached(ep, e.ep, i)
		}
	case evEpisodeEnd:
		// the condition has not held for livenessStable: the episode is over
		if ep.gen == e.gen && !ep.bad && ep.start >= 0 && w.now-ep.good >= w.P.LivenessStable {
			ep.start = -1
			ep.gen++
		}
	}
}

// machineDown reports whether machine i is down in the sense of
// invariant 6 and not fenced; fenced reports whether it is fenced.
func (w *monitor) machineDown(i int) (down, fenced bool) {
	m := &w.fleet.m[i]
	// a storage cut-off is a step toward a fence, lifted when the node is
	// back: it does not end the episode; nor does a remediation whose
	// power-off the BMC has not confirmed, unless its Node was deleted
	n := &w.kube.nodes[i]
	fenced = (m.remediated && (m.bmh != bmhPowerOff || !n.hasNode)) || n.tainted || m.phase != PhaseRunning
	down = m.machineSet && !fenced && !n.ready && !m.reaches(linkPublic)
	return
}

// livenessUpdate re-evaluates machine i's down episode.
func (w *monitor) livenessUpdate(i int) {
	if w.cfg.SafetyOnly {
		return
	}
	e := &w.downEp[i]
	down, fenced := w.machineDown(i)
	if fenced {
		if e.start >= 0 || e.bad {
			e.reset()
		}
		return
	}
	w.track(e, down, w.P.LivenessBound, epNode, i)
}

// clusterLiveness re-evaluates the cluster's episodes (after every step).
func (w *monitor) clusterLiveness() {
	if w.cfg.SafetyOnly {
		return
	}
	w.track(&w.quorumEp, !w.ceph.quorum, w.P.NoQuorumBound, epQuorum, 0)
	bad := w.pgs.nDegraded+w.pgs.nInactive+w.pgs.nBlocked > 0
	w.track(&w.degradedEp, bad, w.P.DegradedBound, epDegraded, 0)
}

func (w *monitor) livenessBroken(kind episodeKind, i int) {
	e := w.episodeOf(kind, i)
	age := (w.now - e.start).Dur()
	switch kind {
	case epQuorum:
		w.violate(6, fmt.Sprintf("no mon quorum for %s (bound %s; %s)", age, w.P.NoQuorumBound.Dur(), w.monsOut()))
	case epDegraded:
		_, bound := w.degradedBound()
		w.violate(6, fmt.Sprintf("PGs degraded or unavailable for %s (bound %s; %s)", age, bound, w.degradedCause()))
	default:
		m := &w.fleet.m[i]
		w.violate(6, fmt.Sprintf("%s down (NotReady, serving nothing) for %s and not fenced (bound %s; blocked: %s)", m.Name, age, w.P.LivenessBound.Dur(), w.blockReason(i)))
	}
}
