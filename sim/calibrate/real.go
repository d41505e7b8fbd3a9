//go:build linux

package calibrate

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fenceproof/fenceproof/ceph/cluster"
)

// RunReal runs the experiment on a real single-node Ceph (ceph/cluster:
// Debian's daemons in a network namespace, as root) and returns what it
// observed: the events, on the wall clock from the OSD's kill, and the
// objects recovered.
func RunReal(ctx context.Context, e Experiment, log *slog.Logger) (*Observed, error) {
	cfg := map[string]string{}
	for k, v := range e.cephConfig() {
		cfg[k] = v
	}
	c, err := cluster.Start(ctx, cluster.Options{OSDs: e.OSDs, Mgr: true, ObjectStore: "bluestore", PGs: e.PGs, PoolSize: e.PoolSize,
		Config: cfg, Install: true, Log: log, Timeout: 4 * time.Minute})
	if err != nil {
		return nil, fmt.Errorf("starting Ceph: %w", err)
	}
	defer c.Stop()
	if _, err := c.Ceph(ctx, "osd", "pool", "set", c.Pool(), "min_size", strconv.Itoa(e.MinSize)); err != nil {
		return nil, err
	}
	if err := c.WaitHealthy(ctx); err != nil {
		return nil, err
	}
	obj := filepath.Join(c.Dir(), "object")
	if err := os.WriteFile(obj, make([]byte, e.ObjectKiB*1024), 0o600); err != nil {
		return nil, err
	}
	put := func(name string) error {
		_, err := c.Exec(ctx, "rados", "-c", c.AdminConf(), "-p", c.Pool(), "put", name, obj)
		return err
	}
	for i := 0; i < e.ObjectsBefore; i++ {
		if err := put(fmt.Sprintf("before-%d", i)); err != nil {
			return nil, err
		}
	}
	if err := c.WaitHealthy(ctx); err != nil {
		return nil, err
	}
	recovered0, err := recoveredObjects(ctx, c)
	if err != nil {
		return nil, err
	}
	ob := &Observed{Source: "real Ceph (" + cephVersion(ctx, c) + ")"}
	w := watcher{c: c, osd: e.Victim, ob: ob}
	start := time.Now()
	ob.add(EvKill, 0)
	if err := c.KillOSD(e.Victim); err != nil {
		return nil, err
	}
	w.t0 = start
	// writes while the OSD is away, four at a time (each rados process
	// authenticates anew), while the watcher polls
	errs := make(chan error, e.ObjectsDuring)
	sem := make(chan struct{}, 4)
	for i := 0; i < e.ObjectsDuring; i++ {
		go func(i int) {
			sem <- struct{}{}
			errs <- put(fmt.Sprintf("during-%d", i))
			<-sem
		}(i)
	}
	for done := 0; done < e.ObjectsDuring; {
		select {
		case err := <-errs:
			if err != nil {
				return nil, err
			}
			done++
		case <-time.After(e.Poll):
			w.poll(ctx)
		}
	}
	for time.Since(start) < e.Outage {
		w.poll(ctx)
		time.Sleep(e.Poll)
	}
	ob.add(EvRestart, time.Since(start))
	if err := c.StartOSD(ctx, e.Victim); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(e.Outage + 5*time.Minute)
	for !w.healthyAgain && time.Now().Before(deadline) {
		w.poll(ctx)
		time.Sleep(e.Poll)
	}
	if !w.healthyAgain {
		return nil, fmt.Errorf("no HEALTH_OK within %s of the restart: %s", 5*time.Minute, w.last)
	}
	recovered1, err := recoveredObjects(ctx, c)
	if err != nil {
		return nil, err
	}
	ob.ObjectsRecovered = recovered1 - recovered0
	return ob, nil
}

// watcher polls `ceph status` and `ceph osd dump` and records the
// victim OSD's transitions and the health's.
type watcher struct {
	c            *cluster.Cluster
	osd          int
	ob           *Observed
	t0           time.Time
	up, in       bool
	degraded     bool
	restarted    bool
	healthyAgain bool
	last         string
	started      bool
}

func (w *watcher) poll(ctx context.Context) {
	if !w.started {
		w.up, w.in, w.started = true, true, true
	}
	at := time.Since(w.t0)
	out, err := w.c.Ceph(ctx, "osd", "dump")
	if err == nil {
		var d struct {
			OSDs []struct {
				OSD int `json:"osd"`
				Up  int `json:"up"`
				In  int `json:"in"`
			} `json:"osds"`
		}
		if json.Unmarshal(out, &d) == nil {
			for _, o := range d.OSDs {
				if o.OSD != w.osd {
					continue
				}
				switch {
				case w.up && o.Up == 0:
					w.ob.add(EvDown, at)
				case !w.up && o.Up == 1:
					w.ob.add(EvUp, at)
				}
				switch {
				case w.in && o.In == 0:
					w.ob.add(EvOut, at)
				case !w.in && o.In == 1:
					w.ob.add(EvIn, at)
				}
				w.up, w.in = o.Up == 1, o.In == 1
			}
		}
	}
	st, err := w.c.Status(ctx)
	if err != nil {
		return
	}
	w.last = st.Summary()
	_, deg := st.Health.Checks["PG_DEGRADED"]
	if deg && !w.degraded {
		w.ob.add(EvDegraded, at)
	}
	w.degraded = w.degraded || deg
	if w.ob.has(EvRestart) && st.Healthy(0) && !w.healthyAgain {
		w.healthyAgain = true
		w.ob.add(EvHealthOK, at)
	}
}

// recoveredObjects sums the PGs' num_objects_recovered.
func recoveredObjects(ctx context.Context, c *cluster.Cluster) (int, error) {
	out, err := c.Ceph(ctx, "pg", "dump", "pgs")
	if err != nil {
		return 0, err
	}
	var d struct {
		PGStats []struct {
			StatSum struct {
				Recovered int `json:"num_objects_recovered"`
			} `json:"stat_sum"`
		} `json:"pg_stats"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return 0, fmt.Errorf("ceph pg dump pgs: %v", err)
	}
	n := 0
	for _, p := range d.PGStats {
		n += p.StatSum.Recovered
	}
	return n, nil
}

func cephVersion(ctx context.Context, c *cluster.Cluster) string {
	out, err := c.Exec(ctx, "ceph", "--version")
	if err != nil {
		return "unknown version"
	}
	if f := splitFields(string(out)); len(f) >= 3 {
		return "Ceph " + f[2]
	}
	return string(out)
}
