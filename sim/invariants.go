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
//  3. No PG drops below min_size because of a fence: a fence or cut-off that
//     stops serving OSDs must leave every PG that had min_size serving
//     replicas with min_size.
//  4. Every PG keeps at least one replica with the latest writes.
//  5. A node whose OSDs may still serve (daemon running, not blocklisted,
//     public network reachable, up in the map) is never deleted.
//  6. Bounded liveness (liveness.go): no machine down and unfenced, no
//     lost quorum, no degraded or unavailable PGs for longer than a stated
//     bound, whatever the cause.

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

type invState struct {
	viols      []Violation
	stop       bool
	inv1Active bool
	// invariant 6's cluster episodes (liveness.go)
	quorumEp, degradedEp episode
}

func (s *Sim) violate(inv int, text string) {
	for _, v := range s.inv.viols {
		if v.Inv == inv && v.At == s.now {
			return
		}
	}
	s.inv.viols = append(s.inv.viols, Violation{Inv: inv, At: s.now, Text: text})
	if s.rec != nil {
		s.logf("VIOLATION", "inv%d: %s", inv, text)
	}
	if !s.cfg.KeepGoing {
		s.inv.stop = true
	}
}

// afterStep runs after every event: global O(1) checks and metrics.
func (s *Sim) afterStep() {
	if s.topo.fencedDoms > 1 {
		if !s.inv.inv1Active {
			s.inv.inv1Active = true
			var names []string
			for i := range s.machines {
				if s.machines[i].fenced {
					names = append(names, s.machines[i].Name)
				}
			}
			what := "OSD machines"
			if fd := s.cfg.Cluster.failureDomain(); fd != CrushHost {
				what = fmt.Sprintf("%ss with OSD machines", fd)
			}
			s.violate(1, fmt.Sprintf("%d %s fenced or not back at once: %s", s.topo.fencedDoms, what, strings.Join(names, ", ")))
		}
	} else {
		s.inv.inv1Active = false
	}
	s.clusterLiveness()
	s.metrics.step(s)
	if s.inv.stop {
		s.stopped = true
	}
}

// checkFence checks invariants 2, 3 and 5 just before machine i is fenced.
func (s *Sim) checkFence(i int, kind FenceKind) {
	m := &s.machines[i]
	// The gating observation is the external remediation's own (safe) or,
	// for an MDB-covered machine, the one the MDB's value came from.
	if m.granted {
		if m.faultAt >= 0 && m.grantObs < m.faultAt {
			s.violate(2, fmt.Sprintf("%s fenced on a grant observed at %s, before its fault at %s", m.Name, m.grantObs, m.faultAt))
		}
	} else if m.labelled && s.pol.Gate != gateNone && m.faultAt >= 0 && s.mdbObs < m.faultAt {
		s.violate(2, fmt.Sprintf("%s fenced while labelled, on MDB maxUnavailable=%d observed at %s, before its fault at %s", m.Name, s.mdbMax, s.mdbObs, m.faultAt))
	}
	s.checkCutOff(i)
	if kind == FenceDelete || kind == FenceDeleteWipe {
		for _, oi := range m.osds {
			if s.serving(int(oi)) {
				s.violate(5, fmt.Sprintf("%s deleted while osd.%d may still serve (daemon running, up in the map, public network reachable)", m.Name, oi))
				break
			}
		}
	}
}

// checkCutOff checks invariant 3 for an action that stops machine i's OSDs.
func (s *Sim) checkCutOff(i int) {
	for _, oi := range s.machines[i].osds {
		if !s.serving(int(oi)) {
			continue
		}
		for _, pi := range s.osds[oi].pgs {
			p := &s.pgs[pi]
			n := 0
			for k := 0; k < s.P.PoolSize; k++ {
				if o := p.slot[k]; o >= 0 && s.serving(int(o)) {
					n++
				}
			}
			if n >= s.P.PoolMinSize && n-1 < s.P.PoolMinSize {
				s.violate(3, fmt.Sprintf("fencing %s drops PG %d from %d to %d serving replicas (min_size %d)", s.machines[i].Name, pi, n, n-1, s.P.PoolMinSize))
				return
			}
		}
	}
}

// blockers names what keeps Ceph from HEALTH_OK at the end of a run.
func (s *Sim) blockers() []string {
	h, _ := s.health()
	if h == HealthOK {
		return nil
	}
	var out []string
	if !s.ceph.quorum {
		var down []string
		for _, mi := range s.ceph.mons {
			m := &s.machines[mi]
			if !(m.alive() && m.link[linkPublic]) {
				down = append(down, m.Name)
			}
		}
		out = append(out, fmt.Sprintf("mon quorum lost: mons on %s down", strings.Join(down, ", ")))
	}
	hostsIn := 0
	for i := range s.machines {
		m := &s.machines[i]
		in, downIn := 0, 0
		for _, oi := range m.osds {
			if s.osds[oi].in {
				in++
				if !s.osds[oi].up {
					downIn++
				}
			}
		}
		if in > 0 {
			hostsIn++
		}
		if downIn == 0 && m.upOSDs == len(m.osds) {
			continue
		}
		var why string
		switch {
		case m.phase != PhaseRunning:
			why = "machine " + m.phase.String()
		case m.storageFenced:
			why = "cut off from storage, waiting for the fence"
		case !m.powered && m.powerLost:
			why = "powered off"
		case m.hung:
			why = "hung"
		case !m.link[linkPublic] || !m.link[linkCluster]:
			why = "Ceph network cut"
		case !m.ready:
			why = "not fenced: " + s.blockReason(i)
		default:
			why = "booting"
		}
		out = append(out, fmt.Sprintf("%s: %d OSD(s) down (%s)", m.Name, len(m.osds)-m.upOSDs, why))
	}
	if hostsIn < s.P.PoolSize && len(s.pgs) > 0 {
		out = append(out, fmt.Sprintf("capacity: only %d hosts with OSDs in for pool size %d, PGs cannot backfill", hostsIn, s.P.PoolSize))
	}
	rec := 0
	for st := stActive; st < numPGStates; st++ {
		rec += s.ceph.nState[st]
	}
	if rec > 0 {
		out = append(out, fmt.Sprintf("%d PGs not active+clean (%s)", rec, s.pgStateSummary()))
	}
	sort.Strings(out)
	return out
}

func (s *Sim) pgStateSummary() string {
	var parts []string
	for st := pgState(0); st < numPGStates; st++ {
		if n := s.ceph.nState[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, pgStateNames[st]))
		}
	}
	return strings.Join(parts, ", ")
}
