package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fenceproof/fenceproof/sanity"
)

// sanityOptions are the flags of fenceproof sanity that are not part of the
// suite's configuration.
type sanityOptions struct {
	configFile, secretsFile string
	labelFilter             string
	focus, skip             listFlag
	reports, junit          string
	verbose, noColor        bool
	backend                 string
	faults                  listFlag
	listRules, rulesTable   bool
	// endpointFrom says where the endpoint came from (--endpoint or the
	// config file); "" when none was given (the reference driver runs).
	endpointFrom string
}

// sanityFlags binds every flag of fenceproof sanity, once: the suite's to
// the fields of cfg (their defaults are cfg's values, so that flags given
// override a config file read into cfg and the others leave it alone), the
// rest to o.
func sanityFlags(cfg *sanity.Config, o *sanityOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("sanity", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: fenceproof sanity [flags]

Runs every conformance rule against a CSI-Addons FenceController endpoint and
writes JUnit, JSON, Markdown and HTML reports. Without --endpoint it starts the
in-repo reference driver (nftables in a private network namespace as root,
the memory backend otherwise).

Exit status: 0 CONFORMS (every MUST rule ran and passed); 1 DOES NOT CONFORM
(a MUST rule failed); 2 bad flags or config (nothing ran); 3 INCOMPLETE
(nothing failed, but a MUST rule did not run: --timeout, SIGINT/SIGTERM, a
label filter, no free blocks, no readable List; the reports say why per
rule); 4 UNREACHABLE (nothing answered at the endpoint). Every run that
starts writes every report with its verdict and undoes every fence it made.

flags:`)
		fs.PrintDefaults()
	}
	p := &cfg.Profile
	fs.StringVar(&cfg.Endpoint, "endpoint", cfg.Endpoint, "driver endpoint, unix:///path.sock or tcp://host:port (default: the config file's endpoint, else start the reference driver); no environment variable sets it")
	fs.DurationVar(&cfg.RPCTimeout.Duration, "rpc-timeout", cfg.RPCTimeout.Duration, "deadline of every RPC")
	fs.DurationVar(&cfg.ConnectTimeout.Duration, "connect-timeout", cfg.ConnectTimeout.Duration, "how long to wait for the first connection")
	fs.StringVar((*string)(&p.HostBits), "host-bits", string(p.HostBits), "profile: host bits set in a CIDR are normalise | reject | either")
	fs.StringVar((*string)(&p.IPv6), "ipv6", string(p.IPv6), "profile: IPv6 support is required | optional")
	fs.StringVar((*string)(&p.ListClusterFence), "list", string(p.ListClusterFence), "profile: ListClusterFence is required | optional")
	fs.BoolVar(&cfg.Destructive, "destructive", cfg.Destructive, "allow rules that fence prefixes outside the documentation ranges")
	fs.BoolVar(&cfg.Strict, "strict", cfg.Strict, "SHOULD rules fail the run instead of warning")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "requests sent at once by the concurrency rules")
	fs.Int64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the randomized rules (0: pick one and print it)")
	fs.IntVar(&cfg.ScaleSize, "scale-size", cfg.ScaleSize, "blocks the scale rule SCALE-001 fences, in one request and across many")
	fs.DurationVar(&cfg.Hold.Duration, "hold", cfg.Hold.Duration, "the sentinel fence's age, at least, when EXPIRE-001 last reads it (even when the run is shorter); nightly CI: above the storage's blocklist expiry, e.g. 65m")
	fs.StringVar(&cfg.RestartCommand, "restart-command", cfg.RestartCommand, "shell command that restarts the driver (RESTART-001); empty skips the rule")
	fs.StringVar(&cfg.EnforceCommand, "enforce-command", cfg.EnforceCommand, "shell command run as 'CMD ADDR' that tries a write to the storage from ADDR and says allowed or refused (exit 0 or 1, or a last line allowed|refused|untestable); runs ENFORCE-001; empty skips it (the reference driver on nftables brings its own)")
	fs.DurationVar(&cfg.EnforceTimeout.Duration, "enforce-timeout", cfg.EnforceTimeout.Duration, "how long one run of the enforce command may take")
	fs.StringVar(&cfg.ObserveCommand, "observe-command", cfg.ObserveCommand, "shell command printing the storage's fenced entries, one CIDR or address per line; used when ListClusterFence is missing or broken")
	fs.DurationVar(&cfg.Timeout.Duration, "timeout", cfg.Timeout.Duration, "time budget of the run: rules it does not reach are NOT RUN and the run INCOMPLETE; cleanup and the reports follow it (default 10m plus --hold)")
	fs.Var(&kvFlag{m: &cfg.Secrets}, "secret", "a valid secret key=value (repeatable; replaces the config file's); values never appear in output")
	fs.Var(&kvFlag{m: &cfg.Parameters}, "param", "a required parameter key=value (repeatable; replaces the config file's); the suite drops each in turn")

	fs.StringVar(&o.configFile, "config", "", "YAML config file (secrets, parameters, profile, timeouts); flags override it")
	fs.StringVar(&o.secretsFile, "secrets-file", "", "YAML file of valid secrets (key: value), so they never sit on a command line")
	fs.StringVar(&o.labelFilter, "label-filter", "", "Ginkgo label filter, e.g. 'MUST && !concurrency' or 'CIDR-001'")
	fs.Var(&o.focus, "focus", "run only specs matching this regexp (repeatable)")
	fs.Var(&o.skip, "skip", "skip specs matching this regexp (repeatable)")
	fs.StringVar(&o.reports, "reports", "reports", "directory for the reports")
	fs.StringVar(&o.junit, "junit", "", "JUnit XML path (default <reports>/sanity-junit.xml)")
	fs.BoolVar(&o.verbose, "v", false, "print every spec, not only failures")
	fs.BoolVar(&o.noColor, "no-color", false, "no ANSI colours")
	fs.StringVar(&o.backend, "driver-backend", "auto", "reference driver backend when no --endpoint: auto | memory | nftables")
	fs.Var(&o.faults, "driver-fault", "inject a fault into the reference driver (repeatable; for testing the suite itself; see fenceproof driver -h)")
	fs.BoolVar(&o.listRules, "list-rules", false, "print every rule (ID, level, labels, title) and exit; no driver needed")
	fs.BoolVar(&o.rulesTable, "rules-table", false, "print the Markdown table of every rule, its level and the fault that proves it can fail (the README's), and exit")
	return fs
}

// sanityConfig reads the flags: the defaults, then the config file (when
// --config names one), then the flags given, then the secrets file. The
// flags are bound once and parsed a second time over the file's values.
func sanityConfig(args []string) (cfg sanity.Config, o sanityOptions, code int, ok bool) {
	cfg = sanity.Defaults()
	fs := sanityFlags(&cfg, &o)
	if code, ok := parseFlags(fs, args); !ok {
		return cfg, o, code, false
	}
	if o.configFile != "" {
		cfg = sanity.Defaults()
		if err := sanity.DecodeFile(o.configFile, &cfg); err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
			return cfg, o, exitUsageConfig, false
		}
		o = sanityOptions{}
		fs = sanityFlags(&cfg, &o)
		if code, ok := parseFlags(fs, args); !ok {
			return cfg, o, code, false
		}
	}
	switch {
	case isSet(fs, "endpoint"):
		o.endpointFrom = "--endpoint"
	case cfg.Endpoint != "":
		o.endpointFrom = "--config " + o.configFile
	}
	if o.secretsFile != "" {
		sec, err := sanity.LoadSecretsFile(o.secretsFile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fenceproof sanity: %v\n", err)
			return cfg, o, exitUsageConfig, false
		}
		cfg.Secrets = sec
	}
	return cfg, o, 0, true
}
