package sim

// The MachineHealthCheck: when a machine is unhealthy and what keeps its
// remediation (remediation.go) from starting.

func (f *fleet) mhcCheck(i int, gen int32) {
	m := &f.m[i]
	n := &f.kube.nodes[i]
	if f.mhcStall || n.readyGen != gen || n.ready || m.phase != PhaseRunning || !m.machineSet || m.remediated {
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
	m.blocked = ""
	if m.bmh == bmhWaiting {
		// the Node is back: the remediation is over
		m.bmh, m.remediated = bmhIdle, false
	}
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
