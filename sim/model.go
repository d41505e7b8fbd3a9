// Package sim is a deterministic discrete-event model of Ceph health, OSD
// failure, PG availability, MachineHealthCheck fencing, MachineDisruptionBudget
// gating, the out-of-service taint and the RBD clients fencing protects. One
// seeded RNG, a virtual clock, no goroutines: the same configuration and seed
// give the same trace.
//
// Ceph's rules live in ceph.go (OSD state, down/out), detect.go (failure
// detection), health.go (quorum, mon stores, health checks as they are and
// as controllers observe them), pgs.go and recovery.go (peering, blocked
// I/O, recovery, reservations), remap.go (returning OSDs), domains.go (the
// CRUSH hierarchy, failure domains, the subtree limit) and flags.go
// (noout/norebalance, flapping, laggy grace). Kubernetes' in pods.go
// (eviction, replacement pods, the attach-detach controller), mhc.go (the
// MachineHealthCheck, remediation, the MachineSet) and mdb.go; the RBD
// clients, exclusive lock and blocklist in clients.go; the policies in
// policy.go, safe.go and oos.go (the out-of-service taint, Rook's and
// ceph-csi's fences); the operator's pod in operator.go; the fault table in
// faults.go; the invariants in invariants.go and liveness.go; the metrics
// in metrics.go and the comparison in compare*.go and frontier.go. This file
// holds the machines, the Node and the event loop.
package sim

import (
	"fmt"
	"math/rand/v2"
)

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

// Machine is a Machine, its Node and the host underneath.
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

	hasNode  bool
	hbOK     bool
	hbGen    int32
	ready    bool
	readyLT  Time
	readyGen int32
	everUp   bool

	labelled   bool
	labelObs   Time
	unhealthy  bool
	refused    bool
	remediated bool

	storageFenced bool
	granted       bool
	grantObs      Time
	kindOverride  int8

	fenced  bool
	faultAt Time
	osds    []int32
	upOSDs  int
	healthy int
	mon     int
	downEp  episode // invariant 6 (liveness.go)
	blocked string
	safeWhy string

	clients      []int32    // client processes on this machine (clients.go)
	block        blockEntry // blocklist entry of its client address
	tainted      bool       // node.kubernetes.io/out-of-service
	clientFenced bool       // safe blocklisted its client address before its pods' eviction
	reportOff    bool       // the provider wrongly reports it powered off
	offAt        Time       // when it lost power
	oosFenced    []int32    // machines whose addresses Rook fenced for this taint
	oosDone      bool       // Rook reconciled the taint
	csiFenceAt   Time       // when ceph-csi fenced its address for the taint (-1: not fenced)
}

// Sim is one simulation run.
type Sim struct {
	cfg Config
	P   Params
	pol *Policy
	rng *rand.Rand
	now Time
	q   queue
	seq uint64
	// Events counts processed events.
	Events uint64

	machines []Machine
	osds     []OSD
	pgs      []PG
	ceph     cephState
	topo     topology
	cl       clientState

	mdbMax     int
	mdbObs     Time
	nUnhealthy int
	nTargets   int
	nFenced    int

	opHost    int
	opUp      bool
	opStarted bool
	opStalled bool
	opEpoch   int32
	mhcStall  bool
	// statusHang: the operators' ceph commands hang; mgrStale: the PG
	// stats `ceph status` reports are frozen at pgSnap (health.go)
	statusHang bool
	mgrStale   bool
	pgSnap     pgStats

	inv     invState
	metrics Metrics
	rec     *Recorder
	stopped bool
}

func (s *Sim) schedule(at Time, k evKind, a, b int32, c int64) {
	s.seq++
	s.q.push(event{at: at, seq: s.seq, kind: k, a: a, b: b, c: c})
}

// jit spreads d by the configured jitter using the run's RNG.
func (s *Sim) jit(d Time) Time {
	if s.P.Jitter == 0 || d == 0 {
		return d
	}
	f := 1 + s.P.Jitter*(2*s.rng.Float64()-1)
	return Time(float64(d) * f)
}

// New builds a simulation from cfg.
func New(cfg Config) (*Sim, error) {
	if err := cfg.Params.Validate(); err != nil {
		return nil, err
	}
	c := cfg.Cluster
	if c.Machines < 1 || c.OSDsPerMachine < 0 || c.PGs < 0 || c.Mons < 1 || c.Mons > c.Machines {
		return nil, fmt.Errorf("bad cluster: %d machines, %d OSDs each, %d PGs, %d mons", c.Machines, c.OSDsPerMachine, c.PGs, c.Mons)
	}
	if err := validateDomains(c, cfg.Params.PoolSize); err != nil {
		return nil, err
	}
	if len(c.MonsOn) > 0 && len(c.MonsOn) != c.Mons {
		return nil, fmt.Errorf("monsOn lists %d machines for %d mons", len(c.MonsOn), c.Mons)
	}
	if cfg.Policy == nil {
		return nil, fmt.Errorf("no policy")
	}
	s := &Sim{cfg: cfg, P: cfg.Params, pol: cfg.Policy, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	if cfg.Record {
		s.rec = &Recorder{}
	}
	s.machines = make([]Machine, c.Machines)
	for i := range s.machines {
		m := &s.machines[i]
		m.Name = fmt.Sprintf("m%d", i+1)
		m.machineSet = true
		m.phase = PhaseRunning
		m.powered, m.booted, m.hasNode, m.hbOK, m.ready, m.everUp = true, true, true, true, true, true
		m.link = [3]bool{true, true, true}
		m.mon = -1
		m.kindOverride = -1
		m.faultAt = -1
		m.csiFenceAt = -1
	}
	for _, i := range c.Standalone {
		s.machines[i].machineSet = false
	}
	for i := range s.machines {
		if s.machines[i].machineSet {
			s.nTargets++
		}
	}
	s.initLiveness()
	s.initTopology()
	s.initCeph()
	s.initClients()
	for i := range s.machines {
		m := &s.machines[i]
		if s.pol.initialLabel(s, i) {
			s.setLabel(i, true, 0)
		}
		_ = m
	}
	s.mdbMax = s.pol.initialMDB()
	s.mdbObs = 0
	s.opHost = c.OperatorOn
	s.opUp, s.opStarted = true, true
	for i, f := range cfg.Faults {
		s.schedule(f.At, evFault, int32(i), 0, 0)
	}
	if s.pol.Gate != gateNone && s.pol.Gate != gateClosed {
		s.schedule(0, evMDBPoll, 0, 0, 0)
	}
	if cfg.RandomFailureEvery > 0 {
		s.schedule(s.expo(cfg.RandomFailureEvery), evRandomFault, 0, 0, 0)
	}
	s.schedule(cfg.Duration, evEnd, 0, 0, 0)
	s.metrics.init(s)
	if s.rec != nil {
		s.rec.start(s)
	}
	return s, nil
}

func (s *Sim) expo(mean Time) Time {
	return s.now + Time(s.rng.ExpFloat64()*float64(mean)) + 1
}

// Run processes events until the end of the run or, unless KeepGoing, the
// first step that breaks an invariant. It returns the result.
func (s *Sim) Run() *Result {
	for len(s.q.h) > 0 && !s.stopped {
		ev := s.q.pop()
		s.now = ev.at
		s.Events++
		s.dispatch(ev)
		s.afterStep()
		if s.rec != nil {
			s.rec.sample(s)
		}
	}
	return s.result()
}

func (s *Sim) dispatch(ev event) {
	switch ev.kind {
	case evFault:
		s.injectFault(int(ev.a), int(ev.b), int32(ev.c))
	case evHeal:
		s.heal(FaultKind(ev.b), int(ev.a), int32(ev.c))
	case evNodeNotReady:
		m := &s.machines[ev.a]
		if ev.b == m.hbGen && !m.hbOK && m.ready {
			s.setReady(int(ev.a), false)
		}
	case evNodeBoot:
		m := &s.machines[ev.a]
		if ev.b == m.gen && m.phase == PhaseRunning && m.powered && !m.booted {
			m.booted, m.hasNode = true, true
			s.machineChanged(int(ev.a))
		}
	case evOSDBoot:
		s.osdBoot(int(ev.a), ev.b)
	case evOSDMarkDown:
		s.osdGraceExpired(int(ev.a), ev.b, ev.c)
	case evOSDReportTimeout:
		s.osdReportTimeout(int(ev.a), int32(ev.c))
	case evOSDOut:
		s.osdDownOut(int(ev.a), ev.b)
	case evPGPeered:
		p := &s.pgs[ev.a]
		if uint32(ev.c) == p.gen && p.peering {
			p.peering = false
			s.pgSettle(int(ev.a))
		}
	case evPGRecovered:
		s.pgRecovered(int(ev.a), uint32(ev.c))
	case evPGStuck:
		s.pgStuck(int(ev.a), uint32(ev.c))
	case evMHCCheck:
		s.mhcCheck(int(ev.a), ev.b)
	case evLabelApply:
		s.labelApply(int(ev.a), ev.b, ev.c)
	case evMDBPoll:
		s.mdbPoll()
	case evMDBApply:
		if s.opLive(int32(ev.a)) && Time(ev.c) > s.mdbObs {
			s.setMDB(int(ev.b), Time(ev.c))
		}
	case evSafeCheck:
		s.safeCheck(int(ev.a), ev.b)
	case evSafeRevoke:
		if s.opLive(ev.b) {
			s.safeRevoke(int(ev.a))
		}
	case evMachineTerminated:
		s.machineTerminated(int(ev.a), ev.b)
	case evMachineReplaced:
		s.machineReplaced(int(ev.a), ev.b)
	case evRebootDone:
		s.rebootDone(int(ev.a), ev.b)
	case evOpEvict:
		s.opEvict(int(ev.a), ev.b, int32(ev.c))
	case evOpStart:
		if int32(ev.c) == s.opEpoch {
			s.opStarted = true
			s.opHost = int(ev.a)
			s.opRecompute()
		}
	case evLiveness:
		s.livenessDue(int(ev.a), ev.b, int32(ev.c))
	case evLivenessEnd:
		s.livenessEnd(int(ev.a), ev.b, int32(ev.c))
	case evRandomFault:
		s.randomFault()
	case evClientStart:
		s.clientStart(int(ev.a), ev.b, int(ev.c))
	case evStaleKill:
		s.staleKill(int(ev.a), ev.b)
	case evBlockExpire:
		s.blockExpire(int(ev.a), Time(ev.c))
	case evOOSFence:
		s.oosFence(int(ev.a), ev.b)
	case evOOSUnfence:
		s.oosUnfence(int(ev.a), ev.b)
	case evPGBackfilled:
		s.backfilledBack(int(ev.a), uint32(ev.c))
	case evOSDReassert:
		s.osdReassert(int(ev.a), ev.b)
	case evOSDRestart:
		s.osdRestart(int(ev.a), ev.b)
	case evMonSynced:
		s.monSynced(int(ev.a), ev.b)
	case evPodEvict:
		s.podEvict(int(ev.a), ev.b)
	case evCSIUnpublish:
		s.csiUnpublish(int(ev.a), ev.b)
	case evCSIUnfence:
		s.csiUnfence(int(ev.a), ev.b)
	case evOOSRemoval:
		if m := &s.machines[ev.a]; m.readyGen == ev.b && m.ready {
			s.oosUntaint(int(ev.a))
		}
	case evLockBreakExpire:
		s.lockBreakExpire(int(ev.a), Time(ev.c))
	case evSafeClientFence:
		s.safeClientFence(int(ev.a), ev.b, ev.c)
	case evEvictedDeleted:
		s.evictedDeleted(int(ev.a), ev.b)
	case evEnd:
		s.stopped = true
	}
}

// providerOff is the provider's power report: a real power-off shows after
// PowerReportLag; a power-report-off fault makes it report off regardless.
func (s *Sim) providerOff(i int) bool {
	m := &s.machines[i]
	return m.reportOff || (!m.powered && m.powerLost && s.now-m.offAt >= s.P.PowerReportLag)
}

// peersSeeDead reports whether every OSD of machine i has stopped
// heartbeating to its peers (readable from the surviving OSDs without mon
// quorum).
func (s *Sim) peersSeeDead(i int) bool {
	for _, o := range s.machines[i].osds {
		if s.osds[o].canUp {
			return false
		}
	}
	return true
}

// alive reports whether the host's OS runs (kubelet and daemons can run).
func (m *Machine) alive() bool {
	return m.phase == PhaseRunning && m.powered && !m.hung && m.booted
}

// machineChanged propagates a change of a machine's power, links or phase to
// everything that depends on it. It touches only this machine's objects.
func (s *Sim) machineChanged(i int) {
	m := &s.machines[i]
	hb := m.alive() && m.link[linkAPI] && m.hasNode
	if hb != m.hbOK {
		m.hbOK = hb
		m.hbGen++
		if hb {
			if !m.ready {
				s.setReady(i, true)
			}
		} else if m.ready {
			s.schedule(s.now+s.P.NodeMonitorGracePeriod, evNodeNotReady, int32(i), m.hbGen, 0)
		}
	}
	for _, o := range m.osds {
		s.osdReeval(int(o))
	}
	if m.mon >= 0 {
		s.monsChanged()
	}
	if len(m.clients) > 0 {
		s.clientsOn(i)
	}
	if s.opHost == i {
		s.opRecompute()
	}
	s.pol.onMachineChange(s, i)
	s.livenessUpdate(i)
	s.backCheck(i)
}

// setReady moves the Node's Ready condition and its lastTransitionTime.
func (s *Sim) setReady(i int, v bool) {
	m := &s.machines[i]
	if m.ready == v {
		return
	}
	m.ready = v
	m.readyLT = s.now
	m.readyGen++
	if s.rec != nil {
		st := "Ready"
		if !v {
			st = "NotReady"
		}
		s.logf("node", "%s %s", m.Name, st)
		s.rec.nodeState(s, i)
	}
	if v {
		m.everUp = true
		m.reboots = 0
		m.refused = false
		s.oosReady(i)
		s.kubeletBack(i)
		s.restartLocal(i)
		if m.unhealthy {
			m.unhealthy = false
			s.nUnhealthy--
		}
	} else {
		if m.machineSet && m.phase == PhaseRunning {
			s.schedule(s.now+s.P.MHCUnhealthyTimeout+s.P.MHCLag, evMHCCheck, int32(i), m.readyGen, 0)
		}
		if s.opHost == i && !s.opUp {
			s.schedule(s.now+s.P.PodEvictionTimeout, evOpEvict, int32(i), m.readyGen, 0)
		}
		if len(s.cl.workloads) > 0 {
			s.schedule(s.now+s.P.PodEvictionTimeout, evPodEvict, int32(i), m.readyGen, 0)
		}
	}
	if s.opHost == i {
		s.opRecompute()
	}
	s.pol.onReadyChange(s, i)
	s.livenessUpdate(i)
	s.backCheck(i)
}
