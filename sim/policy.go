package sim

import (
	"fmt"
	"sort"
)

// This file holds the policies and the controller rules that differ between
// them: who gets the fencing label (the MDB selector) and what the MDB
// controller writes. The safe policy's controller is in safe.go, the
// out-of-service paths in oos.go, rook.go and csi.go; the
// MachineHealthCheck is the same for all policies (mhc.go).

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

	// CSIUnfenceFromFence: ceph-csi's unfence cooldown runs from the fence,
	// whatever the node's old pods (csi.go; the broken variant of csi-oos).
	CSIUnfenceFromFence bool
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
func (o *operator) wantLabel(i int) bool {
	m := &o.fleet.m[i]
	if len(o.ceph.hostOSDs[i]) == 0 {
		return false
	}
	switch o.pol.Label {
	case labelPodReady:
		// An OSD Deployment is "not down" while its pod is Ready; pods on a
		// NotReady node are marked not Ready by the node lifecycle controller.
		return m.phase == PhaseRunning && o.kube.nodes[i].ready
	case labelPodScheduled:
		return (m.phase == PhaseRunning && o.kube.nodes[i].hasNode) || m.phase == PhaseRebooting
	case labelStatic:
		return true
	}
	return false
}

func (o *operator) initialLabel(i int) bool {
	switch o.pol.Label {
	case labelStatic:
		return len(o.ceph.hostOSDs[i]) > 0
	case labelNone:
		return false
	}
	return o.wantLabel(i)
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
func (o *operator) labelTrigger(i int) {
	if !o.up || o.pol.Label == labelNone || o.pol.Label == labelStatic {
		return
	}
	v := int32(0)
	if o.wantLabel(i) {
		v = 1
	}
	o.reconcileLater(operatorEvent{kind: evLabelApply, m: int32(i), v: v, obs: o.now})
}

// startPolling starts the MDB controller's polls (policies with a gate).
func (o *operator) startPolling() {
	if o.pol.Gate != gateNone && o.pol.Gate != gateClosed {
		o.events.at(0, operatorEvent{kind: evMDBPoll})
	}
}

// mdbPoll: the MDB controller polls `ceph status` and writes maxUnavailable
// after the operator's lag.
func (o *operator) mdbPoll() {
	every := o.P.CephStatusInterval
	if o.pol.Gate == gateAllClean {
		every = o.P.RookMDBRequeue
	}
	o.events.at(o.now+every, operatorEvent{kind: evMDBPoll})
	if !o.up {
		return
	}
	h, pg := o.ceph.observed()
	v := int32(0)
	switch {
	case h == HealthNoAnswer:
		if !o.pol.FailSafe {
			return
		}
	case o.pol.Gate == gateHealthOK:
		if h == HealthOK {
			v = 1
		}
	case o.pol.Gate == gateAllClean:
		if pg.clean == len(o.pgs.pgs) {
			v = 1
		}
	}
	o.reconcileLater(operatorEvent{kind: evMDBApply, v: v, obs: o.now})
}

// machineChanged: the label controller sees machine i's change (rook
// labels while an OSD pod is scheduled).
func (o *operator) machineChanged(i int) {
	if o.pol.Label == labelPodScheduled {
		if o.wantLabel(i) != o.fleet.m[i].labelled {
			o.labelTrigger(i)
		}
	}
}

// nodeReadyChanged: the controllers see machine i's Node turn Ready or
// NotReady.
func (o *operator) nodeReadyChanged(i int) {
	if o.pol.Label == labelPodReady || o.pol.Label == labelPodScheduled {
		o.labelTrigger(i)
	}
	o.safe.readyChanged(i)
}

// resync runs when the operator (re)starts: every controller reconciles
// every machine from scratch.
func (o *operator) resync() {
	for i := range o.fleet.m {
		m := &o.fleet.m[i]
		if o.pol.Label == labelPodReady || o.pol.Label == labelPodScheduled {
			if o.wantLabel(i) != m.labelled {
				o.labelTrigger(i)
			}
		}
		o.rookResync(i)
		o.safe.resync(i)
	}
}
