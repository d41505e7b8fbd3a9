package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/csiproxy/conformance"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/csiproxy/simhost"
	"github.com/fenceproof/fenceproof/rulebook"
)

func init() {
	register("csiproxy-sim", "serve a simulated Windows host's csi-proxy API groups on unix sockets", runCSIProxySim)
	register("csiproxy-sanity", "run the csi-proxy conformance suite against an endpoint (or a simulated host)", runCSIProxySanity)
}

// csiproxySimFlags are the flags both commands take to configure a simulated host.
type csiproxySimFlags struct {
	plugins, pods, symlink string
	ipsec                  bool
	faults                 listFlag
}

func (f *csiproxySimFlags) register(fs *flag.FlagSet, prefix string) {
	if prefix == "" { // csiproxy-sanity has these flags for the suite and passes them on
		fs.StringVar(&f.plugins, "kubelet-csi-plugins-path", restrict.DefaultPluginsPath, "csi-proxy's kubelet-csi-plugins-path")
		fs.StringVar(&f.pods, "kubelet-pod-path", restrict.DefaultPodPath, "csi-proxy's kubelet-pod-path")
	}
	fs.StringVar(&f.symlink, prefix+"symlink-in-pods", simhost.DefaultSymlinkInPods, "a symbolic link the simulated host makes below the pod path at start")
	fs.BoolVar(&f.ipsec, prefix+"ipsec", false, "the simulated initiator uses IPsec (mutual CHAP secrets of 1-16 bytes)")
	var names []string
	for _, n := range simhost.FaultNames {
		names = append(names, n.Name)
	}
	fs.Var(&f.faults, prefix+"fault", "inject a fault into the simulated host (repeatable): "+strings.Join(names, ", "))
}

func (f *csiproxySimFlags) config(log *slog.Logger) (simhost.Config, error) {
	faults, err := simhost.ParseFaults(f.faults)
	if err != nil {
		return simhost.Config{}, err
	}
	for name, p := range map[string]string{"kubelet-csi-plugins-path": f.plugins, "kubelet-pod-path": f.pods} {
		if err := restrict.New().Path(name, p+`\x`); err != nil {
			return simhost.Config{}, fmt.Errorf("--%s %q: %v", name, p, err)
		}
	}
	return simhost.Config{PluginsPath: f.plugins, PodPath: f.pods, SymlinkInPods: f.symlink, IPsec: f.ipsec, Faults: faults, Log: log}, nil
}

func runCSIProxySim(args []string) int {
	fs := flag.NewFlagSet("csiproxy-sim", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the unix sockets, one per API group and version, named like csi-proxy's pipes (required)")
	verbose := fs.Bool("v", false, "log every call (never request fields: they carry passwords and secrets)")
	var sf csiproxySimFlags
	sf.register(fs, "")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: fenceproof csiproxy-sim --dir DIR [flags]

Serves disk v1, filesystem v1beta1 and v1, iscsi v1alpha2, smb v1beta1 and
v1, system v1alpha1 and volume v1 on DIR/csi-proxy-<group>-<version>, backed
by an in-memory Windows host, until SIGINT or SIGTERM. Exit status 2 on bad flags.

flags:`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "fenceproof csiproxy-sim: --dir is required and no arguments are taken")
		return 2
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	cfg, err := sf.config(log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sim: %v\n", err)
		return 2
	}
	sim := simhost.New(cfg)
	if err := sim.Serve(*dir); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sim: %v\n", err)
		return 1
	}
	log.Info("serving", "dir", *dir, "faults", strings.Join(sf.faults, ","))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	sim.Stop()
	return 0
}

func runCSIProxySanity(args []string) int {
	fs := flag.NewFlagSet("csiproxy-sanity", flag.ContinueOnError)
	cfg := conformance.Defaults()
	var (
		endpointF = fs.String("endpoint", "", "unix:///dir (sockets named csi-proxy-<group>-<version>) or npipe://./pipe/ on Windows; default: start a simulated host")
		symlink   = fs.String("symlink-in-pods", "", "an existing symbolic link below the pod path, for LINK-006 (default with the simulated host: its own)")
		scratch   = fs.Int("scratch-disk", -1, "a disk number the suite may take offline, partition and format (DESTROYS ITS DATA); default with the simulated host: 1")
		smbShare  = fs.String("smb-share", "", `a reachable \\server\share for SMBAPI-001 (credentials from CSIPROXY_SMB_USER / CSIPROXY_SMB_PASSWORD)`)
		portal    = fs.String("iscsi-portal", "", "a reachable iSCSI portal address for ISCSIAPI-001 (changes the node's mutual CHAP secret)")
		timeout   = fs.Duration("rpc-timeout", cfg.RPCTimeout, "deadline of every call")
		labels    = fs.String("label-filter", "", "Ginkgo label filter, e.g. 'PATH-004' or 'MUST'")
		strict    = fs.Bool("strict", false, "SHOULD rules fail the run instead of warning")
		reports   = fs.String("reports", "reports", "directory for csiproxy.json, csiproxy.md, csiproxy.html and csiproxy-junit.xml")
		verbose   = fs.Bool("v", false, "print every spec")
		noColor   = fs.Bool("no-color", false, "no ANSI colours")
		listRules = fs.Bool("list-rules", false, "print every rule the label filter selects and exit")
		sf        csiproxySimFlags
	)
	sf.register(fs, "sim-")
	fs.StringVar(&cfg.PluginsPath, "kubelet-csi-plugins-path", cfg.PluginsPath, "the host's kubelet-csi-plugins-path")
	fs.StringVar(&cfg.PodPath, "kubelet-pod-path", cfg.PodPath, "the host's kubelet-pod-path")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: fenceproof csiproxy-sanity [--endpoint unix:///dir | npipe://./pipe/] [flags]

Runs the csi-proxy conformance rules. Without --endpoint it starts a
simulated Windows host in this process (--sim-fault breaks it on purpose).
Exit status: 0 conforms (no MUST rule failed, nor a SHOULD rule with
--strict), 1 does not, 2 bad flags.

flags:`)
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *listRules {
		rules, err := conformance.SelectRules(*labels)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: %v\n", err)
			return rulebook.ExitUsage
		}
		for _, r := range rules {
			fmt.Printf("%-13s %-6s %s\n", r.ID, r.Level, r.Title)
		}
		return rulebook.ExitConforms
	}
	if err := (rulebook.Selection{LabelFilter: *labels}).Check(); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: %v\n", err)
		return rulebook.ExitUsage
	}
	sf.plugins, sf.pods = cfg.PluginsPath, cfg.PodPath
	cfg.Endpoint, cfg.SymlinkInPods, cfg.ScratchDisk, cfg.SMBShare, cfg.ISCSIPortal, cfg.RPCTimeout =
		*endpointF, *symlink, *scratch, *smbShare, *portal, *timeout
	cfg.SMBUser, cfg.SMBPassword = os.Getenv("CSIPROXY_SMB_USER"), os.Getenv("CSIPROXY_SMB_PASSWORD")
	if cfg.Endpoint == "" {
		simCfg, err := sf.config(slog.New(slog.DiscardHandler))
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: %v\n", err)
			return 2
		}
		dir, err := os.MkdirTemp("", "csiproxy-sim-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		sim := simhost.New(simCfg)
		if err := sim.Serve(dir); err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: %v\n", err)
			return 1
		}
		defer sim.Stop()
		cfg.Endpoint = "unix://" + dir
		if cfg.SymlinkInPods == "" {
			cfg.SymlinkInPods = simCfg.SymlinkInPods
		}
		if cfg.ScratchDisk < 0 {
			cfg.ScratchDisk = 1
		}
		if cfg.SMBShare == "" {
			cfg.SMBShare, cfg.SMBUser, cfg.SMBPassword = `\\fileserver.example.com\share`, "fenceproof", "sim-password"
		}
		if cfg.ISCSIPortal == "" {
			cfg.ISCSIPortal = "192.0.2.10"
		}
		fmt.Printf("csiproxy-sanity: simulated host on %s (faults: %s)\n", dir, strings.Join(sf.faults, ",")+map[bool]string{true: "none"}[len(sf.faults) == 0])
	} else if len(sf.faults) > 0 {
		fmt.Fprintln(os.Stderr, "fenceproof csiproxy-sanity: --sim-fault applies to the simulated host only; drop --endpoint")
		return 2
	}
	start := time.Now()
	res, err := conformance.Run(cfg, conformance.RunOptions{
		LabelFilter: *labels, JUnitPath: filepath.Join(*reports, "csiproxy-junit.xml"), Verbose: *verbose,
		NoColor: *noColor || !isTerminal(os.Stdout), Strict: *strict,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: %v\n", err)
		return rulebook.ExitUsage
	}
	paths, err := res.WriteReports(*reports)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: reports: %v\n", err)
		return rulebook.ExitNotConform
	}
	fmt.Printf("\ncsiproxy-sanity: %s against %s (%s)\n", res.Summary(), res.Endpoint, time.Since(start).Round(time.Millisecond))
	res.WriteAttention(os.Stdout)
	fmt.Printf("reports: %s %v\nverdict: %s\n", filepath.Join(*reports, "csiproxy-junit.xml"), paths, res.Verdict)
	return res.Verdict.ExitCode()
}
