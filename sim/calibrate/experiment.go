// Package calibrate checks the simulator against a real Ceph: one OSD of a
// three-OSD single-node cluster (Debian's Pacific daemons, ceph/cluster) is
// killed with shortened intervals, comes back, and the real timeline -
// down, degraded, out, up, in, HEALTH_OK, objects recovered - is set
// beside the simulator's run of the same experiment with the same
// parameters. It fails when the order of events differs or a phase
// differs beyond its stated tolerance. It also replays a kind fencing
// run's timeline (suites/fencing) in the simulator (fencing.go).
package calibrate

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Experiment is the one calibration experiment, declared once: the real
// run and the simulated run read it.
type Experiment struct {
	OSDs, PGs, PoolSize, MinSize int
	// Victim is the OSD killed at 0 and restarted after Outage.
	Victim int
	Outage time.Duration
	// HeartbeatGrace, HeartbeatInterval and DownOutInterval are the
	// shortened osd_heartbeat_grace, osd_heartbeat_interval and
	// mon_osd_down_out_interval; MgrStatsPeriod is mgr_stats_period.
	HeartbeatGrace, HeartbeatInterval, DownOutInterval, MgrStatsPeriod time.Duration
	// RecoverySleep is osd_recovery_sleep_hdd (0.1 s, Ceph's default; a
	// file-backed BlueStore counts as rotational): Ceph sleeps that long
	// between recovery operations.
	RecoverySleep time.Duration
	// ObjectKiB is the size of each object written; ObjectsBefore are
	// written before the kill, ObjectsDuring while the OSD is away.
	ObjectKiB, ObjectsBefore, ObjectsDuring int
	// Poll is how often the real run reads the cluster's state.
	Poll time.Duration
	// Platform holds the simulator's platform assumptions for this
	// machine (scenario parameters; every other parameter is the
	// simulator's default or derived from the fields above).
	Platform map[string]string
}

// Default is the experiment make calibrate runs.
var Default = Experiment{
	OSDs: 3, PGs: 16, PoolSize: 3, MinSize: 2, Victim: 2, Outage: 60 * time.Second,
	HeartbeatGrace: 6 * time.Second, HeartbeatInterval: time.Second, DownOutInterval: 20 * time.Second, MgrStatsPeriod: time.Second,
	RecoverySleep: 100 * time.Millisecond,
	ObjectKiB:     64, ObjectsBefore: 64, ObjectsDuring: 32, Poll: 250 * time.Millisecond,
	Platform: map[string]string{"osdBootTime": "3s", "peeringTime": "1s", "jitter": "0"},
}

// cephConfig is the [global] configuration of the real cluster: one host,
// so peers report from the same host (reporter level osd, one reporter
// needed).
func (e Experiment) cephConfig() map[string]string {
	secs := func(d time.Duration) string { return fmt.Sprintf("%g", d.Seconds()) }
	return map[string]string{
		"osd_heartbeat_grace":            secs(e.HeartbeatGrace),
		"osd_heartbeat_interval":         secs(e.HeartbeatInterval),
		"mon_osd_down_out_interval":      secs(e.DownOutInterval),
		"mgr_stats_period":               secs(e.MgrStatsPeriod),
		"mon_osd_min_down_reporters":     "1",
		"mon_osd_reporter_subtree_level": "osd",
		"osd_recovery_sleep_hdd":         secs(e.RecoverySleep),
	}
}

// EventKind is a step of the experiment's timeline.
type EventKind int

// The timeline's events, in the order both runs must show them.
const (
	EvKill EventKind = iota
	EvDown
	EvDegraded
	EvOut
	EvRestart
	EvUp
	EvIn
	EvHealthOK
	numEvents
)

var eventNames = [numEvents]string{"OSD killed", "OSD down in the map", "PG_DEGRADED raised", "OSD out", "OSD restarted", "OSD up in the map", "OSD in", "HEALTH_OK again"}

// String names the event.
func (k EventKind) String() string { return eventNames[k] }

// phase is a duration both runs measure, with its tolerance: the
// difference may be up to Abs, or Rel of the real duration when larger.
type phase struct {
	name     string
	from, to EventKind
	abs      time.Duration
	rel      float64
	why      string
}

// phases are the compared durations and their stated tolerances.
var phases = []phase{
	{"failure detection", EvKill, EvDown, 2 * time.Second, 0.5, "a killed daemon's peers are refused at their next heartbeat (osd_heartbeat_interval) and report it at once"},
	{"down to out", EvDown, EvOut, 6 * time.Second, 0, "the mon checks down OSDs once per mon_tick_interval (5 s)"},
	{"restart to up", EvRestart, EvUp, 5 * time.Second, 0.5, "the OSD's boot: osdBootTime, a platform assumption"},
	{"up to HEALTH_OK", EvUp, EvHealthOK, 8 * time.Second, 0.5, "peering, the recovery of the objects written meanwhile, and the mgr's stats period"},
	{"degraded in all", EvDegraded, EvHealthOK, 10 * time.Second, 0.2, "the whole degraded episode"},
}

// objectsTolerance is how far the recovered objects may differ (relative).
const objectsTolerance = 0.25

// Observed is one run's timeline.
type Observed struct {
	Source string
	Events [numEvents]time.Duration
	seen   [numEvents]bool
	// ObjectsRecovered is what recovery and backfill moved, in objects.
	ObjectsRecovered int
}

func (o *Observed) add(k EventKind, at time.Duration) {
	if !o.seen[k] {
		o.seen[k], o.Events[k] = true, at
	}
}

func (o *Observed) has(k EventKind) bool { return o.seen[k] }

// order is the events the run saw, by time (ties in declaration order).
func (o *Observed) order() []EventKind {
	var ks []EventKind
	for k := EventKind(0); k < numEvents; k++ {
		if o.seen[k] {
			ks = append(ks, k)
		}
	}
	sort.SliceStable(ks, func(i, j int) bool { return o.Events[ks[i]] < o.Events[ks[j]] })
	return ks
}

// Comparison is the real and simulated runs side by side.
type Comparison struct {
	Exp        Experiment
	Real, Sim  *Observed
	Problems   []string
	phaseLines [][5]string
}

// Compare sets the runs side by side and lists every difference beyond
// the stated tolerances: a missing event, another order of events, a
// phase, the recovered objects.
func Compare(e Experiment, real, sim *Observed) *Comparison {
	c := &Comparison{Exp: e, Real: real, Sim: sim}
	for k := EventKind(0); k < numEvents; k++ {
		if !real.seen[k] || !sim.seen[k] {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: seen by the real run %v, by the simulator %v", k, real.seen[k], sim.seen[k]))
		}
	}
	ro, so := real.order(), sim.order()
	if fmt.Sprint(ro) != fmt.Sprint(so) {
		c.Problems = append(c.Problems, fmt.Sprintf("order of events differs: real %s; simulated %s", names(ro), names(so)))
	}
	for _, p := range phases {
		if !real.seen[p.from] || !real.seen[p.to] || !sim.seen[p.from] || !sim.seen[p.to] {
			continue
		}
		r, s := real.Events[p.to]-real.Events[p.from], sim.Events[p.to]-sim.Events[p.from]
		tol := max(p.abs, time.Duration(p.rel*float64(r)))
		d := s - r
		ok := d <= tol && d >= -tol
		verdict := "ok"
		if !ok {
			verdict = "BEYOND"
			c.Problems = append(c.Problems, fmt.Sprintf("%s: real %s, simulated %s, differ by %s > %s", p.name, secs(r), secs(s), secs(d), secs(tol)))
		}
		c.phaseLines = append(c.phaseLines, [5]string{p.name, secs(r), secs(s), "±" + secs(tol), verdict})
	}
	if r, s := real.ObjectsRecovered, sim.ObjectsRecovered; float64(abs(s-r)) > objectsTolerance*float64(max(r, 4)) {
		c.Problems = append(c.Problems, fmt.Sprintf("objects recovered: real %d, simulated %d (tolerance %.0f %%)", r, s, 100*objectsTolerance))
	}
	return c
}

func names(ks []EventKind) string {
	var n []string
	for _, k := range ks {
		n = append(n, k.String())
	}
	return strings.Join(n, " < ")
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func abs(v int) int { return max(v, -v) }

func splitFields(s string) []string { return strings.Fields(s) }
