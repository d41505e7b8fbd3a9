//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/internal/writeprobe"
	"github.com/fenceproof/fenceproof/sanity"
)

func init() {
	register("write-probe", "the enforce command of the reference driver on nftables: one write from ADDR into its namespace; prints allowed or refused (exit 0 or 1)", runWriteProbe)
}

// runWriteProbe is `fenceproof write-probe --netns PATH --to ADDR:PORT...
// ADDR`, the enforce command contract of sanity/README.md.
func runWriteProbe(args []string) int {
	fs := flag.NewFlagSet("write-probe", flag.ContinueOnError)
	path := fs.String("netns", "", "the client network namespace of the topology (a path)")
	var to listFlag
	fs.Var(&to, "to", "the listener's address:port, one per family (repeatable)")
	timeout := fs.Duration("timeout", time.Second, "a write not acknowledged this long is refused")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "fenceproof write-probe: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() != 1 || *path == "" || len(to) == 0 {
		return fail("usage: write-probe --netns PATH --to ADDR:PORT [--to ADDR:PORT] ADDR")
	}
	addr, err := netip.ParseAddr(fs.Arg(0))
	if err != nil {
		return fail("%v", err)
	}
	var targets []netip.AddrPort
	for _, t := range to {
		ap, err := netip.ParseAddrPort(t)
		if err != nil {
			return fail("--to %s: %v", t, err)
		}
		targets = append(targets, ap)
	}
	allowed, err := writeprobe.Probe(*path, targets, addr.Unmap(), *timeout)
	if err != nil {
		return fail("%v", err)
	}
	if allowed {
		fmt.Println("allowed")
		return 0
	}
	fmt.Println("refused")
	return 1
}

// enforcingNetNS is the namespace the reference driver enforces in on
// nftables: a writeprobe topology's server namespace, whose write probe
// becomes the run's enforce command unless one was given. The returned
// function tears the topology down.
func enforcingNetNS(cfg *sanity.Config) (string, func(), error) {
	t, err := writeprobe.New(sanity.FencedRanges())
	if err != nil {
		return "", nil, fmt.Errorf("write-probe topology: %w", err)
	}
	if cfg.EnforceCommand == "" {
		self, err := os.Executable()
		if err != nil {
			t.Close()
			return "", nil, err
		}
		cfg.EnforceCommand = t.Command(shellQuote(self))
	}
	return t.ServerPath(), t.Close, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
