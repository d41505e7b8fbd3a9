package sim

import "fmt"

// The MachineHealthCheck, remediation (the fence) and the MachineSet's
// replacement of deleted machines.

func (f *fleet) mhcCheck(i int, gen int32) {
	m := &f.m[i]
	n := &f.kube.nodes[i]
	if f.mhcStall || n.readyGen != gen || n.ready || m.phase != PhaseRunning || !m.machineSet {
		return
	}
	if due := f.unhealthyAt(i); f.now < due {
		f.at(due+f.P.MHCLag, evMHCCheck, i, gen)
		return
	}
	if !m.unhealthy {
		m.unhealthy = true
		f.nUnhealthy++
		if f.rec != nil {
			if n.everUp {
				f.logf("mhc", "%s unhealthy: Ready=False since %s", m.Name, n.readyLT)
			} else {
				f.logf("mhc", "%s unhealthy: no Ready node %s after creation (nodeStartupTimeout)", m.Name, f.P.MHCNodeStartupTimeout.Dur())
			}
		}
	}
	if f.pol.Grants {
		return // external remediation: the safe controller acts on the request
	}
	if f.pol.NoRemediation {
		m.blocked = "the policy never fences"
		return
	}
	if f.pol.OOSTaint {
		f.kube.taint(i)
		return
	}
	retry := func(why string) {
		m.blocked = why
		if !m.refused && f.rec != nil {
			f.logf("mhc", "%s remediation refused: %s (retry every %s)", m.Name, why, f.mhcRetry().Dur())
		}
		m.refused = true
		f.at(f.now+f.mhcRetry(), evMHCCheck, i, gen)
	}
	if f.nUnhealthy*100 > f.P.MHCMaxUnhealthyPct*f.nTargets {
		retry("maxUnhealthy exceeded")
		return
	}
	if m.labelled && f.pol.Gate != gateNone {
		if f.mdbAllowed() <= 0 {
			retry("MachineDisruptionBudget allows 0 disruptions")
			return
		}
	}
	f.fence(i, "MachineHealthCheck")
}

// unhealthyAt is when the MHC deems machine i unhealthy: unhealthyTimeout
// after the Ready condition's last transition, or nodeStartupTimeout after
// creation for a machine whose node never became Ready.
func (f *fleet) unhealthyAt(i int) Time {
	n := &f.kube.nodes[i]
	if !n.everUp {
		return n.readyLT + f.P.MHCNodeStartupTimeout
	}
	return n.readyLT + f.P.MHCUnhealthyTimeout
}

// recheck schedules the MHC's look at machine i after its Node's Ready
// condition turned False (readyGen is the condition's generation).
func (f *fleet) recheck(i int, readyGen int32) {
	if m := &f.m[i]; m.machineSet && m.phase == PhaseRunning {
		f.at(f.now+f.P.MHCUnhealthyTimeout+f.P.MHCLag, evMHCCheck, i, readyGen)
	}
}

// nodeReady: machine i's Node is Ready; the MHC no longer deems it
// unhealthy.
func (f *fleet) nodeReady(i int) {
	m := &f.m[i]
	m.reboots = 0
	m.refused = false
	if m.unhealthy {
		m.unhealthy = false
		f.nUnhealthy--
	}
}

// setMHCStalled stalls or resumes the MHC controller; resumed, it looks at
// every machine whose Node is not Ready.
func (f *fleet) setMHCStalled(on bool) {
	f.mhcStall = on
	if on {
		return
	}
	for i := range f.m {
		m := &f.m[i]
		if n := &f.kube.nodes[i]; !n.ready && m.phase == PhaseRunning && m.machineSet {
			f.at(f.now+f.P.MHCLag, evMHCCheck, i, n.readyGen)
		}
	}
}

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
	switch kind {
	case FenceReboot:
		m.phase = PhaseRebooting
		m.booted = false
		f.at(f.now+f.P.RebootTime, evRebootDone, i, m.gen)
	default:
		if kind == FenceDeleteWipe {
			f.pgs.wipe(i)
		}
		if kind == FenceDeleteWipe || f.cfg.Cluster.MonStore == MonStoreHost {
			f.ceph.hostMonStoreLost(i)
		}
		m.phase = PhaseDeleting
		f.at(f.now+f.P.ProviderDeleteTime, evInstanceTerminated, i, m.gen)
	}
	f.kube.nodes[i].ready = false
	f.watch.plotNode(i)
	f.changed(i)
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
	if !m.machineSet || f.inSet() > f.scale() {
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
	m.remediated = false
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

func (f *fleet) rebootDone(i int, gen int32) {
	m := &f.m[i]
	if m.gen != gen || m.phase != PhaseRebooting {
		return
	}
	m.phase = PhaseRunning
	f.faults.osRestarted(i)
	m.powered = false
	m.reboots++
	// a host that does not come back is rebooted again at most
	// rebootRetryLimit times; then it stays fenced, for a person
	m.remediated = m.reboots > f.P.RebootRetryLimit
	if !f.cfg.Cluster.BareMetal {
		// a cloud power cycle (stop/start) brings the instance up on other
		// hardware, with its disks: the old hardware's faults stay behind
		m.hw++
		f.faults.newHardware(i)
	}
	if n := &f.kube.nodes[i]; m.machineSet && !n.ready && !m.remediated {
		// still unhealthy after the remediation: the MHC looks again one
		// unhealthy timeout later
		f.at(f.now+f.P.MHCUnhealthyTimeout+f.P.MHCLag, evMHCCheck, i, n.readyGen)
		f.safe.recheckAfterReboot(i)
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
