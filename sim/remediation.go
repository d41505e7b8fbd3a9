package sim

import "fmt"

// Remediation: what a fence does to a machine, and the MachineSet's
// replacement of deleted machines.
//
//   - delete (cloud: the instance is deleted, its volumes with the OSDs
//     move to the replacement; bare metal: the host is deprovisioned and
//     reprovisioned) and delete-wipe (the disks are wiped);
//   - reboot on bare metal, as OpenShift's Metal3 remediation does it
//     (cluster-api-provider-baremetal, metal3remediation_controller.go,
//     strategy Reboot): it asks the BareMetalHost's BMC to power the host
//     off and waits until the BMC reports it off; only then it deletes
//     the Node (so that its pods, gone with the power, are deleted and
//     the workloads move), and asks for the power back. A host without
//     power has no BMC to answer: the power-off is never confirmed, the
//     Node is never deleted and the remediation waits until the power
//     returns. When the Node is not back within the remediation's timeout
//     (rebootRemediationTimeout) it power-cycles the host again, at most
//     rebootRetryLimit times; then it deletes the Machine and marks the
//     host unhealthy, so the MachineSet's replacement gets no host;
//   - reboot on cloud (safe power-cycles a mon host): the provider's
//     stop/start, which brings the instance up on other hardware; the
//     Node is kept.

// bmhStep is the step of a bare-metal reboot remediation.
type bmhStep uint8

const (
	bmhIdle     bmhStep = iota // no remediation
	bmhPowerOff                // the BMC was asked to power the host off; not confirmed yet
	bmhOff                     // the host is off and its Node deleted; the power comes back after rebootTime
	bmhWaiting                 // the power is back; the remediation waits for the Node (its timeout)
)

func (f *fleet) kindOf(i int) FenceKind {
	if k := f.m[i].kindOverride; k >= 0 {
		return FenceKind(k)
	}
	return f.cfg.Cluster.FenceKind
}

// fence performs MHC remediation on machine i.
func (f *fleet) fence(i int, by string) {
	m := &f.m[i]
	kind := f.kindOf(i)
	if f.rec != nil {
		f.logf("FENCE", "%s %s by %s (labelled=%v, MDB maxUnavailable=%d observed %s)", m.Name, kind, by, m.labelled, f.mdbMax, f.mdbObs)
		f.rec.fence(f.now, i, kind.String())
	}
	f.watch.checkFence(i, kind)
	f.watch.metrics.Fences++
	f.watch.fenceAction()
	m.remediated = true
	m.refused = false
	f.watch.setFenced(i)
	if m.unhealthy {
		m.unhealthy = false
		f.nUnhealthy--
	}
	switch {
	case kind == FenceReboot && f.cfg.Cluster.BareMetal:
		m.remStart = f.now
		f.bmcPowerOff(i)
		return
	case kind == FenceReboot:
		m.phase = PhaseRebooting
		m.booted = false
		f.at(f.now+f.P.RebootTime, evRebootDone, i, m.gen)
	default:
		f.deleteMachine(i, kind)
	}
	f.kube.nodes[i].ready = false
	f.watch.plotNode(i)
	f.changed(i)
}

// deleteMachine deletes machine i's Machine (wiping its disks for
// delete-wipe): the provider deletes the instance.
func (f *fleet) deleteMachine(i int, kind FenceKind) {
	m := &f.m[i]
	if kind == FenceDeleteWipe {
		f.pgs.wipe(i)
	}
	if kind == FenceDeleteWipe || f.cfg.Cluster.MonStore == MonStoreHost {
		f.ceph.hostMonStoreLost(i)
	}
	m.phase = PhaseDeleting
	f.at(f.now+f.P.ProviderDeleteTime, evInstanceTerminated, i, m.gen)
}

// bmcPowerOff: the remediation asks machine i's BMC to power the host off.
// Without power the BMC does not answer, and the remediation waits for it
// (powerRestored).
func (f *fleet) bmcPowerOff(i int) {
	m := &f.m[i]
	m.bmh = bmhPowerOff
	if m.powerLost {
		if f.rec != nil {
			f.logf("machine", "%s: the remediation asked its BMC to power it off; the host has no power and its BMC does not answer: the power-off cannot be confirmed, the Node is not deleted", m.Name)
		}
		f.safe.bmcUnreachable(i)
		return
	}
	f.at(f.now+f.P.BMCPowerOffTime, evBMCPoweredOff, i, m.gen)
}

// powerRestored: machine i's power is back. A remediation waiting for its
// BMC now has the host powered off; otherwise the host boots.
func (f *fleet) powerRestored(i int) {
	if f.m[i].bmh == bmhPowerOff {
		f.at(f.now+f.P.BMCPowerOffTime, evBMCPoweredOff, i, f.m[i].gen)
		return
	}
	if f.m[i].bmh != bmhOff {
		f.powerOn(i)
	}
}

// bmcPoweredOff: the BMC reports machine i off; the remediation deletes
// its Node, then asks for the power back rebootTime later.
func (f *fleet) bmcPoweredOff(i int, gen int32) {
	m := &f.m[i]
	if m.gen != gen || m.bmh != bmhPowerOff || m.powerLost {
		return
	}
	m.bmh = bmhOff
	m.phase = PhaseRebooting
	m.powered, m.booted = false, false
	f.faults.osRestarted(i)
	if f.rec != nil {
		f.logf("machine", "%s powered off by its BMC; the remediation deletes its Node", m.Name)
	}
	f.kube.nodeDeleted(i)
	f.watch.plotNode(i)
	f.changed(i)
	f.at(f.now+f.P.RebootTime, evRebootDone, i, gen)
}

// rebootDone: the power cycle is over; the host powers on (bare metal:
// the remediation waits for its Node until its timeout).
func (f *fleet) rebootDone(i int, gen int32) {
	m := &f.m[i]
	if m.gen != gen || m.phase != PhaseRebooting {
		return
	}
	m.phase = PhaseRunning
	if f.cfg.Cluster.BareMetal {
		// the remediation waits for the Node until its timeout
		m.bmh = bmhWaiting
		f.at(max(f.now, m.remStart+f.P.RebootRemediationTimeout), evRemediationTimeout, i, m.gen)
	} else {
		f.stopStarted(i)
	}
	f.safe.machineRebooted(i)
	if f.rec != nil {
		f.logf("machine", "%s power cycle done", m.Name)
		f.watch.plotNode(i)
	}
	if !m.powerLost {
		f.powerOn(i)
	}
	f.changed(i)
}

// remediationTimeout: machine i's Node is not back within the
// remediation's timeout: power-cycle it again, or, the retries used up,
// delete the Machine and mark the host unhealthy.
func (f *fleet) remediationTimeout(i int, gen int32) {
	m := &f.m[i]
	if m.gen != gen || m.bmh != bmhWaiting || f.kube.nodes[i].ready {
		return
	}
	if m.reboots < f.P.RebootRetryLimit {
		m.reboots++
		if f.rec != nil {
			f.logf("machine", "%s not back %s after its remediation began: power cycle %d of %d", m.Name, (f.now - m.remStart).Dur(), m.reboots+1, f.P.RebootRetryLimit+1)
		}
		m.remStart = f.now
		f.bmcPowerOff(i)
		return
	}
	m.bmh = bmhIdle
	m.hostUnhealthy = true
	if f.rec != nil {
		f.logf("machine", "%s not back after %d power cycles: the remediation deletes the Machine and marks its host unhealthy (no replacement gets it)", m.Name, m.reboots+1)
	}
	f.deleteMachine(i, FenceDelete)
	f.watch.plotNode(i)
	f.changed(i)
}

// stopStarted: a cloud power cycle (stop/start) brings machine i up on
// other hardware, with its disks: the old hardware's faults stay behind.
// A host that does not come back is cycled again at most
// rebootRetryLimit times; then it stays fenced, for a person.
func (f *fleet) stopStarted(i int) {
	m := &f.m[i]
	m.reboots++
	m.remediated = m.reboots > f.P.RebootRetryLimit
	f.faults.osRestarted(i)
	m.powered = false
	m.hw++
	f.faults.newHardware(i)
	if n := &f.kube.nodes[i]; m.machineSet && !n.ready && !m.remediated {
		// still unhealthy after the remediation: the MHC looks again one
		// unhealthy timeout later
		f.at(f.now+f.P.MHCUnhealthyTimeout+f.P.MHCLag, evMHCCheck, i, n.readyGen)
		f.safe.recheckAfterReboot(i)
	}
}

func (f *fleet) instanceTerminated(i int, gen int32) {
	m := &f.m[i]
	if m.gen != gen || m.phase != PhaseDeleting {
		return
	}
	m.powered, m.booted = false, false
	m.phase = PhaseProvisioning
	// machine-api-operator deletes the Node once the instance is gone
	f.kube.nodeDeleted(i)
	if !m.machineSet || f.inSet() > f.scale() || m.hostUnhealthy {
		m.phase = PhaseGone
		m.machineSet = false
		f.nTargets--
		f.watch.clearFenced(i) // it never comes back: it must not block other fences forever
	}
	if f.rec != nil {
		f.logf("machine", "%s instance terminated", m.Name)
		f.watch.plotNode(i)
	}
	f.changed(i)
	if m.phase == PhaseProvisioning {
		d := f.P.MachineProvisionTime
		if f.cfg.Cluster.BareMetal {
			d = f.P.BareMetalReprovisionTime
		}
		f.at(f.now+f.jit(d), evMachineReplaced, i, gen)
	}
}

// machineReplaced brings up the MachineSet's replacement; on cloud the OSDs
// follow their volumes to it, on bare metal the host is reprovisioned.
func (f *fleet) machineReplaced(i int, gen int32) {
	m := &f.m[i]
	if m.gen != gen || m.phase != PhaseProvisioning {
		return
	}
	m.gen++
	m.phase = PhaseRunning
	m.booted = false
	f.faults.osRestarted(i)
	if f.cfg.Cluster.BareMetal {
		// the same host, reprovisioned: its hardware faults (power, links)
		// are still there (faults.go, hw)
		m.powered = !m.powerLost
	} else {
		m.hw++
		f.faults.newHardware(i)
		m.powered = true
	}
	m.remediated, m.bmh, m.reboots = false, bmhIdle, 0
	f.ceph.hostReplaced(i)
	f.safe.machineReplaced(i)
	m.kindOverride = -1
	m.blocked = ""
	m.Name = fmt.Sprintf("%s.%d", baseName(m.Name), m.gen)
	if f.rec != nil {
		f.logf("machine", "%s created by MachineSet", m.Name)
		f.watch.plotNode(i)
	}
	f.setLabel(i, f.op.initialLabel(i), f.now)
	if m.powered {
		f.at(f.now+f.jit(f.P.NodeBootTime), evHostBoot, i, m.gen)
	}
	readyGen := f.kube.nodeCreated(i)
	f.at(f.unhealthyAt(i)+f.P.MHCLag, evMHCCheck, i, readyGen)
	f.op.readyChanged(i)
	f.changed(i)
}
