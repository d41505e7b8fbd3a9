package sim

import (
	"fmt"
	"sort"
)

// This file holds every controller rule that differs between policies: who
// gets the fencing label (the MDB selector), what the MDB controller writes,
// and the safe policy's storage-fence-then-grant controller. The
// MachineHealthCheck itself is the same for all policies (model.go).

type labelRule uint8

const (
	labelNone         labelRule = iota // no label: the MDB covers nothing
	labelPodReady                      // seed: while an OSD pod on it is Ready (OSD Deployment not down)
	labelPodScheduled                  // rook: while an OSD pod is scheduled there
	labelStatic                        // safe: every OSD machine, from the MachineSet template
)

type gateRule uint8

const (
	gateNone     gateRule = iota // no MDB
	gateHealthOK                 // seed: maxUnavailable 1 iff HEALTH_OK, else 0
	gateAllClean                 // rook: maxUnavailable 1 iff all PGs active+clean, else 0
	gateClosed                   // safe: maxUnavailable 0 always; fences are granted one by one
)

// Policy is a fencing policy: the rules of the storage operator's label,
// MDB and fencing controllers.
type Policy struct {
	// Name is the name used on the command line.
	Name string
	// Doc is a one-line description.
	Doc string
	// Label is who gets the fencing label (the MDB's selector).
	Label labelRule
	// Gate is what the MDB controller writes.
	Gate gateRule
	// FailSafe writes maxUnavailable 0 when `ceph status` gets no answer;
	// otherwise the last value stays.
	FailSafe bool
	// Grants runs the safe policy's controller.
	Grants bool
	// NoRemediation: the MHC marks machines unhealthy but nothing fences.
	NoRemediation bool
	// OOSTaint: instead of deleting the Machine, the remediator adds the
	// node.kubernetes.io/out-of-service taint (Kubernetes non-graceful node
	// shutdown: pods force-deleted, volumes force-detached) and Rook's
	// operator creates a NetworkFence for the node's client addresses.
	OOSTaint bool

	// The safe policy's checks. Tests switch one off to show that the
	// invariants catch the resulting policy.
	NoSerialize       bool // do not wait for the fenced machine to be back
	NoStorageFence    bool // fence without cutting the machine off first
	NoWipeCheck       bool // wipe even the last current replicas
	NoUpOSDCheck      bool // cut off and fence a node whose OSDs are up in the map
	NoClientBlocklist bool // cut off the OSDs but not the node's clients
	TrustPowerReport  bool // without quorum, trust the provider's power report alone
}

// Policies are the selectable policies, by name.
var Policies = map[string]*Policy{
	"seed": {Name: "seed", Doc: "design 004: label while OSDs not down (OSD Deployments); MDB maxUnavailable 0 unless HEALTH_OK",
		Label: labelPodReady, Gate: gateHealthOK},
	"rook": {Name: "rook", Doc: "label while an OSD pod is scheduled; MDB open only when all PGs are active+clean; fail safe without an answer",
		Label: labelPodScheduled, Gate: gateAllClean, FailSafe: true},
	"mhc-only": {Name: "mhc-only", Doc: "MachineHealthCheck with no storage gating",
		Label: labelNone, Gate: gateNone},
	"rook-oos": {Name: "rook-oos", Doc: "today's Rook path: out-of-service taint on a NotReady node (pods force-deleted, volumes force-detached), Rook fences the clients it finds as the volumes' watchers",
		Label: labelNone, Gate: gateNone, OOSTaint: true},
	"never": {Name: "never", Doc: "never fences: the MachineHealthCheck only reports",
		Label: labelNone, Gate: gateNone, NoRemediation: true},
	"safe": {Name: "safe", Doc: "MHC external remediation: one OSD machine at a time, on a fresh observation, cut off from storage (mark down + blocklist) before the fence; never wipe a last current replica",
		Label: labelStatic, Gate: gateClosed, Grants: true},
}

// PolicyNames lists the policies in a fixed order.
func PolicyNames() []string {
	return []string{"seed", "rook", "mhc-only", "rook-oos", "never", "safe"}
}

// LookupPolicy returns the named policy.
func LookupPolicy(name string) (*Policy, error) {
	if p, ok := Policies[name]; ok {
		return p, nil
	}
	n := make([]string, 0, len(Policies))
	for k := range Policies {
		n = append(n, k)
	}
	sort.Strings(n)
	return nil, fmt.Errorf("unknown policy %q (known: %v)", name, n)
}

// wantLabel is the label the operator's label controller wants on machine i,
// from what it observes through the Kubernetes API.
func (p *Policy) wantLabel(s *Sim, i int) bool {
	m := &s.machines[i]
	if len(m.osds) == 0 {
		return false
	}
	switch p.Label {
	case labelPodReady:
		// An OSD Deployment is "not down" while its pod is Ready; pods on a
		// NotReady node are marked not Ready by the node lifecycle controller.
		return m.phase == PhaseRunning && m.ready
	case labelPodScheduled:
		return (m.phase == PhaseRunning && m.hasNode) || m.phase == PhaseRebooting
	case labelStatic:
		return true
	}
	return false
}

func (p *Policy) initialLabel(s *Sim, i int) bool {
	switch p.Label {
	case labelStatic:
		return len(s.machines[i].osds) > 0
	case labelNone:
		return false
	}
	return p.wantLabel(s, i)
}

// usesOperator reports whether the policy needs the storage operator's
// controllers to fence.
func (p *Policy) usesOperator() bool {
	return p.Label == labelPodReady || p.Label == labelPodScheduled || p.Gate == gateHealthOK || p.Gate == gateAllClean || p.Grants || p.OOSTaint
}

func (p *Policy) initialMDB() int {
	if p.Gate == gateHealthOK || p.Gate == gateAllClean {
		return 1
	}
	return 0
}

// labelTrigger: the label controller observes machine i now and writes the
// label after the operator's lag (dropped if the operator stalls meanwhile).
func (s *Sim) labelTrigger(i int) {
	if !s.opUp || s.pol.Label == labelNone || s.pol.Label == labelStatic {
		return
	}
	v := int32(0)
	if s.pol.wantLabel(s, i) {
		v = 1
	}
	s.schedule(s.now+s.jit(s.P.OperatorLag), evLabelApply, int32(i), v|s.opEpoch<<1, int64(s.now))
}

func (s *Sim) labelApply(i int, b int32, obs int64) {
	m := &s.machines[i]
	if !s.opLive(b>>1) || Time(obs) < m.labelObs {
		return
	}
	s.setLabel(i, b&1 == 1, Time(obs))
}

// mdbPoll: the MDB controller polls `ceph status` and writes maxUnavailable
// after the operator's lag.
func (s *Sim) mdbPoll() {
	every := s.P.CephStatusInterval
	if s.pol.Gate == gateAllClean {
		every = s.P.RookMDBRequeue
	}
	s.schedule(s.now+every, evMDBPoll, 0, 0, 0)
	if !s.opUp {
		return
	}
	h, _ := s.health()
	v := 0
	switch {
	case h == HealthNoAnswer:
		if !s.pol.FailSafe {
			return
		}
	case s.pol.Gate == gateHealthOK:
		if h == HealthOK {
			v = 1
		}
	case s.pol.Gate == gateAllClean:
		if s.allClean() {
			v = 1
		}
	}
	s.schedule(s.now+s.jit(s.P.OperatorLag), evMDBApply, s.opEpoch, int32(v), int64(s.now))
}

func (p *Policy) onMachineChange(s *Sim, i int) {
	if p.Label == labelPodScheduled {
		m := &s.machines[i]
		if p.wantLabel(s, i) != m.labelled {
			s.labelTrigger(i)
		}
	}
}

func (p *Policy) onReadyChange(s *Sim, i int) {
	m := &s.machines[i]
	if p.Label == labelPodReady || p.Label == labelPodScheduled {
		s.labelTrigger(i)
	}
	if !p.Grants || !s.opUp || m.phase != PhaseRunning {
		return
	}
	if !m.ready {
		s.safeTrigger(i)
	} else if m.storageFenced || m.granted {
		s.schedule(s.now+s.jit(s.P.OperatorLag), evSafeRevoke, int32(i), s.opEpoch, 0)
	}
}

// resync runs when the operator (re)starts: every controller reconciles
// every machine from scratch.
func (p *Policy) resync(s *Sim) {
	for i := range s.machines {
		m := &s.machines[i]
		if p.Label == labelPodReady || p.Label == labelPodScheduled {
			if p.wantLabel(s, i) != m.labelled {
				s.labelTrigger(i)
			}
		}
		if p.OOSTaint && m.tainted && !m.oosDone {
			s.schedule(s.now+s.jit(s.P.OperatorLag), evOOSFence, int32(i), s.opEpoch, 0)
		}
		if p.OOSTaint && !m.tainted && len(m.oosFenced) > 0 {
			s.schedule(s.now+s.jit(s.P.OperatorLag), evOOSUnfence, int32(i), s.opEpoch, 0)
		}
		if p.Grants {
			if !m.ready && m.phase == PhaseRunning {
				s.safeTrigger(i)
			} else if m.ready && (m.storageFenced || m.granted) {
				s.schedule(s.now+s.jit(s.P.OperatorLag), evSafeRevoke, int32(i), s.opEpoch, 0)
			}
		}
	}
}

// ---- the safe policy ----
//
// The MHC uses external remediation (a remediationTemplate): it only marks
// machines unhealthy and the safe controller performs the fence, so the
// decision and the action happen on one observation. Every OSD machine is
// also labelled with the MDB at maxUnavailable 0, so the MHC cannot fence
// one on its own. For a machine the MHC reports unhealthy, on an
// observation taken when it acts (never a cached one) it:
//  1. waits while another OSD machine is fenced and not back (invariant 1);
//  2. without mon quorum, grants only if all its OSDs are down in the last
//     OSD map (a frozen map cannot mark them up again), or the provider
//     reports the instance powered off and its OSDs' peers confirm they
//     stopped heartbeating (a power report alone can be late or wrong),
//     else waits and names the blocker;
//  3. waits while any of its OSDs is up in the OSD map: Ceph still counts
//     it as a storage host (a kubelet/API partition, a stale label), and
//     cutting serving OSDs off can take a PG below min_size when another
//     failure is not detected yet (invariants 3 and 5); liveness only asks
//     for nodes whose OSDs are all down;
//  4. cuts the machine off from storage (blocklists its OSDs and its
//     clients' address, without expiry) so that it cannot come back and
//     serve or write between the decision and the deletion (invariants 5
//     and 7), then re-checks;
//  5. for a delete-with-wipe fence, falls back to reboot (bare metal) or a
//     disk-keeping delete (cloud) unless every PG on the machine keeps
//     min_size current replicas elsewhere (invariant 4);
//  6. fences (the machine's remediation kind), recording the observation
//     time (invariant 2).
// If the node turns Ready before the fence, it lifts the cut-off. The
// operator has the same availability as every other policy's
// (cluster.operatorHA). Writes are re-validated when they land (an
// OSD-map-epoch precondition), so the operator's lag delays but never
// staleness.

func (s *Sim) safeTrigger(i int) {
	m := &s.machines[i]
	at := s.unhealthyAt(i)
	if at < s.now {
		at = s.now
	}
	s.schedule(at+s.jit(s.P.OperatorLag), evSafeCheck, int32(i), m.readyGen, int64(s.opEpoch))
}

func (s *Sim) safeCheck(i int, gen int32) {
	m := &s.machines[i]
	if !s.opUp || m.readyGen != gen || m.ready || m.phase != PhaseRunning || m.remediated || len(m.osds) == 0 {
		return
	}
	why := s.safeStep(i)
	if why == "" {
		return
	}
	if m.safeWhy != why && s.rec != nil {
		s.logf("safe", "%s: waiting: %s", m.Name, why)
	}
	m.safeWhy = why
	s.schedule(s.now+s.P.CephStatusInterval, evSafeCheck, int32(i), gen, 0)
}

// safeStep advances the safe controller for machine i by one step and
// returns why it must wait, or "" when it needs no retry.
func (s *Sim) safeStep(i int) string {
	m := &s.machines[i]
	pol := s.pol
	if !m.unhealthy {
		return "no remediation request from the MachineHealthCheck yet"
	}
	if s.otherFencedDoms(i) > 0 && !pol.NoSerialize {
		return "another OSD machine is fenced and not back"
	}
	if !s.ceph.quorum {
		// The provider's power report alone can be late or wrong: it counts
		// only when the surviving OSDs confirm that the machine's OSDs
		// stopped heartbeating (TrustPowerReport is the first-generation
		// rule, kept to show what the power-report-wrong scenario catches).
		off := s.providerOff(i) && (pol.TrustPowerReport || s.peersSeeDead(i))
		if off || m.upOSDs == 0 {
			if s.kindOf(i) == FenceDeleteWipe && !pol.NoWipeCheck {
				s.safeNoWipe(i, "Ceph does not answer, so the replicas cannot be checked")
			}
			s.safeGrant(i)
			return ""
		}
		return "Ceph does not answer (no mon quorum), its OSDs were up in the last OSD map and the instance is not both reported powered off and silent to its OSD peers"
	}
	if m.upOSDs > 0 && !pol.NoUpOSDCheck {
		return "its OSDs are up in the OSD map: Ceph still counts it as a storage host, so it is not fenced"
	}
	if !m.storageFenced && !pol.NoStorageFence {
		s.safeStorageFence(i)
		s.schedule(s.now+s.jit(s.P.PeeringTime), evSafeCheck, int32(i), m.readyGen, 0)
		return ""
	}
	if m.upOSDs > 0 && !pol.NoStorageFence {
		return "waiting for the OSD map to show its OSDs down"
	}
	if s.kindOf(i) == FenceDeleteWipe && !pol.NoWipeCheck {
		if pi := s.pgWithoutCurrentElsewhere(i); pi >= 0 {
			s.safeNoWipe(i, fmt.Sprintf("wiping would leave PG %d with fewer than min_size current replicas", pi))
		}
	}
	s.safeGrant(i)
	return ""
}

// safeNoWipe replaces a delete-with-wipe fence by a reboot (bare metal) or
// a disk-keeping delete (cloud).
func (s *Sim) safeNoWipe(i int, why string) {
	k := FenceDelete
	if s.cfg.Cluster.BareMetal {
		k = FenceReboot
	}
	s.machines[i].kindOverride = int8(k)
	if s.rec != nil {
		s.logf("safe", "%s: %s: fence kind %s instead", s.machines[i].Name, why, k)
	}
}

// pgWithoutCurrentElsewhere returns a PG on machine i that lacks min_size
// up replicas with the latest writes on other machines, or -1.
func (s *Sim) pgWithoutCurrentElsewhere(i int) int {
	for _, oi := range s.machines[i].osds {
		for _, pi := range s.osds[oi].pgs {
			p := &s.pgs[pi]
			n := 0
			for k := 0; k < s.P.PoolSize; k++ {
				o := p.slot[k]
				if o >= 0 && s.osds[o].m != int32(i) && p.cur&(1<<k) != 0 && s.osds[o].up {
					n++
				}
			}
			if n < s.P.PoolMinSize {
				return int(pi)
			}
		}
	}
	return -1
}

func (s *Sim) safeStorageFence(i int) {
	m := &s.machines[i]
	if s.rec != nil {
		s.logf("FENCE", "%s cut off from storage by safe: OSDs marked down and blocklisted", m.Name)
	}
	s.checkCutOff(i)
	s.metrics.fenceHealth(s)
	if !s.pol.NoClientBlocklist {
		s.blocklist(i, forever, "safe")
	}
	m.storageFenced = true
	s.setFenced(i)
	if s.rec != nil {
		s.rec.nodeState(s, i)
	}
	s.machineChanged(i)
	for _, oi := range m.osds {
		if s.osds[oi].up {
			s.markDown(int(oi), "marked down and blocklisted by safe")
		}
	}
}

// safeGrant fences machine i as the MHC's external remediation, on the
// observation just taken.
func (s *Sim) safeGrant(i int) {
	m := &s.machines[i]
	if k := s.kindOf(i); m.mon >= 0 && k != FenceReboot && (k == FenceDeleteWipe || s.cfg.Cluster.MonStore == MonStoreHost) {
		// deleting the machine would take the mon's store with it, and an
		// empty mon cannot rejoin without a quorum: power-cycle it instead
		// (a BMC cycle, or the provider's stop/start on cloud)
		m.kindOverride = int8(FenceReboot)
		if s.rec != nil {
			s.logf("safe", "%s holds a mon whose store would go with the machine: fence kind reboot (power cycle) instead", m.Name)
		}
	}
	m.granted = true
	m.grantObs = s.now
	m.safeWhy = ""
	s.setFenced(i)
	s.fence(i, "safe (MHC external remediation)")
}

func (s *Sim) safeRevoke(i int) {
	m := &s.machines[i]
	if !m.ready || m.phase != PhaseRunning || (!m.storageFenced && !m.granted) {
		return
	}
	m.storageFenced, m.granted = false, false
	m.kindOverride = -1
	if m.block.until > s.now {
		s.blocklist(i, 0, "safe")
	}
	if s.rec != nil {
		s.logf("safe", "%s Ready again: cut-off lifted", m.Name)
	}
	s.machineChanged(i)
}
