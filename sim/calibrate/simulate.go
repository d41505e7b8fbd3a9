package calibrate

import (
	"fmt"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/sim"
)

// simStart is when the simulated run kills the OSD (the cluster settles
// before).
const simStart = 5 * sim.Minute

// SimConfig is the simulator's configuration of the experiment: three
// machines with one OSD each (on one real host the failure domain is the
// OSD), one mon on a machine the experiment leaves alone, the intervals
// and data of the experiment, the platform assumptions, and the kill as
// the osd-crash fault on the victim's machine (the daemon dies, its host
// runs) for outage (when the real run restarted it).
func SimConfig(e Experiment, outage time.Duration) (sim.Config, error) {
	p := sim.DefaultParams()
	set := map[string]string{
		"osdHeartbeatGrace":      fmt.Sprintf("%dms", e.HeartbeatGrace.Milliseconds()),
		"osdHeartbeatInterval":   fmt.Sprintf("%dms", e.HeartbeatInterval.Milliseconds()),
		"monOsdDownOutInterval":  fmt.Sprintf("%dms", e.DownOutInterval.Milliseconds()),
		"monOsdMinDownReporters": "1",
		"poolSize":               fmt.Sprint(e.PoolSize),
		"poolMinSize":            fmt.Sprint(e.MinSize),
		// a PG replica's data, and the object data dirtied per second and
		// PG while the OSD is away (the objects written during the outage,
		// spread over it: the simulator counts what a replica missed from
		// its mark-down on)
		"pgDataMB":    fmt.Sprintf("%g", float64(e.ObjectsBefore*e.ObjectKiB)/1024/float64(e.PGs)),
		"pgWriteMBps": fmt.Sprintf("%g", float64(e.ObjectsDuring*e.ObjectKiB)/1024/float64(e.PGs)/(outage-e.HeartbeatInterval).Seconds()),
		// Ceph recovers one object per osd_recovery_sleep on a rotational
		// device (a file-backed BlueStore is one)
		"osdRecoveryMBps": fmt.Sprintf("%g", float64(e.ObjectKiB)/1024/e.RecoverySleep.Seconds()),
	}
	for k, v := range e.Platform {
		set[k] = v
	}
	for k, v := range set {
		if err := p.SetParam(k, v); err != nil {
			return sim.Config{}, err
		}
	}
	victim := e.Victim
	out := sim.Time(outage.Milliseconds())
	return sim.Config{Name: "calibration", Params: p, Policy: sim.Policies["never"], Seed: 1, Record: true, KeepGoing: true,
		Cluster:  sim.Cluster{Machines: e.OSDs, OSDsPerMachine: 1, PGs: e.PGs, Mons: 1, MonsOn: []int{(victim + 1) % e.OSDs}, OperatorOn: -1},
		Faults:   []sim.Fault{{At: simStart, Kind: sim.FaultOSDCrash, Machine: victim, For: out}},
		Duration: simStart + out + 30*sim.Minute}, nil
}

// RunSim runs the experiment in the simulator, the OSD restarted after
// outage, and reads the same events from its timeline.
func RunSim(e Experiment, outage time.Duration) (*Observed, error) {
	cfg, err := SimConfig(e, outage)
	if err != nil {
		return nil, err
	}
	r, err := sim.RunConfig(cfg)
	if err != nil {
		return nil, err
	}
	ob := &Observed{Source: "simulator (fenceproof sim, policy never, seed 1)"}
	at := func(t sim.Time) time.Duration { return time.Duration(t-simStart) * time.Millisecond }
	osd := fmt.Sprintf("osd.%d ", e.Victim)
	restart := simStart + sim.Time(outage.Milliseconds())
	ob.add(EvKill, 0)
	ob.add(EvRestart, at(restart))
	for _, en := range r.Rec.Entries {
		if en.At < simStart {
			continue
		}
		switch {
		case en.Cat == "ceph" && strings.HasPrefix(en.Text, osd+"down"):
			ob.add(EvDown, at(en.At))
		case en.Cat == "ceph" && strings.HasPrefix(en.Text, osd+"out"):
			ob.add(EvOut, at(en.At))
		case en.Cat == "ceph" && en.Text == osd+"up":
			ob.add(EvUp, at(en.At))
		case en.Cat == "ceph" && strings.HasPrefix(en.Text, osd+"in"):
			ob.add(EvIn, at(en.At))
		case en.Cat == "health" && strings.Contains(en.Text, "PG_DEGRADED"):
			ob.add(EvDegraded, at(en.At))
		case en.Cat == "health" && en.Text == "HEALTH_OK" && en.At > restart:
			ob.add(EvHealthOK, at(en.At))
		}
	}
	ob.ObjectsRecovered = int(r.Metrics.MovedMB*1024/float64(e.ObjectKiB) + 0.5)
	return ob, nil
}
