//go:build ceph && linux

package cephrun

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/fenceproof/fenceproof/ceph/cluster"
	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/sim/calibrate"
)

// run is one experiment on a running cluster.
type run struct {
	e     *calibrate.Experiment
	c     *cluster.Cluster
	admin *librados.Conn
	log   *slog.Logger

	pool   string
	poolID int
	t0     time.Time
	ticks  ticks
	obs    *observer
	bg     *writer
	client clientExp // the client experiments' clients

	mu      sync.Mutex
	actions []calibrate.Action
	// placement is the PGs' acting sets at t0 (the timeline's Placement)
	placement [][]int
}

// since is t on the experiment's clock.
func (x *run) since(t time.Time) float64 { return t.Sub(x.t0).Seconds() }

func (x *run) cmd(args map[string]any) ([]byte, error) {
	raw, _ := json.Marshal(args)
	out, status, err := x.admin.MonCommand(raw)
	if err != nil {
		return nil, fmt.Errorf("%v: %w (%s)", args["prefix"], err, status)
	}
	return out, nil
}

func (x *run) run(ctx context.Context) (*calibrate.Timeline, error) {
	e := x.e
	x.pool = e.Name
	if err := x.createPool(ctx); err != nil {
		return nil, err
	}
	if err := x.fill(ctx); err != nil {
		return nil, err
	}
	x.obs = newObserver(x)
	x.obs.start(ctx)
	defer x.obs.stop()
	if err := x.obs.waitClean(ctx, time.Time{}, 4*time.Minute); err != nil {
		return nil, fmt.Errorf("before t0: %w", err)
	}
	var err error
	if x.ticks, err = measureTicks(ctx, x.c, x.admin); err != nil {
		return nil, err
	}
	if err := x.client.setup(ctx, x); err != nil {
		return nil, err
	}
	defer within(30*time.Second, x.client.stop)
	if x.bg, err = startWriter(ctx, x.c, x.pool, e.Objects*e.PGs, e.ObjectKiB, e.WritesPerSec); err != nil {
		return nil, err
	}
	defer x.bg.stop()
	// the writer runs, and the cluster is settled: clean for a few seconds,
	// not just at one sample (a PG caught not clean at t0 reads as the
	// experiment's own effect, and its return to clean as the end of it)
	time.Sleep(3 * time.Second)
	if err := x.obs.waitSettled(ctx, 5*time.Second, 2*time.Minute); err != nil {
		x.log.Warn("calibrate: starting on a cluster that is not settled", "experiment", e.Name, "why", err.Error())
	}
	displaced := 0.0
	var last time.Time
	for i, s := range e.Script {
		at, err := x.wait(ctx, i, s, last, displaced)
		if err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, s.Do, err)
		}
		if i == 0 {
			x.t0 = at
			displaced = x.obs.displacedMB(s.Hosts)
			x.placement = x.obs.placement()
		}
		last = time.Now()
		if err := x.do(ctx, s); err != nil {
			return nil, fmt.Errorf("step %d (%s): %w", i+1, s.Do, err)
		}
	}
	if err := x.obs.waitClean(ctx, last, 8*time.Minute); err != nil {
		return nil, fmt.Errorf("after the last step: %w", err)
	}
	time.Sleep(5 * time.Second)
	x.bg.stop()
	if !within(30*time.Second, x.client.stop) {
		x.log.Warn("calibrate: the clients did not stop within 30 s; going on")
	}
	x.obs.stop()
	return x.timeline(ctx)
}

// marksDown are the actions whose hosts' OSDs the mon marks down.
var marksDown = map[string]bool{"kill-host": true, "pause-host": true, "power-off": true}

// wait waits for step i's condition and returns when it acts.
func (x *run) wait(ctx context.Context, i int, s calibrate.Step, last time.Time, displacedMB float64) (time.Time, error) {
	sleepUntil := func(t time.Time) error {
		select {
		case <-time.After(time.Until(t)):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch s.When {
	case calibrate.WhenTick:
		// the down-out deadline mid-way between two ticks for any delay in
		// Detect
		iv, _ := strconv.ParseFloat(x.e.CephConfig()["mon_osd_down_out_interval"], 64)
		lead := (s.Detect[0]+s.Detect[1])/2 + iv
		t := x.ticks.midway(time.Now().Add(2*time.Second), lead)
		return t, sleepUntil(t)
	case calibrate.WhenAt:
		t := x.t0.Add(seconds(s.After))
		if i == 0 {
			t = time.Now()
		}
		return t, sleepUntil(t)
	case calibrate.WhenAfter:
		t := last.Add(seconds(s.After))
		return t, sleepUntil(t)
	case calibrate.WhenClean:
		// clean after the previous step took effect: a host it stopped is
		// marked down first (a cluster still settling from its setup may
		// look clean again before the grace, and the step would come
		// before the fault it waits on)
		since := last
		if i > 0 && marksDown[x.e.Script[i-1].Do] {
			var osds []int
			for _, h := range x.e.Script[i-1].Hosts {
				osds = append(osds, x.e.OSDs(h)...)
			}
			var err error
			if since, err = x.obs.waitDown(ctx, osds, 2*time.Minute); err != nil {
				return time.Time{}, err
			}
		}
		if err := x.obs.waitClean(ctx, since, 8*time.Minute); err != nil {
			return time.Time{}, err
		}
		t := time.Now().Add(seconds(s.After))
		return t, sleepUntil(t)
	case calibrate.WhenMoved:
		want := s.Fraction * displacedMB
		if err := x.obs.waitMoved(ctx, want, 8*time.Minute); err != nil {
			return time.Time{}, err
		}
		return time.Now(), nil
	}
	return time.Time{}, fmt.Errorf("unknown condition %d", s.When)
}

// within runs f and reports whether it returned within limit (else it is
// left running).
func within(limit time.Duration, f func()) bool {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		return false
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// do performs a step and records it as an action.
func (x *run) do(ctx context.Context, s calibrate.Step) error {
	a := calibrate.Action{At: x.since(time.Now()), Do: s.Do, Hosts: s.Hosts}
	x.log.Info("calibrate: action", "do", s.Do, "hosts", s.Hosts, "at", fmt.Sprintf("%.2f", a.At))
	var err error
	osds := func(f func(int) error) {
		for _, h := range s.Hosts {
			for _, id := range x.e.OSDs(h) {
				if e := f(id); e != nil && err == nil {
					err = e
				}
			}
		}
	}
	switch s.Do {
	case "pause-host":
		osds(x.c.PauseOSD)
	case "resume-host":
		osds(x.c.ResumeOSD)
	case "kill-host":
		osds(x.c.KillOSD)
	case "start-host":
		osds(func(id int) error { return x.c.StartOSD(ctx, id) })
	case "power-off":
		for _, h := range s.Hosts {
			if h < calibrate.Mons {
				if e := x.c.KillMonID(x.c.Mons()[h]); e != nil {
					err = e
				}
			}
		}
		osds(x.c.KillOSD)
	case "power-on":
		for _, h := range s.Hosts {
			if h < calibrate.Mons {
				id := x.c.Mons()[h]
				go func() {
					if e := x.c.StartMonID(ctx, id); e != nil {
						x.log.Warn("calibrate: starting a mon", "mon", id, "err", e)
					}
				}()
			}
		}
		osds(func(id int) error { return x.c.StartOSD(ctx, id) })
	case "blocklist-add", "blocklist-rm", "cut-client", "heal-client", "start-client":
		a.Client, a.Returned, err = x.client.do(ctx, x, s.Do)
	default:
		err = fmt.Errorf("unknown action %q", s.Do)
	}
	x.mu.Lock()
	x.actions = append(x.actions, a)
	x.mu.Unlock()
	return err
}

// createPool creates the experiment's pool on the host rule.
func (x *run) createPool(ctx context.Context) error {
	e := x.e
	for _, args := range []map[string]any{
		{"prefix": "osd pool create", "pool": x.pool, "pg_num": e.PGs, "pgp_num": e.PGs, "pool_type": "replicated", "rule": "by-host"},
		{"prefix": "osd pool set", "pool": x.pool, "var": "size", "val": strconv.Itoa(e.Size), "yes_i_really_mean_it": true},
		{"prefix": "osd pool set", "pool": x.pool, "var": "min_size", "val": strconv.Itoa(e.MinSize)},
		{"prefix": "osd pool application enable", "pool": x.pool, "app": "rados"},
	} {
		if _, err := x.cmd(args); err != nil {
			return err
		}
	}
	id, err := x.admin.GetPoolByName(x.pool)
	if err != nil {
		return err
	}
	x.poolID = int(id)
	return nil
}

// fill writes the pool's objects, eight at a time.
func (x *run) fill(ctx context.Context) error {
	io, err := x.admin.OpenIOContext(x.pool)
	if err != nil {
		return err
	}
	defer io.Destroy()
	n := x.e.Objects * x.e.PGs
	data := make([]byte, x.e.ObjectKiB*1024)
	rand.Read(data)
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- io.WriteFull(objName(i), data)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			return fmt.Errorf("filling the pool: %w", err)
		}
	}
	return ctx.Err()
}

func objName(i int) string { return "obj-" + strconv.Itoa(i) }

// restore brings the cluster back for the next experiment: every daemon
// running, up and in, no blocklist entry, the experiment's pool gone.
func (x *run) restore(ctx context.Context) error {
	for _, id := range x.c.Mons() {
		x.c.ResumeMonID(id)
	}
	for _, id := range x.c.OSDs() {
		x.c.ResumeOSD(id)
		if !x.c.OSDRunning(id) {
			if err := x.c.StartOSD(ctx, id); err != nil {
				return err
			}
		}
	}
	x.cmd(map[string]any{"prefix": "osd blocklist clear"})
	if _, err := x.cmd(map[string]any{"prefix": "osd pool rm", "pool": x.pool, "pool2": x.pool, "yes_i_really_really_mean_it": true}); err != nil {
		return err
	}
	deadline := time.Now().Add(6 * time.Minute)
	for time.Now().Before(deadline) {
		if st, err := x.c.Status(ctx); err == nil && st.Healthy(0) {
			return nil
		}
		time.Sleep(2 * time.Second)
	}
	return fmt.Errorf("no HEALTH_OK within 6 minutes")
}

// timeline assembles what the run recorded.
func (x *run) timeline(ctx context.Context) (*calibrate.Timeline, error) {
	t := &calibrate.Timeline{Experiment: x.e.Name, Started: x.t0.UTC().Format(time.RFC3339)}
	t.TickPhase = math.Round(x.ticks.next(x.t0).Sub(x.t0).Seconds()*1000) / 1000
	x.mu.Lock()
	t.Actions = slices.Clone(x.actions)
	x.mu.Unlock()
	clog, err := x.clusterLog(ctx)
	if err != nil {
		return nil, err
	}
	t.Events = append(t.Events, clog...)
	t.Events = append(t.Events, x.obs.events()...)
	t.Samples = x.obs.samples()
	t.Writes = x.bg.bins(x.t0)
	t.Placement = x.placement
	t.Events = append(t.Events, x.client.events(x)...)
	calibrate.Finish(t)
	return t, nil
}
