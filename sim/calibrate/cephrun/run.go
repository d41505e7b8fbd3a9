//go:build ceph && linux

// Package cephrun runs sim/calibrate's experiments on a real Ceph: Debian's
// Pacific daemons started by ceph/cluster in a network namespace, several
// OSDs as CRUSH hosts, three mons and a mgr. It watches the cluster through
// go-ceph (the mon's OSD map, the mgr's PG stats), the cluster log and the
// leader mon's tick, drives the experiment's script (SIGSTOP, SIGKILL and
// restarts of daemons, blocklist changes, a client's network cut), writes
// in the background, and returns each experiment's timeline. It needs
// root and librados (build tag ceph: bin/fenceproof-ceph).
package cephrun

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/ceph/cluster"
	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/sim/calibrate"
)

// Run runs the experiments, each group that shares a layout and Ceph
// settings on one cluster (a pool of its own per experiment), and hands
// each real timeline to done as soon as its experiment ends.
func Run(ctx context.Context, exps []*calibrate.Experiment, log *slog.Logger, done func(*calibrate.Timeline) error) error {
	for i := 0; i < len(exps); {
		j := i + 1
		for j < len(exps) && calibrate.SameCluster(exps[i], exps[j]) && maps.Equal(exps[i].CephConfig(), exps[j].CephConfig()) {
			j++
		}
		if err := runGroup(ctx, exps[i:j], log, done); err != nil {
			return err
		}
		i = j
	}
	return nil
}

func runGroup(ctx context.Context, exps []*calibrate.Experiment, log *slog.Logger, done func(*calibrate.Timeline) error) error {
	e := exps[0]
	cfg := e.CephConfig()
	cfg["mon_allow_pool_delete"] = "true"
	log.Info("calibrate: starting a cluster", "hosts", e.Hosts, "osds_per_host", e.OSDsPerHost, "experiments", len(exps))
	t0 := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{OSDs: e.Hosts * e.OSDsPerHost, Hosts: e.Hosts, Mons: calibrate.Mons, Mgr: true,
		ObjectStore: "bluestore", PoolSize: e.Size, Config: cfg, Install: true, Log: log, Timeout: 8 * time.Minute})
	if err != nil {
		return fmt.Errorf("starting Ceph: %w", err)
	}
	defer c.Stop()
	log.Info("calibrate: cluster healthy", "took", time.Since(t0).Round(time.Second))
	admin, err := librados.Dial(librados.Options{Conf: c.AdminConf(), NetNS: c.NetNSPath(), MonTimeout: 5 * time.Second, OSDTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer admin.Shutdown()
	version := cephVersion(ctx, c)
	for _, e := range exps {
		log.Info("calibrate: experiment", "name", e.Name, "held_out", e.HeldOut)
		x := &run{e: e, c: c, admin: admin, log: log.With("experiment", e.Name)}
		t, err := x.run(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		t.Source = "real Ceph " + version
		t.Machine = machine()
		t.Config = e.CephConfig()
		if err := done(t); err != nil {
			return err
		}
		if err := x.restore(ctx); err != nil {
			return fmt.Errorf("%s: restoring the cluster: %w", e.Name, err)
		}
	}
	return nil
}

// machine describes this machine: cores, memory, load when the
// experiment ended.
func machine() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	l := "?"
	if len(f) > 0 {
		l = f[0]
	}
	return fmt.Sprintf("%d cores, load average %s at its end", runtime.NumCPU(), l)
}

func cephVersion(ctx context.Context, c *cluster.Cluster) string {
	out, err := c.Exec(ctx, "ceph", "--version")
	if err != nil {
		return "(unknown version)"
	}
	if f := strings.Fields(string(out)); len(f) >= 3 {
		return f[2]
	}
	return strings.TrimSpace(string(out))
}
