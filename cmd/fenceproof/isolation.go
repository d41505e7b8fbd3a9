package main

import (
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/isolation"
)

func init() {
	register("isolation", "print the data-plane NetworkPolicies of an application spec", runIsolation)
}

// runIsolation implements `fenceproof isolation -f SPEC [-ip ns/pod=ADDR]...`.
func runIsolation(args []string) int {
	return isolationMain(args, os.Stdout, os.Stderr)
}

func isolationMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("isolation", flag.ContinueOnError)
	fs.SetOutput(stderr)
	spec := fs.String("f", "", "application spec (YAML): selector.workloadLocations / workloadSelector and the module chain")
	ips := map[string]netip.Addr{}
	fs.Func("ip", "ns/pod=ADDR for the spec's {{ip}} and {{cidr}} template functions (repeatable)", func(v string) error {
		name, addr, ok := strings.Cut(v, "=")
		a, err := netip.ParseAddr(addr)
		if !ok || err != nil {
			return fmt.Errorf("want ns/pod=ADDR, got %q", v)
		}
		ips[name] = a
		return nil
	})
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fenceproof isolation -f SPEC [-ip ns/pod=ADDR]...\n\nPrints the NetworkPolicies that isolate the application's data plane, as a YAML list.")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *spec == "" {
		fs.Usage()
		return 2
	}
	data, err := os.ReadFile(*spec)
	if err == nil {
		data, err = isolation.RenderSpec(data, ips)
	}
	var app isolation.Application
	if err == nil {
		app, err = isolation.Parse(data)
	}
	if err != nil {
		fmt.Fprintln(stderr, "fenceproof isolation:", err)
		return 1
	}
	pols, err := isolation.Generate(app)
	if err != nil {
		fmt.Fprintln(stderr, "fenceproof isolation: invalid spec:", err)
		return 1
	}
	if len(pols) == 0 {
		fmt.Fprintln(stderr, "fenceproof isolation: no workload locations and no workloadSelector: no policies (as the design says)")
		return 0
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": pols})
	if err != nil {
		fmt.Fprintln(stderr, "fenceproof isolation:", err)
		return 1
	}
	_, _ = stdout.Write(out)
	return 0
}
