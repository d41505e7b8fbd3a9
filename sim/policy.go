package sim

import (
	"fmt"
	"sort"
)

// This file holds the policies and the controller rules that differ between
// them: who gets the fencing label (the MDB selector) and what the MDB
// controller writes. The safe policy's controller is in safe.go, the
// out-of-service paths in oos.go; the MachineHealthCheck is the same for
// all policies (mhc.go).

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
	// CSIFence: with the taint, ceph-csi's ControllerUnpublishVolume fences
	// the client address stored in the image metadata (oos.go); Rook's
	// NetworkFence is not used.
	CSIFence bool

	// The safe policy's checks. Tests switch one off to show that the
	// invariants catch the resulting policy.
	NoSerialize       bool // do not wait for the fenced machine to be back
	NoStorageFence    bool // fence without cutting the machine off first
	NoWipeCheck       bool // wipe even the last current replicas
	NoUpOSDCheck      bool // cut off and fence a node whose OSDs are up in the map
	NoClientBlocklist bool // cut off the OSDs but not the node's clients
	TrustPowerReport  bool // without quorum, trust the provider's power report alone
	TrustStalePGStats bool // decide a wipe on the PG stats of a stale mgr
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
	"csi-oos": {Name: "csi-oos", Doc: "the newest ceph-csi path: out-of-service taint on a NotReady node; ceph-csi's ControllerUnpublishVolume blocklists the client address it stored in the image metadata before the volume detaches",
		Label: labelNone, Gate: gateNone, OOSTaint: true, CSIFence: true},
	"never": {Name: "never", Doc: "never fences: the MachineHealthCheck only reports",
		Label: labelNone, Gate: gateNone, NoRemediation: true},
	"safe": {Name: "safe", Doc: "MHC external remediation: one OSD machine at a time, on a fresh observation, cut off from storage (mark down + blocklist) before the fence; never wipe a last current replica",
		Label: labelStatic, Gate: gateClosed, Grants: true},
}

// PolicyNames lists the policies in a fixed order.
func PolicyNames() []string {
	return []string{"seed", "rook", "mhc-only", "rook-oos", "csi-oos", "never", "safe"}
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
	return p.Label == labelPodReady || p.Label == labelPodScheduled || p.Gate == gateHealthOK || p.Gate == gateAllClean || p.Grants || (p.OOSTaint && !p.CSIFence)
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
	h, pg := s.observed()
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
		if pg.clean == len(s.pgs) {
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
		s.safeClientFenceAt(i)
	} else if m.storageFenced || m.granted || m.clientFenced {
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
		if p.OOSTaint && !p.CSIFence && m.tainted && !m.oosDone {
			s.schedule(s.now+s.jit(s.P.OperatorLag), evOOSFence, int32(i), s.opEpoch, 0)
		}
		if p.OOSTaint && !p.CSIFence && !m.tainted && len(m.oosFenced) > 0 {
			s.schedule(s.now+s.jit(s.P.OperatorLag), evOOSUnfence, int32(i), s.opEpoch, 0)
		}
		if p.Grants {
			if !m.ready && m.phase == PhaseRunning {
				s.safeTrigger(i)
				s.safeClientFenceAt(i)
			} else if m.ready && (m.storageFenced || m.granted || m.clientFenced) {
				s.schedule(s.now+s.jit(s.P.OperatorLag), evSafeRevoke, int32(i), s.opEpoch, 0)
			}
		}
	}
}
