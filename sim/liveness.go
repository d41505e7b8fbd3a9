package sim

import (
	"fmt"
	"strings"
)

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
//   - some PG degraded, inactive or blocked; bound degradedBound.

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
		w.events.at(w.now+bound, livenessEvent{kind: evEpisodeDue, ep: kind, m: int32(i), gen: e.gen})
		return
	}
	if w.now-e.start >= bound {
		w.livenessBroken(kind, i)
	}
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
			w.livenessBroken(e.ep, i)
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
		var down []string
		for k, mi := range w.ceph.mons {
			if !w.ceph.monRuns(k) || w.ceph.monEmpty[k] {
				down = append(down, w.fleet.m[mi].Name)
			}
		}
		w.violate(6, fmt.Sprintf("no mon quorum for %s (bound %s; mons on %s out)", age, w.P.NoQuorumBound.Dur(), strings.Join(down, ", ")))
	case epDegraded:
		w.violate(6, fmt.Sprintf("PGs degraded or unavailable for %s (bound %s; %s)", age, w.P.DegradedBound.Dur(), w.pgs.summary()))
	default:
		m := &w.fleet.m[i]
		w.violate(6, fmt.Sprintf("%s down (NotReady, serving nothing) for %s and not fenced (bound %s; blocked: %s)", m.Name, age, w.P.LivenessBound.Dur(), w.blockReason(i)))
	}
}

// blockReason names why machine i has not been fenced.
func (w *monitor) blockReason(i int) string {
	m := &w.fleet.m[i]
	n := &w.kube.nodes[i]
	switch {
	case w.safe.g[i].why != "":
		return w.safe.g[i].why
	case m.blocked != "":
		return m.blocked
	case w.fleet.mhcStall && !w.pol.Grants:
		return "the MachineHealthCheck is stalled"
	case w.pol.usesOperator() && !w.op.up:
		return "the storage operator is down"
	case n.ready || n.readyLT+w.P.MHCUnhealthyTimeout > w.now:
		return "its Ready condition flaps: the MachineHealthCheck's timer restarts at every transition"
	}
	return "no controller acted"
}
