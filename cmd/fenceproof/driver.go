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
	"github.com/fenceproof/fenceproof/driver/fault"
)

func init() {
	register("driver", "run the reference CSI-Addons fence driver", runDriver)
}

func runDriver(args []string) int {
	o, endpoint, err := parseDriverFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof driver:", err)
		return 2
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

// parseDriverFlags turns the command line into driver options and the
// endpoint. Errors never quote a secret value.
func parseDriverFlags(args []string) (driver.Options, string, error) {
	fs := flag.NewFlagSet("driver", flag.ContinueOnError)
	var (
		o                                       driver.Options
		secrets, params, ports, clients, faults listFlag
		endpoint, secretsFile, logLevel, logFmt string
		noGetClients                            bool
	)
	fs.StringVar(&endpoint, "endpoint", "unix:///tmp/fenceproof-driver.sock", "unix:///path.sock or tcp://host:port")
	fs.StringVar(&o.Backend, "backend", "memory", "memory | nftables | refstore")
	fs.StringVar(&o.RefstoreAdmin, "refstore-admin", "", "refstore backend: admin endpoint, unix:///path.sock or tcp://host:port")
	fs.StringVar(&o.RefstoreTokenFile, "refstore-token-file", "", "refstore backend: bearer token file for a tcp:// admin endpoint")
	fs.StringVar(&o.StatePath, "state", "", "bbolt state file (required)")
	fs.StringVar(&o.NetNS, "netns", "", `nftables: "" current netns, "new" a private one, or a netns path`)
	fs.Var(&secrets, "secret", "required secret key=value (repeatable)")
	fs.StringVar(&secretsFile, "secrets-file", "", "YAML map of required secrets")
	fs.Var(&params, "require-param", "parameter key every request must carry (repeatable)")
	fs.StringVar(&o.HostBits, "host-bits", "normalise", "normalise | reject")
	fs.Var(&ports, "protect-port", "local TCP port whose established peers GetFenceClients reports (repeatable)")
	fs.Var(&clients, "client", "static GetFenceClients answer id=cidr[,cidr] (repeatable)")
	fs.BoolVar(&noGetClients, "no-get-clients", false, "do not advertise GET_CLIENTS_TO_FENCE")
	fs.Var(&faults, "fault", "inject a fault (repeatable): "+strings.Join(fault.Names(), ", "))
	fs.StringVar(&o.Name, "name", driver.DefaultName, "Identity name")
	fs.StringVar(&logLevel, "log-level", "info", "debug | info | warn | error")
	fs.StringVar(&logFmt, "log-format", "json", "json | text")
	if err := fs.Parse(args); err != nil {
		return o, "", err
	}
	if fs.NArg() > 0 {
		return o, "", fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	fail := func(err error) (driver.Options, string, error) { return o, "", err }
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
	if _, err := fault.Parse(o.Faults); err != nil {
		return fail(err)
	}
	return o, endpoint, nil
}
