// Package sim is a deterministic discrete-event model of Ceph health, OSD
// failure, PG availability, MachineHealthCheck fencing, MachineDisruptionBudget
// gating, the out-of-service taint and the RBD clients fencing protects. One
// seeded RNG, a virtual clock, no goroutines: the same configuration and seed
// give the same trace.
//
// The model is split by actor, each a type that owns its state, its own
// event type and the queue of those events:
//
//   - the fault injector and the administrator (faults*.go): the fault
//     table, occurrences and their ends, random failures, the end of the run;
//   - the machines and machine-api (machines.go, mhc.go, remediation.go,
//     mdb.go): hardware, Machines, the MachineHealthCheck, remediation, the
//     MachineSet and the MachineDisruptionBudget;
//   - the Kubernetes controllers (nodes.go, pods.go, oos.go): Node
//     heartbeats and Ready, taint-based eviction, the pod GC, the
//     attach-detach controller, the out-of-service taint, the workloads'
//     controllers and the kubelet;
//   - the Ceph cluster: the mons and daemons (ceph.go, detect.go, flags.go,
//     health.go, domains.go, blocklist.go) and the PGs (pgs.go,
//     recovery.go, remap.go);
//   - the RBD clients and their exclusive locks (clients.go);
//   - the policies: the storage operator's pod and controllers (operator.go,
//     policy.go, rook.go), the safe controller (safe.go) and ceph-csi
//     (csi.go);
//   - the monitor: invariants, liveness and metrics (invariants.go,
//     liveness.go, metrics.go).
//
// An actor schedules only its own events; it acts on another actor by
// calling it. The engine (this file) fires the earliest event of any actor.
package sim

import (
	"fmt"
	"math/rand/v2"
)

// core is what every actor shares: the run's configuration, parameters and
// policy, the virtual clock, the one RNG, the event counter and the
// recorder.
type core struct {
	cfg Config
	P   Params
	pol *Policy
	rng *rand.Rand
	now Time
	seq uint64
	rec *Recorder
}

// jit spreads d by the configured jitter using the run's RNG.
func (c *core) jit(d Time) Time {
	if c.P.Jitter == 0 || d == 0 {
		return d
	}
	f := 1 + c.P.Jitter*(2*c.rng.Float64()-1)
	return Time(float64(d) * f)
}

// spread draws d x (1 ± f) uniformly with the run's RNG (f 0: d).
func (c *core) spread(d Time, f float64) Time {
	if f == 0 || d == 0 {
		return d
	}
	return Time(float64(d) * (1 + f*(2*c.rng.Float64()-1)))
}

// expo draws a time exponentially distributed around mean from now.
func (c *core) expo(mean Time) Time {
	return c.now + Time(c.rng.ExpFloat64()*float64(mean)) + 1
}

// logf adds a timeline entry (callers check c.rec != nil first).
func (c *core) logf(cat, format string, a ...any) {
	c.rec.Entries = append(c.rec.Entries, Entry{At: c.now, Cat: cat, Text: fmt.Sprintf(format, a...)})
}

// mailbox is an actor's queue of its own events and its handler.
type mailbox[E any] struct {
	c      *core
	q      queue[E]
	handle func(E)
}

// at schedules event e at time t.
func (b *mailbox[E]) at(t Time, e E) {
	b.c.seq++
	b.q.push(t, b.c.seq, e)
}

func (b *mailbox[E]) head() (Time, uint64, bool) { return b.q.head() }

func (b *mailbox[E]) fire() {
	e := b.q.pop()
	b.c.now = e.at
	b.handle(e.ev)
}

// actor is what the engine sees of an actor's mailbox.
type actor interface {
	head() (Time, uint64, bool)
	fire()
}

// Sim is one simulation run.
type Sim struct {
	core
	// Events counts processed events.
	Events uint64

	faults  injector
	fleet   fleet
	kube    kube
	ceph    cephCluster
	pgs     pgMap
	clients rbdClients
	op      operator
	safe    safeController
	csi     cephCSI
	watch   monitor

	actors  []actor
	stopped bool
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
	if err := validatePlacement(c, cfg.Params.PoolSize); err != nil {
		return nil, err
	}
	if len(c.MonsOn) > 0 && len(c.MonsOn) != c.Mons {
		return nil, fmt.Errorf("monsOn lists %d machines for %d mons", len(c.MonsOn), c.Mons)
	}
	if cfg.Policy == nil {
		return nil, fmt.Errorf("no policy")
	}
	s := &Sim{core: core{cfg: cfg, P: cfg.Params, pol: cfg.Policy, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}}
	if cfg.Record {
		s.rec = &Recorder{}
	}
	s.wire()
	s.fleet.init()
	s.faults.init(c.Machines)
	s.kube.init(c.Machines)
	s.watch.init()
	s.ceph.init()
	s.pgs.init()
	s.clients.init()
	s.csi.init(c.Machines)
	s.safe.g = make([]guard, c.Machines)
	s.op.init()
	s.faults.schedule()
	s.op.startPolling()
	s.faults.scheduleRandom()
	s.watch.metrics.init(&s.watch)
	if s.rec != nil {
		s.rec.start(s)
	}
	return s, nil
}

// wire gives every actor the shared core, its mailbox and the actors it
// calls.
func (s *Sim) wire() {
	c := &s.core
	s.faults = injector{core: c, fleet: &s.fleet, kube: &s.kube, ceph: &s.ceph, op: &s.op, watch: &s.watch}
	s.faults.events = mailbox[faultEvent]{c: c, handle: s.faults.handle}
	s.fleet = fleet{core: c, faults: &s.faults, kube: &s.kube, ceph: &s.ceph, pgs: &s.pgs, clients: &s.clients, op: &s.op, safe: &s.safe, watch: &s.watch}
	s.fleet.events = mailbox[machineEvent]{c: c, handle: s.fleet.handle}
	s.kube = kube{core: c, fleet: &s.fleet, clients: &s.clients, ceph: &s.ceph, op: &s.op, csi: &s.csi, faults: &s.faults, watch: &s.watch}
	s.kube.events = mailbox[kubeEvent]{c: c, handle: s.kube.handle}
	s.ceph = cephCluster{core: c, fleet: &s.fleet, kube: &s.kube, pgs: &s.pgs, clients: &s.clients, watch: &s.watch}
	s.ceph.events = mailbox[cephEvent]{c: c, handle: s.ceph.handle}
	s.pgs = pgMap{core: c, ceph: &s.ceph, fleet: &s.fleet, watch: &s.watch}
	s.pgs.events = mailbox[pgEvent]{c: c, handle: s.pgs.handle}
	s.clients = rbdClients{core: c, fleet: &s.fleet, kube: &s.kube, ceph: &s.ceph, watch: &s.watch}
	s.clients.events = mailbox[clientEvent]{c: c, handle: s.clients.handle}
	s.op = operator{core: c, fleet: &s.fleet, kube: &s.kube, ceph: &s.ceph, pgs: &s.pgs, clients: &s.clients, safe: &s.safe, watch: &s.watch}
	s.op.events = mailbox[operatorEvent]{c: c, handle: s.op.handle}
	s.safe = safeController{core: c, fleet: &s.fleet, kube: &s.kube, ceph: &s.ceph, pgs: &s.pgs, clients: &s.clients, op: &s.op, watch: &s.watch}
	s.safe.events = mailbox[safeEvent]{c: c, handle: s.safe.handle}
	s.csi = cephCSI{core: c, fleet: &s.fleet, kube: &s.kube, ceph: &s.ceph, clients: &s.clients}
	s.csi.events = mailbox[csiEvent]{c: c, handle: s.csi.handle}
	s.watch = monitor{core: c, fleet: &s.fleet, kube: &s.kube, ceph: &s.ceph, pgs: &s.pgs, clients: &s.clients, op: &s.op, safe: &s.safe}
	s.watch.events = mailbox[livenessEvent]{c: c, handle: s.watch.handle}
	s.actors = []actor{&s.faults.events, &s.fleet.events, &s.kube.events, &s.ceph.events, &s.pgs.events,
		&s.clients.events, &s.op.events, &s.safe.events, &s.csi.events, &s.watch.events}
}

// Run processes events until the end of the run or, unless KeepGoing, the
// first step that breaks an invariant. It returns the result.
func (s *Sim) Run() *Result {
	for !s.stopped && s.step() {
	}
	return s.result()
}

// step fires the earliest event of any actor and checks the invariants
// after it; it returns false when no event is left.
func (s *Sim) step() bool {
	var next actor
	var at Time
	var seq uint64
	for _, a := range s.actors {
		if t, q, ok := a.head(); ok && (next == nil || t < at || (t == at && q < seq)) {
			next, at, seq = a, t, q
		}
	}
	if next == nil {
		return false
	}
	s.Events++
	next.fire()
	s.watch.afterStep()
	if s.rec != nil {
		s.rec.sample(s)
	}
	if s.watch.stop || s.faults.ended {
		s.stopped = true
	}
	return true
}

// runUntil fires every event up to time t (tests look at the state then).
func (s *Sim) runUntil(t Time) {
	for !s.stopped {
		at, ok := s.nextAt()
		if !ok || at > t {
			return
		}
		s.step()
	}
}

// nextAt is the time of the earliest pending event.
func (s *Sim) nextAt() (Time, bool) {
	var at Time
	found := false
	for _, a := range s.actors {
		if t, _, ok := a.head(); ok && (!found || t < at) {
			at, found = t, true
		}
	}
	return at, found
}
