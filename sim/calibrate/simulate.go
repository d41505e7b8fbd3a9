package calibrate

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/fenceproof/fenceproof/sim"
)

// The simulated run of an experiment: the same layout, Ceph settings and
// data, the platform assumptions below, and the real run's actions (their
// times are the schedule, not an outcome) as the simulator's faults.

// Platform holds the simulator's assumptions about this machine, fixed
// before the calibration runs. osdBootTime: a daemon's start to up (3-6 s
// measured for a restart, 1.2-2.1 s for a resumed daemon's reassert; the
// model has one value). peeringTime 1.5 s: one peering round as the
// development runs show it, PGs inactive 0.5-3 s after a map change on
// this loaded machine (host-hang 2.1 s per PG over its two rounds,
// host-loss-2osd 1.2 s; the model's pg_temp round after an out and its
// round after each backfill count separately; it was 1 s, which left
// every run's inactive PG-seconds 2-3x short). peeringSpread 0.67: a PG
// peers for 0.5-2.5 s, in no fixed order, so which PGs of equal priority
// get their reservations first varies from run to run as in Ceph (Seeds).
// nodeBootTime 0: the experiments restart daemons, no machine boots.
// jitter 0: no other spread.
var Platform = map[string]string{"osdBootTime": "3s", "peeringTime": "1.5s", "peeringSpread": "0.67", "reportSpread": "2s", "nodeBootTime": "0s", "jitter": "0"}

// Seeds are the simulated runs of each real run's schedule: the model's
// own run-to-run spread (peeringSpread), judged by its median (checks.go).
const Seeds = 7

// recoveryOpTime is what one recovery or backfill push takes on this
// machine besides osd_recovery_sleep_hdd. Set from the development
// experiments' backfills on this 2-core machine under load (0.05 s, from
// exploratory single-OSD runs, left them too fast); fixed before the
// held-out experiment ran.
const recoveryOpTime = 0.22

// simStart is when t0 falls in the simulated run (the cluster settles
// before), less the real run's tick phase: the simulated mon ticks every
// monTickInterval from the run's start, so its ticks fall where the real
// leader's did.
func simStart(real *Timeline) sim.Time {
	return 5*sim.Minute - sim.Time(math.Round(real.TickPhase*1000))
}

// Params are the simulator's parameters for an experiment: Ceph's settings
// as the experiment sets them, the data, and the platform assumptions.
func Params(e *Experiment) (sim.Params, error) {
	p := sim.DefaultParams()
	c := e.CephConfig()
	secs := func(k string) string { return c[k] + "s" }
	sleep, err := strconv.ParseFloat(c["osd_recovery_sleep_hdd"], 64)
	if err != nil {
		return p, fmt.Errorf("osd_recovery_sleep_hdd: %v", err)
	}
	objMB := float64(e.ObjectKiB) / 1024
	set := map[string]string{
		"osdHeartbeatGrace":          secs("osd_heartbeat_grace"),
		"osdHeartbeatInterval":       secs("osd_heartbeat_interval"),
		"monOsdDownOutInterval":      secs("mon_osd_down_out_interval"),
		"monTickInterval":            secs("mon_tick_interval"),
		"monOsdMinDownReporters":     c["mon_osd_min_down_reporters"],
		"monOsdAdjustHeartbeatGrace": c["mon_osd_adjust_heartbeat_grace"],
		"monOsdMinInRatio":           c["mon_osd_min_in_ratio"],
		"osdMaxBackfills":            c["osd_max_backfills"],
		"osdMinPgLogEntries":         c["osd_min_pg_log_entries"],
		"osdClientWatchTimeout":      secs("osd_client_watch_timeout"),
		"poolSize":                   strconv.Itoa(e.Size),
		"poolMinSize":                strconv.Itoa(e.MinSize),
		// a PG replica's data; the data and log entries the writer dirties
		// per second and PG
		"pgDataMB":    fmt.Sprint(float64(e.Objects) * objMB),
		"pgWriteMBps": fmt.Sprint(e.WritesPerSec * objMB / float64(e.PGs)),
		"pgWriteOps":  fmt.Sprint(e.WritesPerSec / float64(e.PGs)),
		// one object per osd_recovery_sleep plus the op, per recovering
		// PG; the sleep is the OSD's, shared by the PGs it recovers as a
		// primary (osd_max_backfills > 1)
		"osdRecoveryMBps":    fmt.Sprint(objMB / (sleep + recoveryOpTime)),
		"recoverySleepShare": fmt.Sprint(sleep / (sleep + recoveryOpTime)),
	}
	for k, v := range Platform {
		set[k] = v
	}
	for k, v := range set {
		if err := p.SetParam(k, v); err != nil {
			return p, fmt.Errorf("%s: %v", k, err)
		}
	}
	return p, nil
}

// faultOf maps an action to the simulator's fault on its host's machine.
var faultOf = map[string]sim.FaultKind{
	"pause-host": sim.FaultHang, "resume-host": sim.FaultUnhang,
	"kill-host": sim.FaultOSDCrash, "start-host": sim.FaultOSDStart,
	"power-off": sim.FaultPowerOff, "power-on": sim.FaultPowerOn,
	"cut-client": sim.FaultNICCut, "heal-client": sim.FaultNICHeal,
}

// clientMachine is the machine of the simulated client of the client
// experiments (the workload's first client runs there).
const clientMachine = 0

// Simulate runs an experiment in the simulator with the real run's
// actions, with the seed's draws; adjust, when not nil, changes the
// parameters first (a perturbed model).
func Simulate(e *Experiment, real *Timeline, adjust func(*sim.Params), seed uint64) (*Timeline, error) {
	p, err := Params(e)
	if err != nil {
		return nil, err
	}
	if adjust != nil {
		adjust(&p)
	}
	t0 := simStart(real)
	ms := func(s float64) sim.Time { return sim.Time(math.Round(s * 1000)) }
	cfg := sim.Config{Name: e.Name, Params: p, Policy: sim.Policies["never"], Seed: seed, Record: true, KeepGoing: true,
		Cluster: sim.Cluster{Machines: e.Hosts, OSDsPerMachine: e.OSDsPerHost, PGs: e.PGs, Mons: Mons, MonsOn: []int{0, 1, 2}, OperatorOn: -1,
			Placement: real.Placement},
		Duration: t0 + ms(real.end()) + 10*sim.Minute}
	out := &Timeline{Experiment: e.Name, Source: fmt.Sprintf("simulator (fenceproof sim, policy never, seed %d)", seed), TickPhase: real.TickPhase}
	switch e.Sim {
	case simBlocklist:
		if err := blocklistConfig(&cfg, real, t0); err != nil {
			return nil, err
		}
	case simLock:
		lockConfig(&cfg, real, t0)
	}
	for _, a := range real.Actions {
		// at the millisecond the fault is played: an event at that instant
		// comes after it (a quorum regained at once)
		played := float64(ms(a.At)) / 1000
		out.Actions = append(out.Actions, Action{At: played, Do: a.Do, Hosts: a.Hosts, Client: a.Client})
		k, ok := faultOf[a.Do]
		if !ok {
			continue
		}
		hosts := a.Hosts
		if a.Do == "cut-client" || a.Do == "heal-client" {
			hosts = []int{clientMachine}
		}
		for _, h := range hosts {
			cfg.Faults = append(cfg.Faults, sim.Fault{At: t0 + ms(a.At), Kind: k, Machine: h})
		}
	}
	if err := cfg.Params.Validate(); err != nil {
		return nil, err
	}
	r, err := sim.RunConfig(cfg)
	if err != nil {
		return nil, err
	}
	rel := func(t sim.Time) float64 { return float64(t-t0) / 1000 }
	out.events(r, rel, t0)
	out.samples(r, rel, t0, e)
	out.clientEvents(e, r, rel, t0)
	return out, nil
}

var (
	reOSDEvent = regexp.MustCompile(`^osd\.(\d+) (down|out|up|in)\b`)
	reQuorum   = regexp.MustCompile(`^mon quorum regained`)
)

// events reads the map events from the simulator's timeline.
func (out *Timeline) events(r *sim.Result, rel func(sim.Time) float64, t0 sim.Time) {
	for _, en := range r.Rec.Entries {
		if en.At < t0 || en.Cat != "ceph" {
			continue
		}
		if m := reOSDEvent.FindStringSubmatch(en.Text); m != nil && !strings.Contains(en.Text, "but not marked out") {
			osd, _ := strconv.Atoi(m[1])
			out.Events = append(out.Events, Event{At: rel(en.At), What: m[2], OSD: osd, Note: en.Text})
		} else if reQuorum.MatchString(en.Text) {
			out.Events = append(out.Events, Event{At: rel(en.At), What: "quorum", OSD: -1, Note: en.Text})
		}
	}
}

// samples reads the PG curves from the simulator's samples, derives the
// clean events as for a real run, and the writer's outcomes: the share of
// its writes that lands on PGs that serve.
func (out *Timeline) samples(r *sim.Result, rel func(sim.Time) float64, t0 sim.Time, e *Experiment) {
	// before t0 the cluster is clean (a run records a sample only after
	// an event)
	before := sim.Sample{PGs: sim.PGCounts{Clean: e.PGs}, UpOSDs: e.Hosts * e.OSDsPerHost, InOSDs: e.Hosts * e.OSDsPerHost, Quorum: true}
	for _, s := range r.Rec.Samples {
		if s.At < t0 {
			before = s
			continue
		}
		out.Samples = append(out.Samples, fromSim(s, rel(s.At)))
	}
	out.Samples = append([]Sample{fromSim(before, 0)}, out.Samples...)
	out.deriveClean()
	end := out.end()
	for x := 0.0; x < end; x++ {
		unserved := 0.0
		for _, s := range r.Rec.Samples {
			if s.At > t0+sim.Time(x*1000) {
				break
			}
			unserved = float64(s.PGs.Inactive()+s.Blocked) / float64(e.PGs)
		}
		out.Writes = append(out.Writes, Writes{At: x, OK: e.WritesPerSec * (1 - unserved), Failed: e.WritesPerSec * unserved})
	}
}

func fromSim(s sim.Sample, at float64) Sample {
	return Sample{At: at, Clean: s.PGs.Clean, Active: s.PGs.Active, Inactive: s.PGs.Inactive(), Recovering: s.Recovering,
		MovedMB: s.RecoveredMB, Up: s.UpOSDs, In: s.InOSDs}
}

// blocklistConfig sets up the blocklist experiment's simulation: the
// writing client's node is cut from the Kubernetes API so that it goes
// NotReady at once and ceph-csi's out-of-service path blocklists its
// address (policy csi-oos), the entry lasting as long as the real one.
func blocklistConfig(cfg *sim.Config, real *Timeline, t0 sim.Time) error {
	add, ok1 := real.action("blocklist-add", 0)
	rm, ok2 := real.action("blocklist-rm", 0)
	if !ok1 || !ok2 {
		return fmt.Errorf("the real run lacks its blocklist actions")
	}
	cfg.Policy = sim.Policies["csi-oos"]
	cfg.Cluster.Clients = 1
	for k, v := range map[string]string{"nodeMonitorGracePeriod": "1s", "mhcUnhealthyTimeout": "0s", "mhcLag": "0s", "workloadStartTime": "1s",
		"csiAutoFenceExpire": fmt.Sprintf("%dms", int(math.Round((rm-add)*1000)))} {
		if err := cfg.Params.SetParam(k, v); err != nil {
			return err
		}
	}
	cfg.Faults = append(cfg.Faults, sim.Fault{At: t0 + sim.Time(math.Round(add*1000)) - sim.Second, Kind: sim.FaultAPICut, Machine: clientMachine})
	return nil
}

// lockConfig sets up the lock-break experiment's simulation: the holder's
// machine is cut off (nic-cut); its node goes NotReady and its pod is
// evicted when the real second client started, a Deployment's replacement
// starts at once elsewhere (no attachment holds it back) and waits for the
// holder's watch to expire before it breaks the lock.
func lockConfig(cfg *sim.Config, real *Timeline, t0 sim.Time) {
	cut, _ := real.action("cut-client", 0)
	start, _ := real.action("start-client", 0)
	cfg.Cluster.Clients = 1
	cfg.Cluster.WorkloadKind = sim.WorkloadDeployment
	cfg.Cluster.NoAttach = true
	grace := max(sim.Time(math.Round((start-cut)*1000)), 1)
	cfg.Params.NodeMonitorGracePeriod = grace
	cfg.Params.PodEvictionTimeout = 0
	cfg.Params.WorkloadStartTime = 0
}

var reBreak = regexp.MustCompile(`broke the lock of its old client`)

// clientEvents reads the client experiments' events. The model's
// semantics: a blocklisted client's writes are refused from the entry on,
// accepted again once it goes; a broken lock's old holder is blocklisted
// at the break.
func (out *Timeline) clientEvents(e *Experiment, r *sim.Result, rel func(sim.Time) float64, t0 sim.Time) {
	switch e.Sim {
	case simBlocklist:
		for _, en := range r.Rec.Entries {
			if en.At < t0-5*sim.Second || en.Cat != "ceph" {
				continue
			}
			switch {
			case strings.HasPrefix(en.Text, "client address of m1 blocklisted"):
				out.setReturned("blocklist-add", rel(en.At))
				out.Events = append(out.Events, Event{At: rel(en.At), What: "first-refused", OSD: -1, Note: en.Text})
			case strings.HasPrefix(en.Text, "blocklist entry of m1 expired"):
				out.setReturned("blocklist-rm", rel(en.At))
				out.Events = append(out.Events, Event{At: rel(en.At), What: "resumed", OSD: -1, Note: en.Text})
			}
		}
	case simLock:
		heal, _ := out.action("heal-client", 0)
		for _, en := range r.Rec.Entries {
			if en.At >= t0 && en.Cat == "client" && reBreak.MatchString(en.Text) {
				out.Events = append(out.Events, Event{At: rel(en.At), What: "lock-broken", OSD: -1, Note: en.Text})
			}
		}
		// the old holder is blocklisted from the break: refused once it
		// reaches Ceph again
		out.Events = append(out.Events, Event{At: heal, What: "first-refused", OSD: -1})
		if r.Metrics.StaleWrites > 0 {
			out.Events = append(out.Events, Event{At: heal, What: "stale-write", OSD: -1, Note: fmt.Sprintf("%.0f stale writes", r.Metrics.StaleWrites)})
		}
	}
	out.sort()
}

func (t *Timeline) setReturned(do string, at float64) {
	for i := range t.Actions {
		if t.Actions[i].Do == do && t.Actions[i].Returned == 0 {
			t.Actions[i].Returned = at
			return
		}
	}
}
