package sim

// Fault injection and repair: applies the fault table (faults.go) to machines and controllers.

// injectFault applies occurrence k of scheduled fault fi; hw is the
// hardware generation the series started on (repeats of a hardware fault
// stop when the machine runs on other hardware).
func (s *Sim) injectFault(fi, k int, hw int32) {
	f := s.cfg.Faults[fi]
	if f.Machine >= 0 {
		m := &s.machines[f.Machine]
		if k == 0 {
			hw = m.hw
		} else if f.Kind.hw() && m.hw != hw {
			return
		}
	}
	if k+1 < f.Repeat {
		s.schedule(f.At+Time(k+1)*f.Every, evFault, int32(fi), int32(k+1), int64(hw))
	}
	if f.Kind.controller() {
		s.controllerFault(f.Kind, true)
		if f.For > 0 {
			s.schedule(s.now+f.For, evHeal, -1, int32(f.Kind), 0)
		}
		return
	}
	m := &s.machines[f.Machine]
	if s.rec != nil {
		if f.For > 0 {
			s.logf("fault", "%s %s for %s", f.Kind, m.Name, f.For.Dur())
		} else {
			s.logf("fault", "%s %s", f.Kind, m.Name)
		}
	}
	s.applyFault(f.Kind, f.Machine)
	if f.For > 0 {
		s.schedule(s.now+f.For, evHeal, int32(f.Machine), int32(f.Kind), int64(m.gen))
	}
}

func (s *Sim) applyFault(k FaultKind, i int) {
	m := &s.machines[i]
	if m.phase == PhaseGone {
		return
	}
	if k.breaks() && m.ready {
		m.faultAt = s.now
	}
	switch k {
	case FaultPowerOff:
		m.powered, m.powerLost, m.booted = false, true, false
		m.offAt = s.now
	case FaultPowerOn:
		m.powerLost = false
		s.powerOn(i)
	case FaultHang:
		m.hung = true
	case FaultUnhang:
		m.hung = false
	case FaultAPICut, FaultAPIHeal:
		m.link[linkAPI] = k == FaultAPIHeal
	case FaultPublicCut, FaultPublicHeal:
		m.link[linkPublic] = k == FaultPublicHeal
	case FaultClusterCut, FaultClusterHeal:
		m.link[linkCluster] = k == FaultClusterHeal
	case FaultPowerReportOff, FaultPowerReportFixed:
		m.reportOff = k == FaultPowerReportOff
	case FaultNICCut, FaultNICHeal:
		v := k == FaultNICHeal
		m.link = [3]bool{v, v, v}
	case FaultRemoveOOSTaint:
		s.oosUntaint(i)
	case FaultOSDCrash, FaultOSDStart:
		m.osdCrashed = k == FaultOSDCrash
	}
	s.machineChanged(i)
}

func (s *Sim) powerOn(i int) {
	m := &s.machines[i]
	if m.powered || m.phase != PhaseRunning {
		return
	}
	m.powered, m.booted = true, false
	s.schedule(s.now+s.jit(s.P.NodeBootTime), evNodeBoot, int32(i), m.gen, 0)
}

func (s *Sim) heal(k FaultKind, i int, gen int32) {
	if i < 0 {
		s.controllerFault(k, false)
		return
	}
	m := &s.machines[i]
	h := k.healer()
	if m.gen != gen && !(h.hw() && s.cfg.Cluster.BareMetal) {
		return // a cloud replacement is another instance: the fault stayed with the old one
	}
	if s.rec != nil {
		s.logf("fault", "%s %s", h, m.Name)
	}
	s.applyFault(h, i)
}

func (s *Sim) controllerFault(k FaultKind, on bool) {
	switch k {
	case FaultOperatorStall, FaultOperatorResume:
		s.opStalled = on && k == FaultOperatorStall
		s.opRecompute()
	case FaultSetNoOut, FaultUnsetNoOut:
		s.setFlag(flagNoOut, on && k == FaultSetNoOut)
	case FaultSetNoRebalance, FaultUnsetNoRebalance:
		s.setFlag(flagNoRebalance, on && k == FaultSetNoRebalance)
	case FaultStatusHang, FaultStatusAnswers:
		s.statusHang = on && k == FaultStatusHang
	case FaultMgrStale, FaultMgrFresh:
		s.setMgrStale(on && k == FaultMgrStale)
	case FaultMHCStall, FaultMHCResume:
		s.mhcStall = on && k == FaultMHCStall
		if !s.mhcStall {
			for i := range s.machines {
				m := &s.machines[i]
				if !m.ready && m.phase == PhaseRunning && m.machineSet {
					s.schedule(s.now+s.P.MHCLag, evMHCCheck, int32(i), m.readyGen, 0)
				}
			}
		}
	}
	if s.rec != nil {
		if on {
			s.logf("fault", "%s", k)
		} else {
			s.logf("fault", "%s", k.healer())
		}
	}
}

// randomFault injects one random machine failure (benchmarks and soak runs).
func (s *Sim) randomFault() {
	i := s.rng.IntN(len(s.machines))
	kinds := [...]FaultKind{FaultPowerOff, FaultPowerOff, FaultHang, FaultAPICut, FaultClusterCut, FaultNICCut}
	k := kinds[s.rng.IntN(len(kinds))]
	m := &s.machines[i]
	if m.phase == PhaseRunning {
		s.applyFault(k, i)
		s.schedule(s.expo(s.cfg.RandomFailureFor), evHeal, int32(i), int32(k), int64(m.gen))
	}
	s.schedule(s.expo(s.cfg.RandomFailureEvery), evRandomFault, 0, 0, 0)
}
