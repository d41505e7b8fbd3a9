package sim

// Fault injection and repair: applies the fault table (faults.go) to
// machines and controllers. The injector also stands for the people
// outside the model: the administrator who removes an out-of-service taint,
// and the end of the run.

// faultEventKind names an event of the injector.
type faultEventKind uint8

const (
	evInject       faultEventKind = iota // a scheduled fault (or one of its repeats) happens
	evRepair                             // a fault's `for:` is over
	evRandomFault                        // a random machine failure (benchmarks, soak runs)
	evTaintRemoval                       // an administrator removes an out-of-service taint
	evEnd                                // the end of the run
)

// faultEvent is an event of the injector. evInject: fault f of the
// schedule, its repeat rep, the hardware generation hw its series started
// on. evRepair: the repair of kind on machine m (-1: a controller) in
// incarnation gen. evTaintRemoval: machine m, its Node's Ready generation
// gen.
type faultEvent struct {
	kind faultEventKind
	f    int32
	rep  int32
	m    int32
	gen  int32
	hw   int32
	what FaultKind
}

// injector injects the scheduled and random faults and the
// administrator's actions.
type injector struct {
	*core
	events mailbox[faultEvent]
	fleet  *fleet
	kube   *kube
	ceph   *cephCluster
	op     *operator
	watch  *monitor

	ended bool
}

func (in *injector) handle(e faultEvent) {
	switch e.kind {
	case evInject:
		in.inject(int(e.f), int(e.rep), e.hw)
	case evRepair:
		in.repair(e.what, int(e.m), e.gen)
	case evRandomFault:
		in.randomFault()
	case evTaintRemoval:
		if n := &in.kube.nodes[e.m]; n.readyGen == e.gen && n.ready {
			in.kube.untaint(int(e.m))
		}
	case evEnd:
		in.ended = true
	}
}

// schedule schedules the run's faults.
func (in *injector) schedule() {
	for i, f := range in.cfg.Faults {
		in.events.at(f.At, faultEvent{kind: evInject, f: int32(i)})
	}
}

// scheduleRandom starts the random failures and schedules the end.
func (in *injector) scheduleRandom() {
	if in.cfg.RandomFailureEvery > 0 {
		in.events.at(in.expo(in.cfg.RandomFailureEvery), faultEvent{kind: evRandomFault})
	}
	in.events.at(in.cfg.Duration, faultEvent{kind: evEnd})
}

// untaintAfter: an administrator removes machine i's out-of-service taint
// d from now, if its Node is still Ready in generation readyGen then.
func (in *injector) untaintAfter(i int, d Time, readyGen int32) {
	in.events.at(in.now+d, faultEvent{kind: evTaintRemoval, m: int32(i), gen: readyGen})
}

// inject applies occurrence k of scheduled fault fi; hw is the hardware
// generation the series started on (repeats of a hardware fault stop when
// the machine runs on other hardware).
func (in *injector) inject(fi, k int, hw int32) {
	f := in.cfg.Faults[fi]
	if f.Machine >= 0 {
		m := &in.fleet.m[f.Machine]
		if k == 0 {
			hw = m.hw
		} else if f.Kind.hw() && m.hw != hw {
			return
		}
	}
	if k+1 < f.Repeat {
		in.events.at(f.At+Time(k+1)*f.Every, faultEvent{kind: evInject, f: int32(fi), rep: int32(k + 1), hw: hw})
	}
	if f.Kind.controller() {
		in.controllerFault(f.Kind, true)
		if f.For > 0 {
			in.events.at(in.now+f.For, faultEvent{kind: evRepair, m: -1, what: f.Kind})
		}
		return
	}
	m := &in.fleet.m[f.Machine]
	if in.rec != nil {
		if f.For > 0 {
			in.logf("fault", "%s %s for %s", f.Kind, m.Name, f.For.Dur())
		} else {
			in.logf("fault", "%s %s", f.Kind, m.Name)
		}
	}
	in.apply(f.Kind, f.Machine)
	if f.For > 0 {
		in.events.at(in.now+f.For, faultEvent{kind: evRepair, m: int32(f.Machine), gen: m.gen, what: f.Kind})
	}
}

func (in *injector) apply(k FaultKind, i int) {
	m := &in.fleet.m[i]
	if m.phase == PhaseGone {
		return
	}
	if k.breaks() {
		in.watch.noteFault(i)
	}
	switch k {
	case FaultPowerOff:
		m.powered, m.powerLost, m.booted = false, true, false
		m.offAt = in.now
	case FaultPowerOn:
		m.powerLost = false
		in.fleet.powerOn(i)
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
		in.kube.untaint(i)
	case FaultOSDCrash, FaultOSDStart:
		m.osdCrashed = k == FaultOSDCrash
	}
	in.fleet.changed(i)
}

func (in *injector) repair(k FaultKind, i int, gen int32) {
	if i < 0 {
		in.controllerFault(k, false)
		return
	}
	m := &in.fleet.m[i]
	h := k.healer()
	if m.gen != gen && !(h.hw() && in.cfg.Cluster.BareMetal) {
		return // a cloud replacement is another instance: the fault stayed with the old one
	}
	if in.rec != nil {
		in.logf("fault", "%s %s", h, m.Name)
	}
	in.apply(h, i)
}

func (in *injector) controllerFault(k FaultKind, on bool) {
	switch k {
	case FaultOperatorStall, FaultOperatorResume:
		in.op.setStalled(on && k == FaultOperatorStall)
	case FaultSetNoOut, FaultUnsetNoOut:
		in.ceph.setFlag(flagNoOut, on && k == FaultSetNoOut)
	case FaultSetNoRebalance, FaultUnsetNoRebalance:
		in.ceph.setFlag(flagNoRebalance, on && k == FaultSetNoRebalance)
	case FaultStatusHang, FaultStatusAnswers:
		in.ceph.statusHang = on && k == FaultStatusHang
	case FaultMgrStale, FaultMgrFresh:
		in.ceph.setMgrStale(on && k == FaultMgrStale)
	case FaultMHCStall, FaultMHCResume:
		in.fleet.setMHCStalled(on && k == FaultMHCStall)
	}
	if in.rec != nil {
		if on {
			in.logf("fault", "%s", k)
		} else {
			in.logf("fault", "%s", k.healer())
		}
	}
}

// randomFault injects one random machine failure (benchmarks and soak runs).
func (in *injector) randomFault() {
	i := in.rng.IntN(len(in.fleet.m))
	kinds := [...]FaultKind{FaultPowerOff, FaultPowerOff, FaultHang, FaultAPICut, FaultClusterCut, FaultNICCut}
	k := kinds[in.rng.IntN(len(kinds))]
	m := &in.fleet.m[i]
	if m.phase == PhaseRunning {
		in.apply(k, i)
		in.events.at(in.expo(in.cfg.RandomFailureFor), faultEvent{kind: evRepair, m: int32(i), gen: m.gen, what: k})
	}
	in.events.at(in.expo(in.cfg.RandomFailureEvery), faultEvent{kind: evRandomFault})
}
