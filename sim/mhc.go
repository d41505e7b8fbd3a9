package sim

import "fmt"

// The MachineHealthCheck, remediation (the fence) and the MachineSet's
// replacement of deleted machines.

func (s *Sim) mhcCheck(i int, gen int32) {
	m := &s.machines[i]
	if s.mhcStall || m.readyGen != gen || m.ready || m.phase != PhaseRunning || !m.machineSet {
		return
	}
	if due := s.unhealthyAt(i); s.now < due {
		s.schedule(due+s.P.MHCLag, evMHCCheck, int32(i), gen, 0)
		return
	}
	if !m.unhealthy {
		m.unhealthy = true
		s.nUnhealthy++
		if s.rec != nil {
			if m.everUp {
				s.logf("mhc", "%s unhealthy: Ready=False since %s", m.Name, m.readyLT)
			} else {
				s.logf("mhc", "%s unhealthy: no Ready node %s after creation (nodeStartupTimeout)", m.Name, s.P.MHCNodeStartupTimeout.Dur())
			}
		}
	}
	if s.pol.Grants {
		return // external remediation: the safe controller acts on the request
	}
	if s.pol.NoRemediation {
		m.blocked = "the policy never fences"
		return
	}
	if s.pol.OOSTaint {
		s.oosTaint(i)
		return
	}
	retry := func(why string) {
		m.blocked = why
		if !m.refused && s.rec != nil {
			s.logf("mhc", "%s remediation refused: %s (retry every %s)", m.Name, why, s.mhcRetry().Dur())
		}
		m.refused = true
		s.schedule(s.now+s.mhcRetry(), evMHCCheck, int32(i), gen, 0)
	}
	if s.nUnhealthy*100 > s.P.MHCMaxUnhealthyPct*s.nTargets {
		retry("maxUnhealthy exceeded")
		return
	}
	if m.labelled && s.pol.Gate != gateNone {
		if s.mdbAllowed() <= 0 {
			retry("MachineDisruptionBudget allows 0 disruptions")
			return
		}
	}
	s.fence(i, "MachineHealthCheck")
}

// unhealthyAt is when the MHC deems machine i unhealthy: unhealthyTimeout
// after the Ready condition's last transition, or nodeStartupTimeout after
// creation for a machine whose node never became Ready.
func (s *Sim) unhealthyAt(i int) Time {
	m := &s.machines[i]
	if !m.everUp {
		return m.readyLT + s.P.MHCNodeStartupTimeout
	}
	return m.readyLT + s.P.MHCUnhealthyTimeout
}

func (s *Sim) kindOf(i int) FenceKind {
	if k := s.machines[i].kindOverride; k >= 0 {
		return FenceKind(k)
	}
	return s.cfg.Cluster.FenceKind
}

// fence performs MHC remediation on machine i.
func (s *Sim) fence(i int, by string) {
	m := &s.machines[i]
	kind := s.kindOf(i)
	if s.rec != nil {
		s.logf("FENCE", "%s %s by %s (labelled=%v, MDB maxUnavailable=%d observed %s)", m.Name, kind, by, m.labelled, s.mdbMax, s.mdbObs)
		s.rec.fence(s, i, kind.String())
	}
	s.checkFence(i, kind)
	s.metrics.Fences++
	s.metrics.fenceHealth(s)
	m.remediated = true
	m.refused = false
	s.setFenced(i)
	if m.unhealthy {
		m.unhealthy = false
		s.nUnhealthy--
	}
	switch kind {
	case FenceReboot:
		m.phase = PhaseRebooting
		m.booted = false
		s.schedule(s.now+s.P.RebootTime, evRebootDone, int32(i), m.gen, 0)
	default:
		if kind == FenceDeleteWipe {
			s.wipe(i)
		}
		if m.mon >= 0 && (kind == FenceDeleteWipe || s.cfg.Cluster.MonStore == MonStoreHost) {
			s.monStoreLost(m.mon)
		}
		m.phase = PhaseDeleting
		s.schedule(s.now+s.P.ProviderDeleteTime, evMachineTerminated, int32(i), m.gen, 0)
	}
	m.ready = false
	if s.rec != nil {
		s.rec.nodeState(s, i)
	}
	s.machineChanged(i)
}

func (s *Sim) machineTerminated(i int, gen int32) {
	m := &s.machines[i]
	if m.gen != gen || m.phase != PhaseDeleting {
		return
	}
	m.powered, m.booted = false, false
	m.phase = PhaseProvisioning
	// machine-api-operator deletes the Node once the instance is gone
	m.hasNode = false
	s.nodeDeleted(i)
	if !m.machineSet || s.inSet() > s.scale() {
		m.phase = PhaseGone
		m.machineSet = false
		s.nTargets--
		s.clearFenced(i) // it never comes back: it must not block other fences forever
	}
	if s.rec != nil {
		s.logf("machine", "%s instance terminated", m.Name)
		s.rec.nodeState(s, i)
	}
	s.machineChanged(i)
	if m.phase == PhaseProvisioning {
		d := s.P.MachineProvisionTime
		if s.cfg.Cluster.BareMetal {
			d = s.P.BareMetalReprovisionTime
		}
		s.schedule(s.now+s.jit(d), evMachineReplaced, int32(i), gen, 0)
	}
}

// inSet counts the MachineSet's machines that exist (not Gone).
func (s *Sim) inSet() int {
	n := 0
	for i := range s.machines {
		if s.machines[i].machineSet && s.machines[i].phase != PhaseGone {
			n++
		}
	}
	return n
}

func (s *Sim) scale() int {
	if s.cfg.Cluster.MachineSetScale > 0 {
		return s.cfg.Cluster.MachineSetScale
	}
	return len(s.machines) - len(s.cfg.Cluster.Standalone)
}

// machineReplaced brings up the MachineSet's replacement; on cloud the OSDs
// follow their volumes to it, on bare metal the host is reprovisioned.
func (s *Sim) machineReplaced(i int, gen int32) {
	m := &s.machines[i]
	if m.gen != gen || m.phase != PhaseProvisioning {
		return
	}
	m.gen++
	m.phase = PhaseRunning
	m.hung, m.booted, m.osdCrashed = false, false, false
	if s.cfg.Cluster.BareMetal {
		// the same host, reprovisioned: its hardware faults (power, links)
		// are still there (faults.go, hw)
		m.powered = !m.powerLost
	} else {
		m.powered, m.powerLost, m.reportOff = true, false, false
		m.link = [3]bool{true, true, true}
		m.hw++
	}
	m.storageFenced, m.granted, m.remediated, m.everUp, m.clientFenced = false, false, false, false, false
	m.kindOverride = -1
	m.blocked, m.safeWhy = "", ""
	if s.pol.Grants {
		m.block = blockEntry{}
	}
	m.Name = fmt.Sprintf("%s.%d", baseName(m.Name), m.gen)
	if s.rec != nil {
		s.logf("machine", "%s created by MachineSet", m.Name)
		s.rec.nodeState(s, i)
	}
	s.setLabel(i, s.pol.initialLabel(s, i), s.now)
	if m.powered {
		s.schedule(s.now+s.jit(s.P.NodeBootTime), evNodeBoot, int32(i), m.gen, 0)
	}
	m.readyLT = s.now
	m.readyGen++
	s.schedule(s.unhealthyAt(i)+s.P.MHCLag, evMHCCheck, int32(i), m.readyGen, 0)
	s.pol.onReadyChange(s, i)
	s.machineChanged(i)
}

func baseName(n string) string {
	for j := 0; j < len(n); j++ {
		if n[j] == '.' {
			return n[:j]
		}
	}
	return n
}

func (s *Sim) rebootDone(i int, gen int32) {
	m := &s.machines[i]
	if m.gen != gen || m.phase != PhaseRebooting {
		return
	}
	m.phase = PhaseRunning
	m.hung = false
	m.powered = false
	m.reboots++
	// a host that does not come back is rebooted again at most
	// rebootRetryLimit times; then it stays fenced, for a person
	m.remediated = m.reboots > s.P.RebootRetryLimit
	if !s.cfg.Cluster.BareMetal {
		// a cloud power cycle (stop/start) brings the instance up on other
		// hardware, with its disks: the old hardware's faults stay behind
		m.powerLost, m.reportOff = false, false
		m.link = [3]bool{true, true, true}
		m.hw++
	}
	if m.machineSet && !m.ready && !m.remediated {
		// still unhealthy after the remediation: the MHC looks again one
		// unhealthy timeout later
		s.schedule(s.now+s.P.MHCUnhealthyTimeout+s.P.MHCLag, evMHCCheck, int32(i), m.readyGen, 0)
		if s.pol.Grants {
			s.schedule(s.now+s.P.MHCUnhealthyTimeout+s.jit(s.P.OperatorLag), evSafeCheck, int32(i), m.readyGen, int64(s.opEpoch))
		}
	}
	if s.pol.Grants {
		m.block = blockEntry{}
		m.clientFenced = false
	}
	if s.rec != nil {
		s.logf("machine", "%s power cycle done", m.Name)
		s.rec.nodeState(s, i)
	}
	if !m.powerLost {
		s.powerOn(i)
	}
	s.machineChanged(i)
}

// setFenced marks an OSD machine "fenced or not yet back" (invariant 1).
func (s *Sim) setFenced(i int) {
	m := &s.machines[i]
	if len(m.osds) == 0 || m.fenced {
		return
	}
	m.fenced = true
	s.nFenced++
	s.fencedDom(i, 1)
}

// clearFenced drops machine i from "fenced or not yet back" (invariant 1).
func (s *Sim) clearFenced(i int) {
	m := &s.machines[i]
	if !m.fenced {
		return
	}
	m.fenced = false
	s.nFenced--
	s.fencedDom(i, -1)
	if s.rec != nil {
		s.logf("machine", "%s gone for good: no longer counted as fenced and not back", m.Name)
	}
}

// backCheck clears "fenced or not yet back" once the machine runs, its node
// is Ready and all its OSDs are up.
func (s *Sim) backCheck(i int) {
	m := &s.machines[i]
	if !m.fenced || m.phase != PhaseRunning || !m.ready || m.upOSDs != len(m.osds) || m.storageFenced {
		return
	}
	m.fenced = false
	s.nFenced--
	s.fencedDom(i, -1)
	if s.rec != nil {
		s.logf("machine", "%s back: node Ready, all OSDs up", m.Name)
	}
}
