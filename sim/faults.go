package sim

// FaultKind is an injected fault or its repair.
type FaultKind uint8

// Fault kinds. faultTable says, for each, its scenario-file name, its repair
// and whether it breaks a machine or stalls a controller.
const (
	FaultPowerOff FaultKind = iota
	FaultPowerOn
	FaultHang
	FaultUnhang
	FaultAPICut
	FaultAPIHeal
	FaultPublicCut
	FaultPublicHeal
	FaultClusterCut
	FaultClusterHeal
	FaultNICCut
	FaultNICHeal
	FaultOperatorStall
	FaultOperatorResume
	FaultMHCStall
	FaultMHCResume
	FaultPowerReportOff
	FaultPowerReportFixed
	FaultSetNoOut
	FaultUnsetNoOut
	FaultSetNoRebalance
	FaultUnsetNoRebalance
	FaultRemoveOOSTaint
	FaultStatusHang
	FaultStatusAnswers
	FaultMgrStale
	FaultMgrFresh
	FaultOSDCrash
	FaultOSDStart
	numFaultKinds
)

// faultDesc describes one fault kind.
type faultDesc struct {
	// name is the scenario-file name.
	name string
	// heal is the repair applied when a fault with `for:` ends (a repair is
	// its own heal).
	heal FaultKind
	// breaks marks a failure: its time is the fault time invariant 2
	// compares against.
	breaks bool
	// controller marks a fault of a controller (no machine).
	controller bool
	// hw marks a fault of the hardware (power, a link, the provider's
	// report of it): on bare metal it survives a reboot or reprovisioning
	// of the host, and its repair applies to whatever incarnation runs
	// there; on cloud a replacement is another instance and leaves it
	// behind. A hang is of the OS: a reboot or a new incarnation ends it.
	hw bool
}

// faultTable is the one declaration of the fault kinds; everything else
// (parsing, repair, invariant 2, the docs test) reads it.
var faultTable = [numFaultKinds]faultDesc{
	FaultPowerOff:       {name: "power-off", heal: FaultPowerOn, breaks: true, hw: true},
	FaultPowerOn:        {name: "power-on", heal: FaultPowerOn, hw: true},
	FaultHang:           {name: "hang", heal: FaultUnhang, breaks: true},
	FaultUnhang:         {name: "unhang", heal: FaultUnhang},
	FaultAPICut:         {name: "api-cut", heal: FaultAPIHeal, breaks: true, hw: true},
	FaultAPIHeal:        {name: "api-heal", heal: FaultAPIHeal, hw: true},
	FaultPublicCut:      {name: "public-cut", heal: FaultPublicHeal, breaks: true, hw: true},
	FaultPublicHeal:     {name: "public-heal", heal: FaultPublicHeal, hw: true},
	FaultClusterCut:     {name: "cluster-cut", heal: FaultClusterHeal, breaks: true, hw: true},
	FaultClusterHeal:    {name: "cluster-heal", heal: FaultClusterHeal, hw: true},
	FaultNICCut:         {name: "nic-cut", heal: FaultNICHeal, breaks: true, hw: true},
	FaultNICHeal:        {name: "nic-heal", heal: FaultNICHeal, hw: true},
	FaultOperatorStall:  {name: "operator-stall", heal: FaultOperatorResume, controller: true},
	FaultOperatorResume: {name: "operator-resume", heal: FaultOperatorResume, controller: true},
	FaultMHCStall:       {name: "mhc-stall", heal: FaultMHCResume, controller: true},
	FaultMHCResume:      {name: "mhc-resume", heal: FaultMHCResume, controller: true},
	// the provider's API reports the instance powered off while it runs (an
	// imperfect power oracle); the machine itself is unaffected
	FaultPowerReportOff:   {name: "power-report-off", heal: FaultPowerReportFixed, hw: true},
	FaultPowerReportFixed: {name: "power-report-fixed", heal: FaultPowerReportFixed, hw: true},
	// an administrator sets or clears an OSD map flag (flags.go)
	FaultSetNoOut:         {name: "set-noout", heal: FaultUnsetNoOut, controller: true},
	FaultUnsetNoOut:       {name: "unset-noout", heal: FaultUnsetNoOut, controller: true},
	FaultSetNoRebalance:   {name: "set-norebalance", heal: FaultUnsetNoRebalance, controller: true},
	FaultUnsetNoRebalance: {name: "unset-norebalance", heal: FaultUnsetNoRebalance, controller: true},
	// an administrator removes the node.kubernetes.io/out-of-service taint
	// (oos.go); Kubernetes never does
	FaultRemoveOOSTaint: {name: "remove-oos-taint", heal: FaultRemoveOOSTaint},
	// the operators' ceph commands (ceph status, rbd status) hang while the
	// cluster itself is fine (health.go, observed)
	FaultStatusHang:    {name: "ceph-status-hang", heal: FaultStatusAnswers, controller: true},
	FaultStatusAnswers: {name: "ceph-status-answers", heal: FaultStatusAnswers, controller: true},
	// the active mgr stops updating PG stats without failing over: the PG
	// health checks `ceph status` reports stay as they were (health.go)
	FaultMgrStale: {name: "mgr-stale", heal: FaultMgrFresh, controller: true},
	FaultMgrFresh: {name: "mgr-fresh", heal: FaultMgrFresh, controller: true},
	// the machine's OSD daemons crash while the host runs: their peers'
	// connections are refused, so the failure is seen within one
	// heartbeat (osd_fast_fail_on_connection_refused); osd-start restarts
	// them (a container restart)
	FaultOSDCrash: {name: "osd-crash", heal: FaultOSDStart, breaks: true},
	FaultOSDStart: {name: "osd-start", heal: FaultOSDStart},
}

// FaultNames lists the scenario-file names of the fault kinds, in table order.
func FaultNames() []string {
	n := make([]string, numFaultKinds)
	for i := range faultTable {
		n[i] = faultTable[i].name
	}
	return n
}

// lookupFault returns the fault kind with the scenario-file name n.
func lookupFault(n string) (FaultKind, bool) {
	for i := range faultTable {
		if faultTable[i].name == n {
			return FaultKind(i), true
		}
	}
	return 0, false
}

// String returns the scenario-file name of the fault.
func (k FaultKind) String() string { return faultTable[k].name }

// healer is the repair of a fault (itself for repairs).
func (k FaultKind) healer() FaultKind { return faultTable[k].heal }

// breaks reports whether the fault starts a machine failure.
func (k FaultKind) breaks() bool { return faultTable[k].breaks }

// hw reports whether the fault is of the hardware (see faultDesc.hw).
func (k FaultKind) hw() bool { return faultTable[k].hw }

// controller reports whether the fault concerns a controller, not a machine.
func (k FaultKind) controller() bool { return faultTable[k].controller }
