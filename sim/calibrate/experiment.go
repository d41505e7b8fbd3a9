// Package calibrate checks the simulator against a real Ceph with a family
// of experiments, each run on Debian's Pacific daemons (ceph/cluster:
// several OSDs as CRUSH hosts on one machine) and in the simulator with
// the same layout, settings and actions. The real runs' timelines are
// checked in (fixtures/sim-calibration); the comparison judges shapes -
// the order of events, phases, PG-state curves, recovery throughput - each
// with a tolerance stated and justified beside it (checks.go). The
// simulator's parameters are fixed here, before any run: the comparison
// compares, it does not fit. One experiment is held out (HeldOut): it was
// never run or looked at while the model, the parameters and the
// tolerances were developed. Perturbed models (perturb.go) must fail at
// least one experiment; the shipped model must pass them all. It also
// replays a kind fencing run's timeline (fencing.go).
package calibrate

import (
	"fmt"
	"sort"
)

// Experiment is one calibration experiment, declared once: the real runner
// (sim/calibrate/cephrun), the simulated run (simulate.go) and the checks
// read it.
type Experiment struct {
	// Name names its timeline file (fixtures/sim-calibration/<Name>.json).
	Name string
	// HeldOut: kept out of development. Its real run was never looked at
	// while the model, its parameters and the tolerances were chosen.
	HeldOut bool
	// Doc says what it does and why.
	Doc string
	// Layout is the cluster: CRUSH hosts, OSDs per host, mons (mon k "on"
	// host k, for faults that take a host's mon with it).
	Hosts, OSDsPerHost int
	// Pool: PGs, size, min_size; Objects per PG of ObjectKiB written before
	// t0; the background writer rewrites them round-robin, WritesPerSec.
	PGs, Size, MinSize int
	Objects, ObjectKiB int
	WritesPerSec       float64
	// Ceph holds the experiment's Ceph settings, on top of baseCeph.
	Ceph map[string]string
	// Script is what the real run does, in order (runner.go's steps).
	Script []Step
	// Sim says how the simulator plays the actions: simCluster (OSD, host
	// and mon faults), simBlocklist or simLock (clients; simulate.go).
	Sim simKind
	// Checks are what the comparison judges (checks.go).
	Checks []Check
}

// Step is one step of an experiment's script: wait for When, then Do on
// Hosts (or the experiment's client).
type Step struct {
	When When
	// After is the delay: since t0 (WhenAt), since the previous step
	// (WhenAfter), or after the condition (WhenClean, WhenMoved).
	After float64
	// Fraction is WhenMoved's share of the expected data movement.
	Fraction float64
	Do       string
	Hosts    []int
	// Detect is, for the first step (WhenTick), the range of delays from
	// the action to the mark-down, real and modelled: the runner places
	// the action so that the down-out deadline falls mid-way between two
	// mon ticks for any delay in that range.
	Detect [2]float64
}

// When is a step's condition.
type When uint8

// Step conditions.
const (
	// WhenTick: t0, placed in the mon's tick phase (Step.Detect).
	WhenTick When = iota
	// WhenAt: After seconds after t0.
	WhenAt
	// WhenAfter: After seconds after the previous step.
	WhenAfter
	// WhenClean: After seconds after every PG is active+clean again.
	WhenClean
	// WhenMoved: once recovery and backfill moved Fraction of the data
	// the previous steps displace.
	WhenMoved
)

type simKind uint8

const (
	simCluster simKind = iota
	simBlocklist
	simLock
)

// baseCeph are the settings of every experiment's cluster. Shortened
// timers: osd_heartbeat_grace 6 s and osd_heartbeat_interval 1 s (20 s and
// 6 s by default), mon_osd_down_out_interval 20 s (600 s),
// osd_client_watch_timeout 10 s (30 s), mgr_stats_period 1 s (5 s). The
// recovery throttle: osd_recovery_sleep_hdd 0.3 s (0.1 s; the file-backed
// BlueStore counts as rotational) makes one object per 0.35 s per
// recovering PG the pace, not the machine's speed. PG logs of 10 entries
// (osd_min/max_pg_log_entries, 250/10000 by default, trimmed at once) so
// that a replica onto a new OSD is backfilled, as with production-sized
// PGs, not recovered from the log. mon_osd_adjust_heartbeat_grace and
// mon_osd_adjust_down_out_interval off: the grace and the down-out
// interval do not grow with an OSD's past markdowns (the experiments share
// a cluster); mon_osd_min_in_ratio 0.5 (0.75): two of six OSDs may go out.
var baseCeph = map[string]string{
	"osd_heartbeat_grace":              "6",
	"osd_heartbeat_interval":           "1",
	"mon_osd_down_out_interval":        "20",
	"mon_osd_min_down_reporters":       "2",
	"mon_osd_reporter_subtree_level":   "host",
	"mon_osd_adjust_heartbeat_grace":   "false",
	"mon_osd_adjust_down_out_interval": "false",
	"mon_osd_min_in_ratio":             "0.5",
	"osd_recovery_sleep_hdd":           "0.3",
	"osd_max_backfills":                "1",
	"osd_min_pg_log_entries":           "10",
	"osd_max_pg_log_entries":           "10",
	"osd_pg_log_trim_min":              "1",
	"osd_client_watch_timeout":         "10",
	"mgr_stats_period":                 "1",
	"mon_tick_interval":                "5",
}

// Ceph returns the experiment's full Ceph settings.
func (e *Experiment) CephConfig() map[string]string {
	c := map[string]string{}
	for k, v := range baseCeph {
		c[k] = v
	}
	for k, v := range e.Ceph {
		c[k] = v
	}
	return c
}

// Mons is the number of mons (mon k on host k).
const Mons = 3

// Experiments are the calibration experiments, in the order they run.
// The dev cluster is six hosts of one OSD each; host-loss-2osd runs on
// four hosts of two OSDs, host-kill-5hosts-backfills2 and the held-out
// experiment on five hosts of one.
var Experiments = []*Experiment{
	{
		Name: "host-hang",
		Doc: "A host hangs (its OSD daemon SIGSTOPped): its peers on the other hosts miss its heartbeats and two of them, on two hosts " +
			"(mon_osd_min_down_reporters 2, reporter subtree host), report it after osd_heartbeat_grace; the mon marks it down. Resumed after " +
			"15 s (before the down-out interval), the daemon finds itself marked down, boots again and recovers the writes it missed.",
		Hosts: 6, OSDsPerHost: 1, PGs: 32, Size: 3, MinSize: 2, Objects: 24, ObjectKiB: 64, WritesPerSec: 4,
		Script: []Step{
			{When: WhenAt, After: 0, Do: "pause-host", Hosts: []int{5}},
			{When: WhenAfter, After: 15, Do: "resume-host", Hosts: []int{5}},
		},
		Checks: hostHangChecks,
	},
	{
		Name: "hosts-out-backfill",
		Doc: "Two hosts die 5 s apart (their OSD daemons SIGKILLed: peers are refused and report at once). Each is marked out on the mon's " +
			"tick once down for mon_osd_down_out_interval - the two outs on consecutive ticks - and CRUSH remaps their PGs: the data moves by " +
			"backfill onto the four others under osd_max_backfills. Once every PG is clean the daemons start again, are marked up and in, and " +
			"the PGs map back. Pool min_size 1, so that no PG here hinges on peering below min_size (second-failure-during-backfill does).",
		Hosts: 6, OSDsPerHost: 1, PGs: 32, Size: 3, MinSize: 1, Objects: 24, ObjectKiB: 64, WritesPerSec: 2,
		Script: []Step{
			{When: WhenTick, Do: "kill-host", Hosts: []int{5}, Detect: [2]float64{0, 1}},
			{When: WhenAfter, After: 5, Do: "kill-host", Hosts: []int{4}},
			{When: WhenClean, After: 5, Do: "start-host", Hosts: []int{4, 5}},
		},
		Checks: outBackfillChecks,
	},
	{
		Name: "second-failure-during-backfill",
		Doc: "A host dies (SIGKILL) and is marked out; while its PGs backfill onto the others, a second host hangs (SIGSTOP) for 25 s. " +
			"PGs that kept one complete copy have fewer than min_size 2 in their acting set - the backfill target holds no complete copy - " +
			"and are undersized+peered: no I/O until the second host returns.",
		Hosts: 6, OSDsPerHost: 1, PGs: 32, Size: 3, MinSize: 2, Objects: 24, ObjectKiB: 64, WritesPerSec: 2,
		Script: []Step{
			{When: WhenTick, Do: "kill-host", Hosts: []int{5}, Detect: [2]float64{0, 1}},
			{When: WhenMoved, Fraction: 0.25, Do: "pause-host", Hosts: []int{4}},
			{When: WhenAfter, After: 25, Do: "resume-host", Hosts: []int{4}},
		},
		Checks: secondFailureChecks,
	},
	{
		Name: "mon-quorum-loss",
		Doc: "Two of the three mon hosts lose power (their mon and OSD daemons SIGKILLed) for 40 s: no quorum, the OSD map frozen with " +
			"their OSDs up. Clients with a session keep writing to the PGs whose acting OSDs all run (those on the four other hosts); I/O to " +
			"the others blocks. Power returns: the mons elect a leader, the OSDs boot and the PGs recover.",
		Hosts: 6, OSDsPerHost: 1, PGs: 32, Size: 3, MinSize: 2, Objects: 24, ObjectKiB: 64, WritesPerSec: 8,
		Script: []Step{
			{When: WhenAt, After: 0, Do: "power-off", Hosts: []int{0, 1}},
			{When: WhenAfter, After: 40, Do: "power-on", Hosts: []int{0, 1}},
		},
		Sim:    simCluster,
		Checks: quorumChecks,
	},
	{
		Name: "client-blocklist",
		Doc: "A client writing every 20 ms from its own address is blocklisted (`ceph osd blocklist add`) and, 8 s later, removed from " +
			"the blocklist. Its writes are refused (EBLOCKLISTED) from the moment the mon commits the entry, and accepted again once it goes.",
		Hosts: 6, OSDsPerHost: 1, PGs: 32, Size: 3, MinSize: 2, Objects: 24, ObjectKiB: 64, WritesPerSec: 2,
		Script: []Step{
			{When: WhenAt, After: 0, Do: "blocklist-add"},
			{When: WhenAfter, After: 8, Do: "blocklist-rm"},
		},
		Sim:    simBlocklist,
		Checks: blocklistChecks,
	},
	{
		Name: "lock-break",
		Doc: "A client holds a RADOS exclusive lock and a watch on the lock object and writes. Its network goes down; 2 s later a second " +
			"client wants the lock. While the holder's watch lives the lock is not broken; once the OSD drops the watch " +
			"(osd_client_watch_timeout 10 s) the second client blocklists the holder's instance, breaks its lock, takes it and writes (as " +
			"librbd does with rbd_blocklist_on_break_lock). The holder's network returns: its writes are refused.",
		Hosts: 6, OSDsPerHost: 1, PGs: 32, Size: 3, MinSize: 2, Objects: 24, ObjectKiB: 64, WritesPerSec: 2,
		Script: []Step{
			{When: WhenAt, After: 0, Do: "cut-client"},
			{When: WhenAfter, After: 2, Do: "start-client"},
			{When: WhenAfter, After: 23, Do: "heal-client"},
		},
		Sim:    simLock,
		Checks: lockChecks,
	},
	{
		Name: "host-loss-2osd",
		Doc: "Held out until its first run (2026-11-28), a development experiment since the model was fit to it. Another cluster: four " +
			"hosts of two OSDs, 48 PGs of 128 KiB objects, osd_heartbeat_grace 8 s, " +
			"mon_osd_down_out_interval 30 s. A host hangs (both daemons SIGSTOPped): reported after the grace by peers on two hosts, marked out, " +
			"its PGs backfill onto the other three hosts. Once every PG is clean the host resumes: its daemons find themselves marked down, " +
			"boot, are marked in, and the PGs map back.",
		Hosts: 4, OSDsPerHost: 2, PGs: 48, Size: 3, MinSize: 2, Objects: 16, ObjectKiB: 128, WritesPerSec: 3,
		Ceph: map[string]string{"osd_heartbeat_grace": "8", "mon_osd_down_out_interval": "30"},
		Script: []Step{
			{When: WhenTick, Do: "pause-host", Hosts: []int{3}, Detect: [2]float64{8, 11.5}},
			{When: WhenClean, After: 5, Do: "resume-host", Hosts: []int{3}},
		},
		Checks: hostLoss2OSDChecks,
	},
	{
		Name: "host-kill-5hosts-backfills2",
		Doc: "Held out until its first two runs (2026-11-28), a development experiment since its runs were read while the model's " +
			"peering spread was added. Another cluster: five hosts of one OSD, 40 PGs of 96 KiB objects, osd_max_backfills 2 (1 in every other " +
			"experiment), mon_osd_down_out_interval 25 s. A host dies (its OSD SIGKILLed), is marked out on the mon's tick, and CRUSH remaps " +
			"its PGs onto the four others, which backfill up to two PGs each at once. Once every PG is clean the daemon starts again and " +
			"the PGs map back. Why this one: the same family as hosts-out-backfill and host-loss-2osd (kill, out, remap, backfill, return) " +
			"varying what the development experiments hold fixed - the layout (five hosts), the data's volume and object size, the " +
			"down-out interval, and above all the backfill reservations, whose concurrency and throughput the development runs fit " +
			"with one reservation per OSD only.",
		Hosts: 5, OSDsPerHost: 1, PGs: 40, Size: 3, MinSize: 2, Objects: 20, ObjectKiB: 96, WritesPerSec: 3,
		Ceph: map[string]string{"osd_max_backfills": "2", "mon_osd_down_out_interval": "25"},
		Script: []Step{
			{When: WhenTick, Do: "kill-host", Hosts: []int{4}, Detect: [2]float64{0, 1}},
			{When: WhenClean, After: 5, Do: "start-host", Hosts: []int{4}},
		},
		Checks: hostKillBackfills2Checks,
	},
	{
		Name: "second-failure-5hosts-backfills2",
		Doc: "Held out until its first run (2026-11-28), which the frozen model failed (PG-seconds inactive during the hang: " +
			"124 simulated, 90 real, at most 122 allowed: the model backfilled at full speed through the hung OSD and reported its failure " +
			"2.7 s early); a development experiment since the stalled recovery and the report spread were added with it. " +
			"The second failure during a backfill on host-kill-5hosts-backfills2's " +
			"cluster: five hosts of one OSD, 40 PGs of 96 KiB objects, osd_max_backfills 2, mon_osd_down_out_interval 25 s. A host dies " +
			"(SIGKILL) and is marked out; once 40 % of its data has moved, a second host hangs (SIGSTOP) for 20 s. PGs whose backfill " +
			"target had no complete copy yet are below min_size 2: undersized+peered, and backfilled first (their priority is the " +
			"highest) while the host hangs. Why this one: second-failure-during-backfill's mechanisms - peering below min_size, " +
			"reservations by priority and preemption, the order in which PGs of equal priority backfill - under what it holds fixed: " +
			"two reservations per OSD, five hosts, the data's volume and object size, the share moved before the second failure and " +
			"the hang's length.",
		Hosts: 5, OSDsPerHost: 1, PGs: 40, Size: 3, MinSize: 2, Objects: 20, ObjectKiB: 96, WritesPerSec: 3,
		Ceph: map[string]string{"osd_max_backfills": "2", "mon_osd_down_out_interval": "25"},
		Script: []Step{
			{When: WhenTick, Do: "kill-host", Hosts: []int{4}, Detect: [2]float64{0, 1}},
			{When: WhenMoved, Fraction: 0.4, Do: "pause-host", Hosts: []int{3}},
			{When: WhenAfter, After: 20, Do: "resume-host", Hosts: []int{3}},
		},
		Checks: secondFailure5HostsChecks,
	},
	{
		Name:    "second-failure-4hosts-2osd",
		HeldOut: true,
		Doc: "Held out: declared before its first run, with the model, its parameters and the tolerances frozen (the stalled " +
			"recovery through an OSD that cannot answer, the report spread and the PG stats' count of the data moved included). " +
			"Four hosts of two OSDs, 64 PGs of 12 objects of 160 KiB, osd_heartbeat_grace 7 s. A host dies (both daemons " +
			"SIGKILLed) and both its OSDs are marked out; CRUSH maps every PG onto the three other hosts, one replica on each. Once " +
			"30 % of the data has moved a second host hangs (both daemons SIGSTOPped) for 25 s: its OSDs are reported by the two " +
			"remaining hosts, the only reporters there are; a PG whose replica on a running host is still a backfill target keeps " +
			"one complete copy in its acting set and is undersized+peered until the hung host returns. Why this one: the " +
			"second-failure mechanisms (peering below min_size, reservations by priority, the recovery stalled through a hung OSD, " +
			"the failure's report) where every experiment so far had one OSD per host or no second failure: two OSDs hang at once, " +
			"the reporters are exactly min_down_reporters, every PG has a replica on the hung host, and the grace, the object size, " +
			"the share moved before the hang and its length are new.",
		Hosts: 4, OSDsPerHost: 2, PGs: 64, Size: 3, MinSize: 2, Objects: 12, ObjectKiB: 160, WritesPerSec: 4,
		Ceph: map[string]string{"osd_heartbeat_grace": "7"},
		Script: []Step{
			{When: WhenTick, Do: "kill-host", Hosts: []int{3}, Detect: [2]float64{0, 1}},
			{When: WhenMoved, Fraction: 0.3, Do: "pause-host", Hosts: []int{2}},
			{When: WhenAfter, After: 25, Do: "resume-host", Hosts: []int{2}},
		},
		Checks: secondFailure4Hosts2OSDChecks,
	},
}

// lookup finds an experiment by name.
func lookup(name string) (*Experiment, bool) {
	for _, e := range Experiments {
		if e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// Lookup finds an experiment by name.
func Lookup(name string) (*Experiment, error) {
	if e, ok := lookup(name); ok {
		return e, nil
	}
	var n []string
	for _, e := range Experiments {
		n = append(n, e.Name)
	}
	sort.Strings(n)
	return nil, fmt.Errorf("unknown experiment %q (known: %v)", name, n)
}

// SameCluster reports whether two experiments can share a cluster.
func SameCluster(a, b *Experiment) bool {
	return a.Hosts == b.Hosts && a.OSDsPerHost == b.OSDsPerHost
}

// OSDs lists the OSD ids of host h.
func (e *Experiment) OSDs(h int) []int {
	ids := make([]int, e.OSDsPerHost)
	for i := range ids {
		ids[i] = h*e.OSDsPerHost + i
	}
	return ids
}

// DataMB is the pool's data before t0.
func (e *Experiment) DataMB() float64 {
	return float64(e.PGs*e.Objects*e.ObjectKiB) / 1024
}

// ClientKind is what a client experiment's real run needs: "blocklist"
// (a writing client of its own address), "lock" (a lock holder and a
// taker), or "" (the background writer only).
func (e *Experiment) ClientKind() string {
	switch e.Sim {
	case simBlocklist:
		return "blocklist"
	case simLock:
		return "lock"
	}
	return ""
}
