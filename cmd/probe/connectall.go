package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/fenceproof/fenceproof/isolation/probeline"
)

// runConnectAll implements `probe connect-all`: one fresh connection to each
// target, up to --parallel at once, one JSON line per target in argument
// order. A suite measures a whole matrix row with one exec instead of one
// exec per cell.
func runConnectAll(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("connect-all", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", time.Second, "how long to wait for each connection and its reply")
	parallel := fs.Int("parallel", 64, "connections in flight at once")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	switch {
	case fs.NArg() == 0:
		fmt.Fprintln(stderr, "probe connect-all: no targets (PROTO:HOST:PORT ...)")
		return exitUsage
	case *timeout <= 0:
		fmt.Fprintln(stderr, "probe connect-all: --timeout must be positive")
		return exitUsage
	case *parallel < 1:
		fmt.Fprintln(stderr, "probe connect-all: --parallel must be at least 1")
		return exitUsage
	}
	type target struct{ proto, to string }
	targets := make([]target, fs.NArg())
	for i, a := range fs.Args() {
		proto, to, ok := strings.Cut(a, ":")
		if !ok || (proto != "tcp" && proto != "udp") {
			fmt.Fprintf(stderr, "probe connect-all: target %q is not tcp:HOST:PORT or udp:HOST:PORT\n", a)
			return exitUsage
		}
		if _, _, err := net.SplitHostPort(to); err != nil {
			fmt.Fprintf(stderr, "probe connect-all: target %q: %v\n", a, err)
			return exitUsage
		}
		targets[i] = target{proto, to}
	}
	lines := make([]probeline.Line, len(targets))
	sem := make(chan struct{}, *parallel)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lines[i] = connect(t.proto, t.to, *timeout)
		}()
	}
	wg.Wait()
	code := exitOK
	for _, l := range lines {
		fmt.Fprintln(stdout, l.String())
		if !l.OK {
			code = exitUnreachable
		}
	}
	return code
}
