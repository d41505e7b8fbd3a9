package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	cfg, o, code, ok := sanityConfig(args)
	if !ok {
		return code // exitConforms after --help, exitUsageConfig otherwise
	}
	if err := (rulebook.Selection{LabelFilter: o.labelFilter, Focus: o.focus, Skip: o.skip}).Check(); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	if len(o.faults) > 0 && cfg.Endpoint != "" {
		fmt.Fprintln(os.Stderr, "fenceproof sanity: --driver-fault applies to the reference driver only; drop --endpoint")
		return exitUsageConfig
	}
	if o.listRules {
		return printRules(o.labelFilter)
	}
	if o.rulesTable {
		fmt.Print(ruleTableMarkdown(sanity.Rules()))
		return exitConforms
	}
	if err := cfg.Validate(); err != nil {
		if o.configFile != "" {
			err = fmt.Errorf("config %s (and flags): %w", o.configFile, err)
		}
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	if err := checkWritable(o.reports); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: reports directory: %v\n", err)
		return exitUsageConfig
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.Endpoint != "" {
		fmt.Printf("fenceproof sanity: endpoint %s (from %s)\n", rulebook.Printable(cfg.Endpoint), o.endpointFrom)
	} else {
		if v, set := os.LookupEnv("ENDPOINT"); set && v != "" {
			// Older releases read $ENDPOINT; a run that silently tested the
			// reference driver instead would pass for the wrong driver.
			fmt.Fprintln(os.Stderr, "fenceproof sanity: $ENDPOINT is set but not read (give the endpoint with --endpoint or the config file): testing the in-repo reference driver")
		}
		stopRef, err := startReference(ctx, &cfg, o.backend, o.faults, o.reports)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sanity: reference driver: %v\n", err)
			return exitUsageConfig
		}
		defer stopRef()
	}
	if o.junit != "" {
		if err := os.MkdirAll(filepath.Dir(o.junit), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
			return exitUsageConfig
		}
	}
	res, err := sanity.Run(ctx, cfg, sanity.RunOptions{
		LabelFilter: o.labelFilter, Focus: o.focus, Skip: o.skip, Verbose: o.verbose,
		NoColor: o.noColor || !isTerminal(os.Stdout),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
		return exitUsageConfig
	}
	paths, err := res.WriteReports(o.reports, o.junit)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof sanity: writing reports: %v\n", err)
	}
	printVerdict(res, append(paths, writeReportIndex(o.reports)...))
	return res.Verdict.ExitCode()
}

// printVerdict prints the verdict of every rule and of the run, the one the
// reports hold; every driver-supplied text in it is escaped
// (rulebook.Printable), secrets were redacted before.
func printVerdict(res *sanity.Result, paths []string) {
	p := rulebook.Printable
	fmt.Printf("\nfenceproof sanity against %s (%s), seed %d:\n", p(res.Endpoint), p(strings.TrimSpace(res.DriverName+" "+res.DriverVer)), res.Seed)
	res.WriteVerdicts(os.Stdout)
	if res.Verdict == rulebook.Unreachable {
		fmt.Printf("unreachable: %s\n", p(res.Unreachable))
	}
	fmt.Printf("state read from: %s\nrules: %s\nreports: %s\n", res.StateSource, res.Summary(), strings.Join(paths, " "))
	fmt.Printf("verdict: %s\n", res.Verdict)
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
	backend, err = referenceBackend(backend)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	netns, stopNetNS := "", func() {}
	if backend == "nftables" {
		if netns, stopNetNS, err = enforcingNetNS(cfg); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	d, err := newReference(ctx, cfg, backend, netns, faults, reportsDir, dir)
	if err != nil {
		stopNetNS()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return func() {
		d.Stop()
		stopNetNS()
		_ = os.RemoveAll(dir)
	}, nil
}

// referenceBackend resolves --driver-backend: auto is nftables as root (in
// a private network namespace, with the write probe as the enforce
// command), memory otherwise.
func referenceBackend(backend string) (string, error) {
	switch backend {
	case "auto":
		if os.Geteuid() == 0 {
			return "nftables", nil
		}
		fmt.Fprintln(os.Stderr, "fenceproof sanity: not root: the reference driver uses the memory backend (nothing is enforced); run as root for nftables in a private network namespace")
		return "memory", nil
	case "nftables", "memory":
		return backend, nil
	}
	return "", fmt.Errorf("--driver-backend %q is not auto, memory or nftables", backend)
}

func newReference(ctx context.Context, cfg *sanity.Config, backend, netns string, faults []string, reportsDir, dir string) (*driver.Driver, error) {
	if len(cfg.Secrets) == 0 {
		// The key has a dot, which neither base64 nor hexadecimal holds,
		// so that every variant ERR-004 makes of it is another secret.
		cfg.Secrets = map[string]string{"userID": "sanity-user", "userKey": "fenceproof." + randomSecret()}
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
