package sim

import "fmt"

// The machines: the hardware under each Node (power, hang, links) and
// machine-api's view of it (the Machine, its phase, its MachineSet). The
// MachineHealthCheck and remediation are in mhc.go, the MachineDisruption
// Budget in mdb.go. A change of a machine's hardware or phase is passed to
// every actor that depends on it (changed).

// FenceKind is what MachineHealthCheck remediation does to a machine.
type FenceKind uint8

// Fence kinds.
const (
	// FenceDelete deletes the Machine; the disk (cloud volume) is kept and the
	// OSDs move with it to the replacement.
	FenceDelete FenceKind = iota
	// FenceDeleteWipe deletes the Machine and wipes its disks.
	FenceDeleteWipe
	// FenceReboot power-cycles the host through its BMC (bare metal).
	FenceReboot
)

var fenceKindNames = []string{"delete", "delete-wipe", "reboot"}

// String returns the scenario-file name of the fence kind.
func (k FenceKind) String() string { return fenceKindNames[k] }

// Phase is a machine's lifecycle phase.
type Phase uint8

// Machine phases.
const (
	PhaseRunning Phase = iota
	PhaseDeleting
	PhaseProvisioning
	PhaseRebooting
	PhaseGone
)

var phaseNames = []string{"Running", "Deleting", "Provisioning", "Rebooting", "Gone"}

// String returns the Machine API name of the phase.
func (p Phase) String() string { return phaseNames[p] }

const (
	linkAPI = iota
	linkPublic
	linkCluster
)

// Machine is a Machine and the host underneath.
type Machine struct {
	// Name is the Machine's name; a replacement gets a suffix (m4.1).
	Name       string
	gen        int32
	hw         int32 // hardware generation: a cloud replacement or power cycle runs on other hardware
	reboots    int   // reboot remediations since it was last Ready
	machineSet bool
	phase      Phase
	powered    bool
	powerLost  bool
	hung       bool
	osdCrashed bool // its OSD daemons crashed (the osd-crash fault); the host runs
	booted     bool
	link       [3]bool
	reportOff  bool // the provider wrongly reports it powered off
	offAt      Time // when it lost power

	labelled bool // the fencing label (the MDB's selector)
	labelObs Time

	unhealthy    bool   // the MachineHealthCheck deems it unhealthy
	refused      bool   // its remediation was refused (logged once)
	remediated   bool   // a remediation (or the taint) is under way or done, and the machine not back yet
	blocked      string // why the MHC's remediation was refused
	kindOverride int8   // the remediation kind an external remediator chose (-1: the cluster's)

	bmh           bmhStep // the step of a bare-metal reboot remediation (remediation.go)
	remStart      Time    // when its current attempt began
	hostUnhealthy bool    // the remediation gave up: the host is not reprovisioned
}

// machineEventKind names a machine event.
type machineEventKind uint8

const (
	evHostBoot           machineEventKind = iota // the host's OS is up
	evMHCCheck                                   // the MHC looks at the machine's Node
	evInstanceTerminated                         // the provider deleted the instance
	evMachineReplaced                            // the MachineSet's replacement exists
	evRebootDone                                 // the power cycle is done: the host powers on
	evBMCPoweredOff                              // the BMC reports the host powered off
	evRemediationTimeout                         // the Node is not back within the remediation's timeout
)

// machineEvent is an event of the machines and machine-api. gen is the
// machine's incarnation (evMHCCheck: the Node's Ready generation it was
// scheduled for).
type machineEvent struct {
	kind machineEventKind
	m    int32
	gen  int32
}

// fleet is the machines and machine-api's controllers (the
// MachineHealthCheck, remediation, the MachineSet, the MDB).
type fleet struct {
	*core
	events  mailbox[machineEvent]
	faults  *injector
	kube    *kube
	ceph    *cephCluster
	pgs     *pgMap
	clients *rbdClients
	op      *operator
	safe    *safeController
	watch   *monitor

	m          []Machine
	nUnhealthy int  // machines the MHC deems unhealthy
	nTargets   int  // machines of the MachineSet (the MHC's targets)
	mhcStall   bool // the MHC controller is stalled
	mdbMax     int  // the MDB's maxUnavailable
	mdbObs     Time // when the value written was observed
}

func (f *fleet) init() {
	c := f.cfg.Cluster
	f.m = make([]Machine, c.Machines)
	for i := range f.m {
		m := &f.m[i]
		m.Name = fmt.Sprintf("m%d", i+1)
		m.machineSet = true
		m.phase = PhaseRunning
		m.powered, m.booted = true, true
		m.link = [3]bool{true, true, true}
		m.kindOverride = -1
	}
	for _, i := range c.Standalone {
		f.m[i].machineSet = false
	}
	for i := range f.m {
		if f.m[i].machineSet {
			f.nTargets++
		}
	}
}

func (f *fleet) handle(e machineEvent) {
	i := int(e.m)
	switch e.kind {
	case evHostBoot:
		m := &f.m[i]
		if e.gen == m.gen && m.phase == PhaseRunning && m.powered && !m.booted {
			f.faults.osRestarted(i)
			m.booted = true
			f.kube.nodeRegistered(i)
			f.changed(i)
		}
	case evMHCCheck:
		f.mhcCheck(i, e.gen)
	case evInstanceTerminated:
		f.instanceTerminated(i, e.gen)
	case evMachineReplaced:
		f.machineReplaced(i, e.gen)
	case evRebootDone:
		f.rebootDone(i, e.gen)
	case evBMCPoweredOff:
		f.bmcPoweredOff(i, e.gen)
	case evRemediationTimeout:
		f.remediationTimeout(i, e.gen)
	}
}

func (f *fleet) at(t Time, k machineEventKind, i int, gen int32) {
	f.events.at(t, machineEvent{kind: k, m: int32(i), gen: gen})
}

// alive reports whether the host's OS runs (kubelet and daemons can run).
func (m *Machine) alive() bool {
	return m.phase == PhaseRunning && m.powered && !m.hung && m.booted
}

// reaches reports whether the host runs and reaches network link l.
func (m *Machine) reaches(l int) bool { return m.alive() && m.link[l] }

// providerOff is the provider's power report: a real power-off shows after
// PowerReportLag; a power-report-off fault makes it report off regardless.
func (f *fleet) providerOff(i int) bool {
	m := &f.m[i]
	return m.reportOff || (!m.powered && m.powerLost && f.now-m.offAt >= f.P.PowerReportLag)
}

// changed propagates a change of machine i's power, links or phase to
// everything that depends on it. It touches only this machine's objects.
func (f *fleet) changed(i int) {
	f.kube.heartbeat(i)
	f.ceph.hostChanged(i)
	f.clients.hostChanged(i)
	f.op.hostChanged(i)
	f.watch.machineChanged(i)
}

func (f *fleet) powerOn(i int) {
	m := &f.m[i]
	if m.powered || m.phase != PhaseRunning {
		return
	}
	m.powered, m.booted = true, false
	f.at(f.now+f.jit(f.P.NodeBootTime), evHostBoot, i, m.gen)
}

// inSet counts the MachineSet's machines that exist (not Gone).
func (f *fleet) inSet() int {
	n := 0
	for i := range f.m {
		if f.m[i].machineSet && f.m[i].phase != PhaseGone {
			n++
		}
	}
	return n
}

// scale is the MachineSet's replicas.
func (f *fleet) scale() int {
	if f.cfg.Cluster.MachineSetScale > 0 {
		return f.cfg.Cluster.MachineSetScale
	}
	return len(f.m) - len(f.cfg.Cluster.Standalone)
}

func baseName(n string) string {
	for j := 0; j < len(n); j++ {
		if n[j] == '.' {
			return n[:j]
		}
	}
	return n
}
