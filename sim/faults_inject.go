package sim

import "fmt"

// Fault injection and repair: applies the fault table (faults.go) to
// machines and controllers. Every injected fault is an occurrence with its
// own end: a `for:` (or a random failure's) repair ends that occurrence
// only, a scripted repair (power-on, nic-heal, operator-resume, ...) ends
// the open occurrences of its own kind on its target, and a machine's or
// controller's state is what its open occurrences make it: a NIC heal
// leaves a cluster cut alone, a short stall's resume leaves a long stall
// stalled. Occurrences also end with what they belong to: a hardware
// fault with the hardware (a cloud replacement or stop/start runs on other
// hardware; bare metal keeps its host), a hang or an OSD crash with the
// OS run it happened in (a reboot, a power cycle, a new incarnation). The
// injector also stands for the people outside the model: the
// administrator who removes an out-of-service taint, and the end of the
// run.

// faultEventKind names an event of the injector.
type faultEventKind uint8

const (
	evInject       faultEventKind = iota // a scheduled fault (or one of its repeats) happens
	evRepair                             // an occurrence's end (its `for:`, a random failure's)
	evRandomFault                        // a random machine failure (benchmarks, soak runs)
	evTaintRemoval                       // an administrator removes an out-of-service taint
	evEnd                                // the end of the run
)

// faultEvent is an event of the injector. evInject: fault f of the
// schedule, its repeat rep, the hardware generation hw its series started
// on. evRepair: occurrence occ. evTaintRemoval: machine m, its Node's
// Ready generation gen.
type faultEvent struct {
	kind faultEventKind
	f    int32
	rep  int32
	hw   int32
	occ  int32
	m    int32
	gen  int32
}

// occurrence is one injected fault, open until its own end.
type occurrence struct {
	kind FaultKind
	m    int32 // the machine (-1: a controller)
	open bool
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

	occ   []occurrence
	open  [][]int32          // per machine: its open occurrences
	ctl   [numFaultKinds]int // open controller occurrences per kind
	ended bool
}

func (in *injector) init(machines int) { in.open = make([][]int32, machines) }

func (in *injector) handle(e faultEvent) {
	switch e.kind {
	case evInject:
		in.inject(int(e.f), int(e.rep), e.hw)
	case evRepair:
		in.end(int(e.occ))
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

// inject applies repeat k of scheduled fault fi; hw is the hardware
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
	if in.rec != nil && f.Machine >= 0 {
		if f.For > 0 {
			in.logf("fault", "%s %s for %s", f.Kind, in.fleet.m[f.Machine].Name, f.For.Dur())
		} else {
			in.logf("fault", "%s %s", f.Kind, in.fleet.m[f.Machine].Name)
		}
	}
	oc := in.start(f.Kind, f.Machine)
	if f.For > 0 && oc >= 0 {
		in.events.at(in.now+f.For, faultEvent{kind: evRepair, occ: int32(oc)})
	}
}

// start begins an occurrence of fault k on machine i (-1: a controller)
// and returns it (-1: none; a repair or an administrator's action, which
// takes effect at once).
func (in *injector) start(k FaultKind, i int) int {
	if k == FaultRemoveOOSTaint {
		if in.fleet.m[i].phase != PhaseGone {
			in.kube.untaint(i)
			in.fleet.changed(i)
		}
		return -1
	}
	if k.healer() == k {
		in.repairAll(k, i)
		return -1
	}
	oc := len(in.occ)
	if i < 0 {
		in.occ = append(in.occ, occurrence{kind: k, m: -1, open: true})
		in.ctl[k]++
		if in.ctl[k] == 1 {
			in.controllerFault(k, true)
		}
		if in.rec != nil {
			in.logf("fault", "%s", k)
		}
		return oc
	}
	if in.fleet.m[i].phase == PhaseGone {
		return -1
	}
	in.occ = append(in.occ, occurrence{kind: k, m: int32(i), open: true})
	in.open[i] = append(in.open[i], int32(oc))
	if k.breaks() {
		in.watch.noteFault(i)
	}
	in.machineFaults(i)
	return oc
}

// end ends occurrence oc if it is still open.
func (in *injector) end(oc int) {
	o := &in.occ[oc]
	if !o.open {
		return
	}
	o.open = false
	h := o.kind.healer()
	if o.m < 0 {
		in.ctl[o.kind]--
		if in.ctl[o.kind] == 0 {
			in.controllerFault(o.kind, false)
		}
		if in.rec != nil {
			in.logf("fault", "%s%s", h, stillOpen(o.kind, in.ctl[o.kind]))
		}
		return
	}
	i := int(o.m)
	in.open[i] = dropPG(in.open[i], int32(oc))
	if in.rec != nil {
		n := 0
		for _, j := range in.open[i] {
			if in.occ[j].kind == o.kind {
				n++
			}
		}
		in.logf("fault", "%s %s%s", h, in.fleet.m[i].Name, stillOpen(o.kind, n))
	}
	in.machineFaults(i)
}

// stillOpen notes the occurrences of fault k that an occurrence's end
// leaves open ("": none).
func stillOpen(k FaultKind, n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (ends one %s; %d more still open)", k, n)
}

// repairAll is scripted repair r on machine i (-1: a controller): every
// open occurrence of the fault it repairs ends.
func (in *injector) repairAll(r FaultKind, i int) {
	if i < 0 {
		for k := FaultKind(0); k < numFaultKinds; k++ {
			if k.healer() == r && k != r && in.ctl[k] > 0 {
				in.ctl[k] = 0
				in.controllerFault(k, false)
			}
		}
		for j := range in.occ {
			if o := &in.occ[j]; o.open && o.m < 0 && o.kind.healer() == r {
				o.open = false
			}
		}
		if in.rec != nil {
			in.logf("fault", "%s", r)
		}
		return
	}
	if in.fleet.m[i].phase == PhaseGone {
		return
	}
	for _, oc := range append([]int32(nil), in.open[i]...) {
		if o := &in.occ[oc]; o.kind.healer() == r {
			o.open = false
			in.open[i] = dropPG(in.open[i], oc)
		}
	}
	in.machineFaults(i)
}

// machineFaults sets machine i's hardware state from its open occurrences
// and passes the change on.
func (in *injector) machineFaults(i int) {
	if in.derive(i) {
		in.fleet.powerRestored(i)
	}
	in.fleet.changed(i)
}

// derive sets machine i's power, hang, crash, power report and links from
// its open occurrences; it reports whether its power just came back.
func (in *injector) derive(i int) (restored bool) {
	m := &in.fleet.m[i]
	var power, report, hang, crash int
	var cut [3]int
	for _, oc := range in.open[i] {
		switch in.occ[oc].kind {
		case FaultPowerOff:
			power++
		case FaultPowerReportOff:
			report++
		case FaultHang:
			hang++
		case FaultOSDCrash:
			crash++
		case FaultAPICut:
			cut[linkAPI]++
		case FaultPublicCut:
			cut[linkPublic]++
		case FaultClusterCut:
			cut[linkCluster]++
		case FaultNICCut:
			cut[linkAPI]++
			cut[linkPublic]++
			cut[linkCluster]++
		}
	}
	m.hung, m.osdCrashed, m.reportOff = hang > 0, crash > 0, report > 0
	for l := range cut {
		m.link[l] = cut[l] == 0
	}
	switch lost := power > 0; {
	case lost && !m.powerLost:
		m.powered, m.powerLost, m.booted = false, true, false
		m.offAt = in.now
	case !lost && m.powerLost:
		m.powerLost = false
		return true
	}
	return false
}

// newHardware: machine i runs on other hardware (a cloud replacement or
// stop/start); the old hardware's faults stay behind.
func (in *injector) newHardware(i int) {
	in.endWhere(i, func(o *occurrence) bool { return o.kind.hw() })
	in.derive(i)
}

// osRestarted: machine i's OS starts afresh (a reboot, a power cycle, a
// new incarnation): a hang or an OSD crash of the old run is over.
func (in *injector) osRestarted(i int) {
	in.endWhere(i, func(o *occurrence) bool { return o.kind == FaultHang || o.kind == FaultOSDCrash })
	in.derive(i)
}

func (in *injector) endWhere(i int, match func(*occurrence) bool) {
	k := 0
	for _, oc := range in.open[i] {
		if o := &in.occ[oc]; match(o) {
			o.open = false
		} else {
			in.open[i][k] = oc
			k++
		}
	}
	in.open[i] = in.open[i][:k]
}

func (in *injector) controllerFault(k FaultKind, on bool) {
	switch k {
	case FaultOperatorStall:
		in.op.setStalled(on)
	case FaultSetNoOut:
		in.ceph.setFlag(flagNoOut, on)
	case FaultSetNoRebalance:
		in.ceph.setFlag(flagNoRebalance, on)
	case FaultStatusHang:
		in.ceph.statusHang = on
	case FaultMgrStale:
		in.ceph.setMgrStale(on)
	case FaultMHCStall:
		in.fleet.setMHCStalled(on)
	}
}

// randomFault injects one random machine failure (benchmarks and soak
// runs), an occurrence that ends after RandomFailureFor on average.
func (in *injector) randomFault() {
	i := in.rng.IntN(len(in.fleet.m))
	kinds := [...]FaultKind{FaultPowerOff, FaultPowerOff, FaultHang, FaultAPICut, FaultClusterCut, FaultNICCut}
	k := kinds[in.rng.IntN(len(kinds))]
	if in.fleet.m[i].phase == PhaseRunning {
		oc := in.start(k, i)
		in.events.at(in.expo(in.cfg.RandomFailureFor), faultEvent{kind: evRepair, occ: int32(oc)})
	}
	in.events.at(in.expo(in.cfg.RandomFailureEvery), faultEvent{kind: evRandomFault})
}
