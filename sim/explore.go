package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// RunConfig runs one configuration and returns its result.
func RunConfig(cfg Config) (*Result, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return s.Run(), nil
}

// Minimize delta-debugs cfg.Faults (ddmin) to a 1-minimal sub-schedule that
// still breaks invariant inv, re-running deterministically with the same
// seed, and returns it.
func Minimize(cfg Config, inv int) []Fault {
	fails := func(fs []Fault) bool {
		c := cfg
		c.Faults, c.Record, c.KeepGoing = fs, false, false
		r, err := RunConfig(c)
		if err != nil {
			return false
		}
		for _, v := range r.Violations {
			if v.Inv == inv {
				return true
			}
		}
		return false
	}
	cur := append([]Fault(nil), cfg.Faults...)
	if !fails(cur) {
		return cur
	}
	n := 2
	for len(cur) >= 2 {
		chunk := (len(cur) + n - 1) / n
		reduced := false
		for start := 0; start < len(cur); start += chunk {
			end := min(start+chunk, len(cur))
			subset := cur[start:end:end]
			if len(subset) < len(cur) && fails(subset) {
				cur, n, reduced = append([]Fault(nil), subset...), 2, true
				break
			}
			comp := append(append([]Fault(nil), cur[:start]...), cur[end:]...)
			if len(comp) > 0 && fails(comp) {
				cur, n, reduced = comp, max(n-1, 2), true
				break
			}
		}
		if !reduced {
			if n >= len(cur) {
				break
			}
			n = min(2*n, len(cur))
		}
	}
	return cur
}

// RandomScenario builds a random cluster and fault schedule from seed (a
// chaos-style DR rehearsal). The same seed gives the same scenario.
func RandomScenario(seed uint64) *Scenario {
	r := rand.New(rand.NewPCG(seed, 0x5eed5eed))
	c := Cluster{Machines: 4 + r.IntN(3), OSDsPerMachine: 1 + r.IntN(2), PGs: 64, Mons: 3, OperatorOn: -1}
	if r.IntN(10) == 0 {
		c.Machines = 3
	}
	switch x := r.IntN(10); {
	case x < 2:
		c.BareMetal, c.FenceKind = true, FenceReboot
	case x < 3:
		c.BareMetal, c.FenceKind = true, FenceDeleteWipe
	case x < 4:
		c.FenceKind = FenceDeleteWipe
	}
	if r.IntN(10) < 3 {
		c.OperatorOn = r.IntN(c.Machines)
	}
	p := DefaultParams()
	if r.IntN(10) < 3 {
		p.OperatorLag = Time(60+r.IntN(540)) * Second
	}
	if r.IntN(10) < 2 {
		p.MHCLag = Time(r.IntN(400)) * Second
	}
	kinds := []FaultKind{FaultPowerOff, FaultPowerOff, FaultHang, FaultAPICut, FaultPublicCut, FaultClusterCut, FaultNICCut, FaultOperatorStall, FaultMHCStall}
	nf := 1 + r.IntN(5)
	var fs []Fault
	for i := 0; i < nf; i++ {
		f := Fault{At: Time(5+r.IntN(85))*Minute + Time(r.IntN(60))*Second, Kind: kinds[r.IntN(len(kinds))], Machine: r.IntN(c.Machines)}
		if f.Kind.controller() {
			f.Machine = -1
		}
		switch {
		case f.Kind.controller():
			f.For = Time(1+r.IntN(10)) * Minute
		case r.IntN(10) < 7:
			f.For = Time(1+r.IntN(90)) * Minute
		}
		if r.IntN(10) == 0 && f.For > 0 && f.For < 10*Minute {
			// a flapping fault: the same fault again a few times
			f.Every = f.For + Time(10+r.IntN(120))*Second
			f.Repeat = 3 + r.IntN(6)
		}
		fs = append(fs, f)
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].At < fs[j].At })
	c.Clients = 2 * c.Machines // drawn from nothing: the schedules stay those of earlier versions
	// Failure domains, flags and flapping draw from their own stream, so
	// the schedules above stay those of earlier versions: three in ten
	// runs spread the machines over 3 zones (failure domain zone when there
	// are enough), one in ten sets noout or norebalance for a while.
	r2 := rand.New(rand.NewPCG(seed, 0xd0d0cafe))
	if r2.IntN(10) < 3 {
		c.Zones = 3
		if r2.IntN(2) == 0 {
			c.FailureDomain = CrushZone
		}
	}
	if r2.IntN(10) == 0 {
		k := FaultSetNoOut
		if r2.IntN(2) == 0 {
			k = FaultSetNoRebalance
		}
		fs = append(fs, Fault{At: Time(1+r2.IntN(60)) * Minute, Kind: k, Machine: -1, For: Time(10+r2.IntN(170)) * Minute})
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].At < fs[j].At })
	}
	fs = append(fs, livenessFaults(seed, c.Machines)...)
	fs = append(fs, operatorActions(seed, c.Machines, &p)...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].At < fs[j].At })
	return &Scenario{Name: fmt.Sprintf("random-%d", seed), Cluster: c, Params: p, Seed: seed, Duration: 8 * Hour, Faults: fs, Expect: map[string]string{}}
}

// livenessFaults draws, from a stream of their own (the schedules drawn
// before stay those of earlier versions), the faults that test liveness:
// in one run of five a controller stalled for hours, in one of five a
// link that flaps for hours (down most of each period: the Ready
// condition's timer restarts every cycle), in one of ten `ceph status`
// hanging or the mgr's PG stats going stale for a while.
func livenessFaults(seed uint64, machines int) []Fault {
	r := rand.New(rand.NewPCG(seed, 0x11fe11fe))
	var fs []Fault
	if r.IntN(5) == 0 {
		k := FaultOperatorStall
		if r.IntN(2) == 0 {
			k = FaultMHCStall
		}
		fs = append(fs, Fault{At: Time(1+r.IntN(60)) * Minute, Kind: k, Machine: -1, For: Time(60+r.IntN(420)) * Minute})
	}
	if r.IntN(5) == 0 {
		links := [...]FaultKind{FaultNICCut, FaultNICCut, FaultAPICut, FaultPublicCut, FaultClusterCut}
		every := Time(60+r.IntN(540)) * Second
		down := every * Time(50+r.IntN(48)) / 100
		span := Time(1+r.IntN(6)) * Hour
		fs = append(fs, Fault{At: Time(5+r.IntN(60)) * Minute, Kind: links[r.IntN(len(links))], Machine: r.IntN(machines),
			For: down, Repeat: int(span / every), Every: every})
	}
	if r.IntN(10) == 0 {
		k := FaultStatusHang
		if r.IntN(2) == 0 {
			k = FaultMgrStale
		}
		fs = append(fs, Fault{At: Time(1+r.IntN(90)) * Minute, Kind: k, Machine: -1, For: Time(5+r.IntN(55)) * Minute})
	}
	return fs
}

// operatorActions draws, from a stream of its own, what an operator does
// outside the policies: in one run of two an operator (or a script)
// removes the out-of-service taint from a node soon after it is Ready
// again (oosTaintRemovalDelay: 2 s, 10 s, 1 min or 10 min), which is what
// lets the fencer unfence (Rook deletes its NetworkFence, ceph-csi's node
// plugin lifts its entry); in one of five an operator removes a taint at
// a random time, the node back or not.
func operatorActions(seed uint64, machines int, p *Params) []Fault {
	r := rand.New(rand.NewPCG(seed, 0x0be7a70f))
	if r.IntN(2) == 0 {
		delays := [...]Time{2 * Second, 10 * Second, Minute, 10 * Minute}
		p.OOSTaintRemovalDelay = delays[r.IntN(len(delays))]
	}
	if r.IntN(5) == 0 {
		return []Fault{{At: Time(15+r.IntN(225)) * Minute, Kind: FaultRemoveOOSTaint, Machine: r.IntN(machines)}}
	}
	return nil
}

// Finding is a violation found by exploration, minimized and replayable.
type Finding struct {
	// Seed is the random schedule's seed.
	Seed uint64
	// Scenario is the minimized scenario (replayable with sim run).
	Scenario *Scenario
	// Minimal is the minimized fault schedule's recorded run.
	Minimal *Result
}

// Explore runs policy pol over runs random scenarios with seeds seed,
// seed+1, ...; progress is called after each run.
func Explore(pol *Policy, runs int, seed uint64, progress func(done, violations int)) ([]Finding, error) {
	return ExploreShard(pol, runs, seed, Shard{}, false, progress)
}

// minimizeFinding minimizes the run of cfg (scenario sc) that broke inv.
func minimizeFinding(cfg Config, sc *Scenario, inv int) (Finding, error) {
	seed := cfg.Seed
	min := Minimize(cfg, inv)
	cfg.Faults, cfg.Record = min, true
	r, err := RunConfig(cfg)
	if err != nil {
		return Finding{}, err
	}
	msc := *sc
	msc.Faults = min
	return Finding{Seed: seed, Scenario: &msc, Minimal: r}, nil
}

// MinimizeResult minimizes the violation of invariant inv by the run of
// cfg (scenario sc) and returns the recorded run of the minimal schedule.
func MinimizeResult(cfg Config, sc *Scenario, inv int) (*Result, []Fault, error) {
	f, err := minimizeFinding(cfg, sc, inv)
	if err != nil {
		return nil, nil, err
	}
	return f.Minimal, f.Scenario.Faults, nil
}

// ScenarioYAML renders a scenario as a file `sim run` accepts.
func ScenarioYAML(sc *Scenario) string {
	var b strings.Builder
	c := sc.Cluster
	fmt.Fprintf(&b, "name: %s\ncluster: %s\n", sc.Name, ClusterYAML(c))
	ps := sc.Params.diff(DefaultParams())
	if len(ps) > 0 {
		fmt.Fprintf(&b, "params: {%s}\n", strings.Join(ps, ", "))
	}
	fmt.Fprintf(&b, "seed: %d\nduration: %s\nfaults:\n", sc.Seed, sc.Duration.Dur())
	for _, f := range sc.Faults {
		fmt.Fprintf(&b, "  - %s\n", FaultString(c, f))
	}
	return b.String()
}
