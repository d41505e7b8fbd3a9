//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/ceph/cluster"
)

func init() {
	register("ceph", "a real single-node Ceph from Debian's packages: ceph up|status|client|cmd|down", runCeph)
}

// defaultCephDir is where `fenceproof ceph up` keeps its cluster.
const defaultCephDir = "/run/fenceproof-ceph"

const cephUsage = `usage: fenceproof ceph <up|serve|status|client|cmd|down> [flags]

  up      start a cluster (mons, optional mgr, OSDs in host buckets) in --dir and a private
          network namespace; installs Ceph's Debian packages when root
  serve   start a cluster in this network namespace bound to --addr (a
          container: the pod's address), stay in the foreground until
          SIGTERM, then stop it
  status  print the cluster's health (ceph status)
  client  NAME: a client with its own network namespace and address;
          --caps writer (default) or fencer; prints its namespace, address,
          ceph.conf and keyring
  cmd     ARGS...: run a ceph command as client.admin (JSON output)
  down    stop every daemon, delete the namespaces and --dir`

func runCeph(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, cephUsage)
		return helpOrUsageError(args)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("ceph "+sub, flag.ContinueOnError)
	dir := fs.String("dir", defaultCephDir, "the cluster's private directory")
	var o cluster.Options
	sets := map[string]string{}
	caps := "writer"
	var addr, ready string
	if sub == "up" || sub == "serve" {
		fs.IntVar(&o.OSDs, "osds", 1, fmt.Sprintf("OSDs (1-%d)", cluster.MaxOSDs))
		fs.IntVar(&o.Hosts, "hosts", 0, "CRUSH host buckets the OSDs are spread over, the pool's failure domain (0: one host, failure domain osd)")
		fs.IntVar(&o.Mons, "mons", 1, "mons (1 or 3)")
		fs.BoolVar(&o.Mgr, "mgr", sub == "up", "start ceph-mgr (PG statistics, HEALTH_OK)")
		fs.StringVar(&o.ObjectStore, "objectstore", "memstore", "memstore | bluestore")
		fs.IntVar(&o.PoolSize, "pool-size", 1, "replicas of the client pool")
		fs.Var(&kvFlag{m: &sets}, "set", "extra ceph.conf [global] option key=value (repeatable), e.g. mon_osd_down_out_interval=10")
		fs.DurationVar(&o.Timeout, "timeout", 3*time.Minute, "bootstrap budget")
		fs.StringVar(&o.ImportKeyring, "import-keyring", "", "keyring of more users (with caps) to add once the mon runs")
	}
	if sub == "serve" {
		fs.StringVar(&addr, "addr", "", "the address the daemons bind (required)")
		fs.StringVar(&ready, "ready-file", "", "file written once the cluster takes writes (a readiness probe reads it)")
	}
	if sub == "client" {
		fs.StringVar(&caps, "caps", caps, "writer (read the maps, write the pool) | fencer (change the blocklist, list sessions)")
	}
	rest := args
	if sub == "client" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		rest = args[1:]
	}
	if sub == "cmd" {
		// Everything after the flags is the ceph command.
		if err := fs.Parse(args); err != nil {
			return 2
		}
		rest = nil
	} else if code, ok := parseFlags(fs, rest); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "fenceproof ceph %s: %v\n", sub, err)
		if errors.Is(err, cluster.ErrNoCluster) {
			return 3
		}
		return 1
	}
	if sub == "serve" {
		return cephServe(ctx, o, *dir, addr, ready, sets, log)
	}
	if sub == "up" {
		o.Dir, o.Config, o.Install, o.Log = *dir, sets, true, log
		c, err := cluster.Start(ctx, o)
		if err != nil {
			return fail(err)
		}
		fmt.Printf("dir %s\nnetns %s\nmon_host %s\nconf %s\nkeyring %s\npool %s\n", c.Dir(), c.NetNS(), c.MonHost(), c.AdminConf(), c.AdminKeyring(), c.Pool())
		return 0
	}
	c, err := cluster.Attach(*dir)
	if err != nil {
		return fail(err)
	}
	c.SetLogger(log)
	switch sub {
	case "status":
		st, err := c.Status(ctx)
		if err != nil {
			return fail(err)
		}
		fmt.Println(st.Summary())
		if st.Health.Status != "HEALTH_OK" {
			return 1
		}
		return 0
	case "client":
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			return fail(errors.New("want a client name"))
		}
		var cc []string
		switch caps {
		case "writer":
			cc = cluster.WriterCaps(c.Pool())
		case "fencer":
			cc = cluster.FencerCaps()
		default:
			return fail(fmt.Errorf("--caps %q: want writer or fencer", caps))
		}
		ci, err := c.AddClient(ctx, args[0], cc)
		if err != nil {
			return fail(err)
		}
		fmt.Printf("entity %s\nnetns %s\naddr %s\nconf %s\nkeyring %s\n", ci.Entity(), ci.NetNS, ci.Addr, ci.Conf, ci.Keyring)
		return 0
	case "cmd":
		out, err := c.Ceph(ctx, fs.Args()...)
		os.Stdout.Write(out)
		if err != nil {
			return fail(err)
		}
		return 0
	case "down":
		if err := c.Stop(); err != nil {
			return fail(err)
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, cephUsage)
	return 2
}

// cephServe runs a cluster in the caller's network namespace until ctx
// ends (SIGTERM). The daemons daemonize: in a container, run it under an
// init that reaps them (the Ceph image's tini).
func cephServe(ctx context.Context, o cluster.Options, dir, addr, ready string, sets map[string]string, log *slog.Logger) int {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof ceph serve: --addr: want the address the daemons bind")
		return 2
	}
	o.Dir, o.Config, o.HostAddr, o.Log = dir, sets, a, log
	c, err := cluster.Start(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof ceph serve:", err)
		return 1
	}
	if ready != "" {
		if err := os.WriteFile(ready, []byte(c.MonHost()+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof ceph serve:", err)
		}
	}
	fmt.Printf("ceph serving: mon_host %s, conf %s\n", c.MonHost(), c.AdminConf())
	<-ctx.Done()
	if ready != "" {
		os.Remove(ready)
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof ceph serve: stop:", err)
		return 1
	}
	return 0
}
