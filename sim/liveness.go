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

// episode kinds (the event's b argument; a machine's index is its a).
const (
	epNode int32 = iota
	epQuorum
	epDegraded
)

func (s *Sim) initLiveness() {
	s.inv.quorumEp.start, s.inv.degradedEp.start = -1, -1
	for i := range s.machines {
		s.machines[i].downEp.start = -1
	}
}

// track moves episode e to bad now; bound is its bound, kind and i say
// what it is (for the events).
func (s *Sim) track(e *episode, bad bool, bound Time, kind int32, i int) {
	if bad == e.bad {
		return
	}
	e.bad = bad
	if !bad {
		if e.start >= 0 {
			e.good = s.now
			s.schedule(s.now+s.P.LivenessStable, evLivenessEnd, int32(i), kind, int64(e.gen))
		}
		return
	}
	if e.start < 0 {
		e.start = s.now
		e.gen++
		s.schedule(s.now+bound, evLiveness, int32(i), kind, int64(e.gen))
		return
	}
	if s.now-e.start >= bound {
		s.livenessBroken(kind, i)
	}
}

// reset ends episode e at once (the machine was fenced).
func (e *episode) reset() {
	e.bad, e.start = false, -1
	e.gen++
}

func (s *Sim) episodeOf(kind int32, i int) *episode {
	switch kind {
	case epQuorum:
		return &s.inv.quorumEp
	case epDegraded:
		return &s.inv.degradedEp
	}
	return &s.machines[i].downEp
}

// livenessDue: episode kind (of machine i) has reached its bound.
func (s *Sim) livenessDue(i int, kind int32, gen int32) {
	if e := s.episodeOf(kind, i); e.gen == gen && e.start >= 0 && e.bad {
		s.livenessBroken(kind, i)
	}
}

// livenessEnd: the condition has not held for livenessStable; the
// episode is over.
func (s *Sim) livenessEnd(i int, kind int32, gen int32) {
	if e := s.episodeOf(kind, i); e.gen == gen && !e.bad && e.start >= 0 && s.now-e.good >= s.P.LivenessStable {
		e.start = -1
		e.gen++
	}
}

// machineDown reports whether machine i is down in the sense of
// invariant 6 and not fenced; fenced reports whether it is fenced.
func (s *Sim) machineDown(i int) (down, fenced bool) {
	m := &s.machines[i]
	// a storage cut-off is a step toward a fence, lifted when the node is
	// back: it does not end the episode
	fenced = m.remediated || m.tainted || m.phase != PhaseRunning
	down = m.machineSet && !fenced && !m.ready && !(m.alive() && m.link[linkPublic])
	return
}

// livenessUpdate re-evaluates machine i's down episode.
func (s *Sim) livenessUpdate(i int) {
	if s.cfg.SafetyOnly {
		return
	}
	m := &s.machines[i]
	down, fenced := s.machineDown(i)
	if fenced {
		if m.downEp.start >= 0 || m.downEp.bad {
			m.downEp.reset()
		}
		return
	}
	s.track(&m.downEp, down, s.P.LivenessBound, epNode, i)
}

// clusterLiveness re-evaluates the cluster's episodes (after every step).
func (s *Sim) clusterLiveness() {
	if s.cfg.SafetyOnly {
		return
	}
	s.track(&s.inv.quorumEp, !s.ceph.quorum, s.P.NoQuorumBound, epQuorum, 0)
	bad := s.ceph.nDegraded+s.ceph.nInactive+s.ceph.nBlocked > 0
	s.track(&s.inv.degradedEp, bad, s.P.DegradedBound, epDegraded, 0)
}

func (s *Sim) livenessBroken(kind int32, i int) {
	e := s.episodeOf(kind, i)
	age := (s.now - e.start).Dur()
	switch kind {
	case epQuorum:
		var down []string
		for k, mi := range s.ceph.mons {
			if m := &s.machines[mi]; !(m.alive() && m.link[linkPublic]) || s.ceph.monEmpty[k] {
				down = append(down, m.Name)
			}
		}
		s.violate(6, fmt.Sprintf("no mon quorum for %s (bound %s; mons on %s out)", age, s.P.NoQuorumBound.Dur(), strings.Join(down, ", ")))
	case epDegraded:
		s.violate(6, fmt.Sprintf("PGs degraded or unavailable for %s (bound %s; %s)", age, s.P.DegradedBound.Dur(), s.pgStateSummary()))
	default:
		m := &s.machines[i]
		s.violate(6, fmt.Sprintf("%s down (NotReady, serving nothing) for %s and not fenced (bound %s; blocked: %s)", m.Name, age, s.P.LivenessBound.Dur(), s.blockReason(i)))
	}
}

// blockReason names why machine i has not been fenced.
func (s *Sim) blockReason(i int) string {
	m := &s.machines[i]
	switch {
	case m.safeWhy != "":
		return m.safeWhy
	case m.blocked != "":
		return m.blocked
	case s.mhcStall && !s.pol.Grants:
		return "the MachineHealthCheck is stalled"
	case s.pol.usesOperator() && !s.opUp:
		return "the storage operator is down"
	case m.ready || m.readyLT+s.P.MHCUnhealthyTimeout > s.now:
		return "its Ready condition flaps: the MachineHealthCheck's timer restarts at every transition"
	}
	return "no controller acted"
}
