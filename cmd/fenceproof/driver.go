package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/driver"
	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/driver/store"
)

func init() {
	register("driver", "run the reference CSI-Addons fence driver", runDriver)
}

func runDriver(args []string) int {
	cmd, err := parseDriverFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof driver:", err)
		return 2
	}
	if cmd.verify != "" {
		return verifyState(cmd.verify)
	}
	o, endpoint := cmd.o, cmd.endpoint
	if endpoint == "" {
		if endpoint, err = driver.DefaultEndpoint(); err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof driver:", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	d, err := driver.New(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof driver:", err)
		return 1
	}
	go func() {
		<-ctx.Done()
		o.Logger.Info("signal received, stopping")
		d.Stop()
	}()
	if err := d.Serve(endpoint); err != nil {
		d.Stop()
		fmt.Fprintln(os.Stderr, "fenceproof driver:", err)
		return 1
	}
	return 0
}

// verifyState checks a state file offline: exit 0 and a summary when it is
// sound, 1 and what is wrong when not.
func verifyState(path string) int {
	r, err := store.Verify(path, driver.CheckKey)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof driver --verify-state:", err)
		return 1
	}
	fmt.Printf("%s: OK, %d fences, instance %s\n", path, r.Records, r.Instance)
	return 0
}

// driverCmd is a parsed command line: run a driver, or verify a state file.
type driverCmd struct {
	o        driver.Options
	endpoint string // "" = driver.DefaultEndpoint()
	verify   string
}

// parseDriverFlags turns the command line into driver options and the
// endpoint. Errors never quote a secret value.
func parseDriverFlags(args []string) (driverCmd, error) {
	fs := flag.NewFlagSet("driver", flag.ContinueOnError)
	var (
		cmd                                     driverCmd
		secrets, params, ports, clients, faults listFlag
		protect                                 listFlag
		secretsFile, logLevel, logFmt           string
		noGetClients                            bool
	)
	o := &cmd.o
	fs.StringVar(&cmd.endpoint, "endpoint", "", "unix:///path.sock or tcp://host:port (a host is required to bind one address; tcp://:port means every interface); default unix://$XDG_RUNTIME_DIR/fenceproof/driver.sock, /run/fenceproof/driver.sock as root")
	fs.StringVar(&cmd.verify, "verify-state", "", "check this state file offline (checksums, digest, canonical keys) and exit")
	fs.Var(&protect, "protect", "CIDR block never dropped by any fence (repeatable; loopback and the TCP endpoint's port always are)")
	fs.StringVar(&o.MaxPrefix, "max-prefix", "1", "shortest prefix length accepted: N, or V4,V6 (e.g. 8,32); wider fences are refused with INVALID_ARGUMENT")
	fs.StringVar(&o.Table, "table", "", `nftables table name (default "fenceproof"); one per driver instance in a network namespace`)
	fs.DurationVar(&o.ReconcileInterval, "reconcile-interval", driver.DefaultReconcileInterval, "how often enforcement is verified and restored from the store (negative: never)")
	fs.IntVar(&o.MaxMessageBytes, "max-msg-bytes", driver.DefaultMaxMessageBytes, "largest request accepted")
	fs.IntVar(&o.MaxStreams, "max-streams", driver.DefaultMaxStreams, "concurrent calls per client connection")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", driver.DefaultMaxInFlight, "calls executing at once; more get RESOURCE_EXHAUSTED")
	fs.StringVar(&o.TLS.Cert, "tls-cert", "", "PEM server certificate for a tcp:// endpoint")
	fs.StringVar(&o.TLS.Key, "tls-key", "", "PEM key of --tls-cert")
	fs.StringVar(&o.TLS.ClientCA, "tls-client-ca", "", "PEM CA bundle; when set, clients must present a certificate it signed")
	fs.StringVar(&o.Backend, "backend", "memory", "memory | nftables | refstore | ceph (bin/fenceproof-ceph: built with -tags ceph)")
	fs.StringVar(&o.RefstoreAdmin, "refstore-admin", "", "refstore backend: admin endpoint, unix:///path.sock or tcp://host:port")
	fs.StringVar(&o.RefstoreTokenFile, "refstore-token-file", "", "refstore backend: bearer token file for a tcp:// admin endpoint")
	cephFlags(fs, &o.Ceph)
	fs.StringVar(&o.StatePath, "state", "", "bbolt state file (required)")
	fs.StringVar(&o.NetNS, "netns", "", `nftables: "" current netns, "new" a private one, or a netns path`)
	fs.Var(&secrets, "secret", "required secret key=value (repeatable)")
	fs.StringVar(&secretsFile, "secrets-file", "", "YAML map of required secrets")
	fs.Var(&params, "require-param", "parameter every request must carry: key (any non-empty value) or key=value (exactly that value) (repeatable)")
	fs.StringVar(&o.HostBits, "host-bits", "normalise", "normalise | reject")
	fs.Var(&ports, "protect-port", "local TCP port whose established peers GetFenceClients reports (repeatable)")
	fs.Var(&clients, "client", "static GetFenceClients answer id=cidr[,cidr] (repeatable)")
	fs.BoolVar(&noGetClients, "no-get-clients", false, "do not advertise GET_CLIENTS_TO_FENCE")
	fs.Var(&faults, "fault", "inject a fault (repeatable; for testing the conformance suite):"+fault.Usage())
	fs.StringVar(&o.Name, "name", driver.DefaultName, "Identity name")
	fs.StringVar(&logLevel, "log-level", "info", "debug | info | warn | error")
	fs.StringVar(&logFmt, "log-format", "json", "json | text")
	if err := fs.Parse(args); err != nil {
		return cmd, err
	}
	if fs.NArg() > 0 {
		return cmd, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	fail := func(err error) (driverCmd, error) { return cmd, err }
	if cmd.verify != "" {
		return cmd, nil
	}
	o.Protect = protect
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return fail(err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	switch logFmt {
	case "json":
		o.Logger = slog.New(slog.NewJSONHandler(os.Stderr, hopts))
	case "text":
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, hopts))
	default:
		return fail(fmt.Errorf("--log-format %q: want json or text", logFmt))
	}
	o.Version = version
	o.RequiredParameters = params
	o.DisableGetClients = noGetClients
	o.Faults = faults
	o.Secrets = map[string]string{}
	if secretsFile != "" {
		if fi, err := os.Stat(secretsFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			o.Logger.Warn("the secrets file is readable by other users; chmod 600 it", "file", secretsFile, "mode", fi.Mode().Perm().String())
		}
		raw, err := os.ReadFile(secretsFile)
		if err != nil {
			return fail(err)
		}
		if err := yaml.Unmarshal(raw, &o.Secrets); err != nil {
			// The parser error may quote the file's content: do not print it.
			return fail(fmt.Errorf("--secrets-file %s: not a YAML map of strings", secretsFile))
		}
	}
	for _, s := range secrets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return fail(fmt.Errorf("--secret wants key=value (got a value without '=' for key %q)", k))
		}
		o.Secrets[k] = v
	}
	for _, p := range ports {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return fail(fmt.Errorf("--protect-port %q: want 1-65535", p))
		}
		o.ProtectedPorts = append(o.ProtectedPorts, uint16(n))
	}
	for _, c := range clients {
		id, cidrs, ok := strings.Cut(c, "=")
		if !ok || id == "" || cidrs == "" {
			return fail(fmt.Errorf("--client %q: want id=cidr[,cidr]", c))
		}
		o.StaticClients = append(o.StaticClients, driver.Client{ID: id, Addresses: strings.Split(cidrs, ",")})
	}
	if o.StatePath == "" {
		return fail(fmt.Errorf("--state is required"))
	}
	if (o.Backend == "refstore") != (o.RefstoreAdmin != "") {
		return fail(fmt.Errorf("--refstore-admin goes with --backend refstore, and only with it"))
	}
	if err := checkCephFlags(fs, o); err != nil {
		return fail(err)
	}
	if _, err := fault.Parse(o.Faults); err != nil {
		return fail(err)
	}
	if _, err := cidr.ParseMinBits(o.MaxPrefix); err != nil {
		return fail(fmt.Errorf("--max-prefix: %w", err))
	}
	for _, p := range o.Protect {
		if _, err := cidr.Parse(p, cidr.Normalise); err != nil {
			return fail(fmt.Errorf("--protect %q: %v", p, err))
		}
	}
	return cmd, nil
}
