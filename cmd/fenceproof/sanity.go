package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fenceproof/fenceproof/driver"
	"github.com/fenceproof/fenceproof/rulebook"
	"github.com/fenceproof/fenceproof/sanity"
)

func init() {
	register("sanity", "run the FenceController conformance suite against an endpoint (or the reference driver)", runSanity)
}

// Exit codes of fenceproof sanity.
const (
	exitConforms    = rulebook.ExitConforms
	exitUsageConfig = rulebook.ExitUsage
)

func runSanity(args []string) int {
	fs := flag.NewFlagSet("sanity", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: fenceproof sanity [flags]

Runs every conformance rule against a CSI-Addons FenceController endpoint and
writes JUnit, JSON, Markdown and HTML reports. Without --endpoint it starts the
in-repo reference driver (nftables in a private network namespace as root,
the memory backend otherwise). Exit status: 0 conforms (every MUST passed),
1 does not conform, 2 bad flags or config.

flags:`)
		fs.PrintDefaults()
	}
	cfg := sanity.Defaults()
	var (
		configFile  = fs.String("config", "", "YAML config file (secrets, parameters, profile, timeouts); flags override it")
		endpoint    = fs.String("endpoint", "", "driver endpoint, unix:///path.sock or tcp://host:port (default: start the reference driver)")
		rpcTimeout  = fs.Duration("rpc-timeout", cfg.RPCTimeout.Duration, "deadline of every RPC")
		connTimeout = fs.Duration("connect-timeout", cfg.ConnectTimeout.Duration, "how long to wait for the first connection")
		hostBits    = fs.String("host-bits", string(cfg.Profile.HostBits), "profile: host bits set in a CIDR are normalise | reject | either")
		ipv6        = fs.String("ipv6", string(cfg.Profile.IPv6), "profile: IPv6 support is required | optional")
		listReq     = fs.String("list", string(cfg.Profile.ListClusterFence), "profile: ListClusterFence is required | optional")
		destructive = fs.Bool("destructive", false, "allow rules that fence prefixes outside the documentation ranges")
		strict      = fs.Bool("strict", false, "SHOULD rules fail the run instead of warning")
		concurrency = fs.Int("concurrency", cfg.Concurrency, "requests sent at once by the concurrency rules")
		seed        = fs.Int64("seed", 0, "seed of the randomized rules (0: pick one and print it)")
		labelFilter = fs.String("label-filter", "", "Ginkgo label filter, e.g. 'MUST && !concurrency' or 'CIDR-001'")
		reportsDir  = fs.String("reports", "reports", "directory for the reports")
		junit       = fs.String("junit", "", "JUnit XML path (default <reports>/sanity-junit.xml)")
		verbose     = fs.Bool("v", false, "print every spec, not only failures")
		noColor     = fs.Bool("no-color", false, "no ANSI colours")
		backend     = fs.String("driver-backend", "auto", "reference driver backend when no --endpoint: auto | memory | nftables")
		listRules   = fs.Bool("list-rules", false, "print every rule (ID, level, labels, title) and exit; no driver needed")
		scaleSize   = fs.Int("scale-size", cfg.ScaleSize, "blocks the scale rule SCALE-001 fences, in one request and across many")
		hold        = fs.Duration("hold", cfg.Hold.Duration, "how long the sentinel fence must stay listed (EXPIRE-001); nightly CI: above the storage's blocklist expiry, e.g. 65m")
		restartCmd  = fs.String("restart-command", "", "shell command that restarts the driver (RESTART-001); empty skips the rule")
		observeCmd  = fs.String("observe-command", "", "shell command printing the storage's fenced entries, one CIDR or address per line; used when ListClusterFence is missing or broken")
		runTimeout  = fs.Duration("timeout", 0, "budget of the whole run; the report is written when it runs out (default derived from --rpc-timeout, --connect-timeout and --hold)")
		rulesTable  = fs.Bool("rules-table", false, "print the Markdown table of every rule, its level and the fault that proves it can fail (the README's), and exit")
		secretsFile = fs.String("secrets-file", "", "YAML file of valid secrets (key: value), so they never sit on a command line")
		secrets     = kvFlag{}
		params      = kvFlag{}
		focus       listFlag
		skip        listFlag
		faults      listFlag
	)
	fs.Var(secrets, "secret", "a valid secret key=value (repeatable); values never appear in output")
	fs.Var(params, "param", "a required parameter key=value (repeatable); the suite drops each in turn")
	fs.Var(&focus, "focus", "run only specs matching this regexp (repeatable)")
	fs.Var(&skip, "skip", "skip specs matching this regexp (repeatable)")
	fs.Var(&faults, "driver-fault", "inject a fault into the reference driver (repeatable; for testing the suite itself)")
	if code, ok := parseFlags(fs, args); !ok {
		return code // exitConforms after --help, exitUsageConfig otherwise
	}
	if *configFile != "" {
		if err := sanity.LoadFile(*configFile, &cfg); err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
			return exitUsageConfig
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	override := func(name string, apply func()) {
		if set[name] {
			apply()
		}
	}
	override("endpoint", func() { cfg.Endpoint = *endpoint })
	override("rpc-timeout", func() { cfg.RPCTimeout.Duration = *rpcTimeout })
	override("connect-timeout", func() { cfg.ConnectTimeout.Duration = *connTimeout })
	override("host-bits", func() { cfg.Profile.HostBits = sanity.HostBits(*hostBits) })
	override("ipv6", func() { cfg.Profile.IPv6 = sanity.Requirement(*ipv6) })
	override("list", func() { cfg.Profile.ListClusterFence = sanity.Requirement(*listReq) })
	override("destructive", func() { cfg.Destructive = *destructive })
	override("strict", func() { cfg.Strict = *strict })
	override("concurrency", func() { cfg.Concurrency = *concurrency })
	override("seed", func() { cfg.Seed = *seed })
	override("secret", func() { cfg.Secrets = secrets })
	override("param", func() { cfg.Parameters = params })
	override("scale-size", func() { cfg.ScaleSize = *scaleSize })
	override("hold", func() { cfg.Hold.Duration = *hold })
	override("restart-command", func() { cfg.RestartCommand = *restartCmd })
	override("observe-command", func() { cfg.ObserveCommand = *observeCmd })
	override("timeout", func() { cfg.Timeout.Duration = *runTimeout })
	if *secretsFile != "" {
		sec, err := sanity.LoadSecretsFile(*secretsFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
			return exitUsageConfig
		}
		cfg.Secrets = sec
	}
	if err := (rulebook.Selection{LabelFilter: *labelFilter, Focus: focus, Skip: skip}).Check(); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = os.Getenv("ENDPOINT")
	}
	if len(faults) > 0 && cfg.Endpoint != "" {
		fmt.Fprintln(os.Stderr, "fenceproof sanity: --driver-fault applies to the reference driver only; drop --endpoint")
		return exitUsageConfig
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *listRules {
		return printRules(*labelFilter)
	}
	if *rulesTable {
		fmt.Print(sanity.RuleTableMarkdown(sanity.Rules()))
		return exitConforms
	}

	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	if err := checkWritable(*reportsDir); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: reports directory: %v\n", err)
		return exitUsageConfig
	}
	if cfg.Endpoint == "" {
		stopRef, err := startReference(ctx, &cfg, *backend, faults, *reportsDir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sanity: reference driver: %v\n", err)
			return exitUsageConfig
		}
		defer stopRef()
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	if *junit == "" {
		*junit = filepath.Join(*reportsDir, "sanity-junit.xml")
	}
	if err := os.MkdirAll(filepath.Dir(*junit), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	res, err := sanity.Run(ctx, cfg, sanity.RunOptions{
		LabelFilter: *labelFilter, Focus: focus, Skip: skip, JUnitPath: *junit, Verbose: *verbose,
		NoColor: *noColor || !isTerminal(os.Stdout),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	paths, err := res.WriteReports(*reportsDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: writing reports: %v\n", err)
	}
	fmt.Printf("\nfenceproof sanity: %s against %s (%s %s), seed %d\n", res.Summary(), res.Endpoint, res.DriverName, res.DriverVer, res.Seed)
	res.WriteAttention(os.Stdout)
	fmt.Printf("state read from: %s\ncore: %s\nextended: %s\n", res.StateSource, res.Core, res.Extended)
	fmt.Printf("reports: %s %v\n", *junit, paths)
	fmt.Printf("verdict: %s\n", res.Verdict)
	return res.Verdict.ExitCode()
}

// printRules lists the rules the label filter selects, read from the rule
// table: no driver is needed and no spec runs.
func printRules(labelFilter string) int {
	rules, err := sanity.SelectRules(labelFilter)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	for _, r := range rules {
		fmt.Printf("%-10s %-6s %s\n           labels: %s\n", r.ID, r.Level, r.Title, strings.Join(r.Tags(), ", "))
	}
	return exitConforms
}

// startReference starts the in-repo reference driver on a private unix
// socket and points cfg at it. Unless the user configured secrets and
// parameters, it invents some, so that the error-table rules run too. The
// returned function stops the driver and removes its socket and state.
func startReference(ctx context.Context, cfg *sanity.Config, backend string, faults []string, reportsDir string) (func(), error) {
	dir, err := os.MkdirTemp("", "fenceproof-sanity-")
	if err != nil {
		return nil, err
	}
	d, err := newReference(ctx, cfg, backend, faults, reportsDir, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return func() {
		d.Stop()
		_ = os.RemoveAll(dir)
	}, nil
}

func newReference(ctx context.Context, cfg *sanity.Config, backend string, faults []string, reportsDir, dir string) (*driver.Driver, error) {
	root := os.Geteuid() == 0
	netns := ""
	switch backend {
	case "auto":
		if root {
			backend, netns = "nftables", "new"
		} else {
			backend = "memory"
			fmt.Fprintln(os.Stderr, "fenceproof sanity: not root: the reference driver uses the memory backend (nothing is enforced); run as root for nftables in a private network namespace")
		}
	case "nftables":
		netns = "new"
	case "memory":
	default:
		return nil, fmt.Errorf("--driver-backend %q is not auto, memory or nftables", backend)
	}
	if len(cfg.Secrets) == 0 {
		cfg.Secrets = map[string]string{"userID": "fenceproof", "userKey": randomSecret()}
	}
	if len(cfg.Parameters) == 0 {
		cfg.Parameters = map[string]string{"clusterID": "fenceproof-reference"}
	}
	var required []string
	for k, v := range cfg.Parameters {
		required = append(required, k+"="+v)
	}
	logger, err := driverLogger(reportsDir)
	if err != nil {
		return nil, err
	}
	d, err := driver.New(ctx, driver.Options{
		Backend:            backend,
		NetNS:              netns,
		StatePath:          filepath.Join(dir, "fences.db"),
		Secrets:            cfg.Secrets,
		RequiredParameters: required,
		HostBits:           hostBitsFor(cfg.Profile.HostBits),
		Faults:             faults,
		Logger:             logger,
	})
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", backend, err)
	}
	sock := filepath.Join(dir, "driver.sock")
	if _, err := d.Start("unix://" + sock); err != nil {
		d.Stop()
		return nil, err
	}
	cfg.Endpoint = "unix://" + sock
	where := "backend " + backend
	if netns != "" {
		where += " in a private network namespace"
	}
	fmt.Printf("fenceproof sanity: reference driver on %s (%s, logs %s)\n", cfg.Endpoint, where, filepath.Join(reportsDir, "sanity-driver.log"))
	return d, nil
}

// hostBitsFor picks the reference driver's host-bit behaviour for a profile.
func hostBitsFor(h sanity.HostBits) string {
	if h == sanity.HostBitsReject {
		return "reject"
	}
	return "normalise"
}

func driverLogger(reportsDir string) (*slog.Logger, error) {
	if err := os.MkdirAll(reportsDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(reportsDir, "sanity-driver.log"))
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})), nil
}

// isTerminal reports whether f is a terminal, so colours go only to people.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func randomSecret() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// checkWritable makes sure the reports can be written before the run, so a
// run never ends without its report.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".fenceproof-write-check-")
	if err != nil {
		return err
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}
