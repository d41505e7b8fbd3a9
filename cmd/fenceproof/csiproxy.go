package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/csiproxy/conformance"
	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/csiproxy/simhost"
	"github.com/fenceproof/fenceproof/csiproxy/simhost/fault"
	"github.com/fenceproof/fenceproof/rulebook"
)

func init() {
	register("csiproxy-sim", "serve a simulated Windows host's csi-proxy API groups on unix sockets", runCSIProxySim)
	register("csiproxy-sanity", "run the csi-proxy conformance suite against an endpoint (or a simulated host)", runCSIProxySanity)
}

// csiproxySimFlags are the flags both commands take to configure a simulated host.
type csiproxySimFlags struct {
	plugins, pods string
	ipsec         bool
	faults        listFlag
}

func (f *csiproxySimFlags) register(fs *flag.FlagSet, prefix string) {
	if prefix == "" { // csiproxy-sanity has these flags for the suite and passes them on
		fs.StringVar(&f.plugins, "kubelet-csi-plugins-path", restrict.DefaultPluginsPath, "the KEP's kubelet-csi-plugins-path")
		fs.StringVar(&f.pods, "kubelet-pod-path", restrict.DefaultPodPath, "the KEP's kubelet-pod-path")
	}
	fs.BoolVar(&f.ipsec, prefix+"ipsec", false, "the simulated initiator uses IPsec (mutual CHAP secrets of 1-16 bytes)")
	fs.Var(&f.faults, prefix+"fault", "inject a fault into the simulated host (repeatable):"+fault.Usage())
}

func (f *csiproxySimFlags) config(log *slog.Logger) (simhost.Config, error) {
	faults, err := fault.Parse(f.faults)
	if err != nil {
		return simhost.Config{}, err
	}
	for name, p := range map[string]string{"kubelet-csi-plugins-path": f.plugins, "kubelet-pod-path": f.pods} {
		if err := restrict.New().Path(name, p+`\x`); err != nil {
			return simhost.Config{}, fmt.Errorf("--%s %q: %v", name, p, err)
		}
	}
	return simhost.Config{PluginsPath: f.plugins, PodPath: f.pods, IPsec: f.ipsec, Faults: faults, Log: log}, nil
}

// serveUntilSignal waits for SIGINT or SIGTERM, then stops.
func serveUntilSignal(stop func()) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	stop()
}

func runCSIProxySim(args []string) int {
	fs := flag.NewFlagSet("csiproxy-sim", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the unix sockets, one per API group and version, named like csi-proxy's pipes (required)")
	verbose := fs.Bool("v", false, "log every call (never request fields: they carry passwords and secrets)")
	var sf csiproxySimFlags
	sf.register(fs, "")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: fenceproof csiproxy-sim --dir DIR [flags]

Serves the 23 group versions of csi-proxy's client v1.1.3 on
DIR/csi-proxy-<group>-<version>, with csi-proxy v1's semantics and every
restriction enforced, backed by an in-memory Windows host, and the host's
record of Windows calls on DIR/fenceproof-host, until SIGINT or SIGTERM.
Exit status 2 on bad flags.

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
	serveUntilSignal(sim.Stop)
	return 0
}

// kubeletPaths are the KEP's two paths below csi-proxy v1's --kubelet-path.
func kubeletPaths(kubelet string) (plugins, pods string) {
	k := strings.TrimRight(kubelet, `\`)
	return k + `\plugins\kubernetes.io\csi`, k + `\pods`
}

func runCSIProxySanity(args []string) int {
	fs := flag.NewFlagSet("csiproxy-sanity", flag.ContinueOnError)
	cfg := conformance.Defaults()
	var (
		endpointF  = fs.String("endpoint", "", "unix:///dir (sockets named csi-proxy-<group>-<version>) or npipe://./pipe/ on Windows; default: start a simulated host")
		kubelet    = fs.String("kubelet-path", "", `csi-proxy v1's --kubelet-path: sets the plugins path to PATH\plugins\kubernetes.io\csi and the pod path to PATH\pods`)
		workDirs   listFlag
		escape     = fs.String("escape-link", "", "name of a symbolic link below both kubelet directories that leads outside them (DIR-002, LINK-005 cases); default with the simulated host: its own")
		inside     = fs.String("inside-link", "", "name of a symbolic link below the pod path leading to a directory below it (FS-003); default with the simulated host: its own")
		scratch    = fs.Int("scratch-disk", -1, "a disk number the suite may take offline, partition and format (DESTROYS ITS DATA); default with the simulated host: 1")
		smbShare   = fs.String("smb-share", "", `a reachable \\server\share for SMBAPI-001 and the SMB refusal cases (credentials from CSIPROXY_SMB_USER / CSIPROXY_SMB_PASSWORD)`)
		portal     = fs.String("iscsi-portal", "", "a reachable iSCSI portal address for ISCSIAPI-00x and the iSCSI refusal cases (changes the node's mutual CHAP secret)")
		disruptive = fs.Bool("disruptive-probes", false, "also send the refusal cases a real node would feel if its csi-proxy accepted them")
		noRecord   = fs.Bool("no-host-record", false, "judge as on a real node even when the host reports its Windows calls (a refusal is any error)")
		timeout    = fs.Duration("rpc-timeout", cfg.RPCTimeout, "deadline of every call")
		labels     = fs.String("label-filter", "", "Ginkgo label filter, e.g. 'RPC-FS-RMDIR' or 'MUST'")
		strict     = fs.Bool("strict", false, "SHOULD rules fail the run instead of warning")
		reports    = fs.String("reports", "reports", "directory for csiproxy.json, csiproxy.md, csiproxy.html and csiproxy-junit.xml")
		verbose    = fs.Bool("v", false, "print every spec")
		noColor    = fs.Bool("no-color", false, "no ANSI colours")
		listRules  = fs.Bool("list-rules", false, "print every rule the label filter selects and exit")
		seed       = fs.Uint64("seed", cfg.Seed, "seed of every name, case, separator and spelling the probes draw (default: the clock's, printed; replay a run with its seed)")
		profile    = fs.String("profile", string(restrict.Hardened), "rules the host is held to: hardened (every rule) or kep (the KEP's text alone)")
		nodeNames  listFlag
		nodeAddrs  listFlag
		sf         csiproxySimFlags
	)
	fs.Var(&nodeNames, "node-name", "a name of the node csi-proxy runs on, short or fully qualified (repeatable; SMB-005: a mapping to the node itself); default on Windows: its host name")
	fs.Var(&nodeAddrs, "node-address", "an IP address of the node (repeatable; SMB-005); default on Windows: its interfaces' addresses")
	fs.Var(&workDirs, "working-dir", "csi-proxy v1's --working-dir (repeatable): the host accepts paths below it, so no refusal case landing there is sent")
	sf.register(fs, "sim-")
	fs.StringVar(&cfg.PluginsPath, "kubelet-csi-plugins-path", cfg.PluginsPath, "the KEP's kubelet-csi-plugins-path (overrides --kubelet-path)")
	fs.StringVar(&cfg.PodPath, "kubelet-pod-path", cfg.PodPath, "the KEP's kubelet-pod-path (overrides --kubelet-path)")
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
			source := ""
			for _, l := range r.Labels {
				if v, ok := strings.CutPrefix(l, "source:"); ok {
					source = v
				}
			}
			fmt.Printf("%-38s %-6s %-10s %s\n", r.ID, r.Level, source, r.Title)
		}
		return rulebook.ExitConforms
	}
	if err := (rulebook.Selection{LabelFilter: *labels}).Check(); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: %v\n", err)
		return rulebook.ExitUsage
	}
	if *kubelet != "" {
		plugins, pods := kubeletPaths(*kubelet)
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["kubelet-csi-plugins-path"] {
			cfg.PluginsPath = plugins
		}
		if !set["kubelet-pod-path"] {
			cfg.PodPath = pods
		}
	}
	prof, err := restrict.ParseProfile(*profile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: --profile: %v\n", err)
		return rulebook.ExitUsage
	}
	cfg.Seed, cfg.Profile = *seed, prof
	cfg.NodeNames, cfg.NodeAddresses = nodeNames, nodeAddrs
	if len(cfg.NodeNames)+len(cfg.NodeAddresses) == 0 {
		cfg.NodeNames, cfg.NodeAddresses = thisNode()
	}
	sf.plugins, sf.pods = cfg.PluginsPath, cfg.PodPath
	cfg.Endpoint, cfg.EscapeLink, cfg.InsideLink, cfg.ScratchDisk, cfg.SMBShare, cfg.ISCSIPortal, cfg.RPCTimeout, cfg.Disruptive =
		*endpointF, *escape, *inside, *scratch, *smbShare, *portal, *timeout, *disruptive
	cfg.WorkingDirs, cfg.IgnoreRecord = workDirs, *noRecord
	cfg.SMBUser, cfg.SMBPassword = os.Getenv("CSIPROXY_SMB_USER"), os.Getenv("CSIPROXY_SMB_PASSWORD")
	if cfg.Endpoint == "" {
		simCfg, err := sf.config(slog.New(slog.DiscardHandler))
		simulatedNode(&cfg, &simCfg)
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
		fmt.Printf("csiproxy-sanity: simulated host on %s (faults: %s)\n", dir, strings.Join(sf.faults, ",")+map[bool]string{true: "none"}[len(sf.faults) == 0])
	} else if len(sf.faults) > 0 {
		fmt.Fprintln(os.Stderr, "fenceproof csiproxy-sanity: --sim-fault applies to the simulated host only; drop --endpoint")
		return 2
	}
	fmt.Printf("csiproxy-sanity: seed %d, profile %s (replay: --seed %d)\n", cfg.Seed, cfg.Profile, cfg.Seed)
	start := time.Now()
	res, err := conformance.Run(cfg, conformance.RunOptions{
		LabelFilter: *labels, Verbose: *verbose,
		NoColor: *noColor || !isTerminal(os.Stdout), Strict: *strict,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: %v\n", err)
		return rulebook.ExitUsage
	}
	paths, err := res.WriteReports(*reports, "")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof csiproxy-sanity: reports: %v\n", err)
		return rulebook.ExitNotConform
	}
	fmt.Printf("\ncsiproxy-sanity: %s against %s (%s)\n", res.Summary(), res.Endpoint, time.Since(start).Round(time.Millisecond))
	res.WriteVerdicts(os.Stdout)
	paths = append(paths, writeReportIndex(*reports)...)
	fmt.Printf("reports: %s\nverdict: %s\n", strings.Join(paths, " "), res.Verdict)
	return res.Verdict.ExitCode()
}

// simulatedNode fills what the suite was not told with what the standard
// simulated node (hostmodel.Standard) offers: its links (named afresh from
// the run's seed), a scratch disk, its share, its portal, its names and
// addresses.
func simulatedNode(cfg *conformance.Config, sim *simhost.Config) {
	names := restrict.NewDraw(cfg.Seed^0x5eed, restrict.Place{})
	if cfg.EscapeLink == "" {
		cfg.EscapeLink = names.Name()
	}
	if cfg.InsideLink == "" {
		cfg.InsideLink = names.Name()
	}
	sim.EscapeLink, sim.InsideLink = cfg.EscapeLink, cfg.InsideLink
	cfg.NodeNames, cfg.NodeAddresses = hostmodel.DefaultNode.Names, hostmodel.DefaultNode.Addresses
	if cfg.ScratchDisk < 0 {
		cfg.ScratchDisk = 1
	}
	if cfg.SMBShare == "" {
		cfg.SMBShare, cfg.SMBUser, cfg.SMBPassword = hostmodel.DefaultSMBShare, "fenceproof", "sim-password"
	}
	if cfg.ISCSIPortal == "" {
		cfg.ISCSIPortal = hostmodel.DefaultPortal
	}
}

// thisNode is the names and addresses of the machine the suite runs on,
// when that is the Windows node csi-proxy runs on; none elsewhere.
func thisNode() (names, addrs []string) {
	if runtime.GOOS != "windows" {
		return nil, nil
	}
	if h, err := os.Hostname(); err == nil {
		names = append(names, h)
	}
	if as, err := net.InterfaceAddrs(); err == nil {
		for _, a := range as {
			if p, err := netip.ParsePrefix(a.String()); err == nil {
				addrs = append(addrs, p.Addr().String())
			}
		}
	}
	return names, addrs
}
