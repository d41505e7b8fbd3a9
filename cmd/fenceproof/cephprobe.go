//go:build ceph

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/ceph/cluster"
	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/ceph/writer"
	rswriter "github.com/fenceproof/fenceproof/refstore/writer"
)

func init() {
	register("ceph-write-probe", "the enforce command on real Ceph: one librados write from ADDR (a namespace of its own on the cluster's bridge); prints allowed, refused or untestable", runCephWriteProbe)
}

// runCephWriteProbe is `fenceproof-ceph ceph-write-probe --dir DIR --client
// NAME ADDR`, the enforce command contract of sanity/README.md: the
// client's credentials (writer caps) from an address of its own. A write
// the OSDs refuse as blocklisted (-108), or do not answer within
// --op-timeout, is refused; IPv6 is untestable (the daemons bind IPv4).
func runCephWriteProbe(args []string) int {
	fs := flag.NewFlagSet("ceph-write-probe", flag.ContinueOnError)
	dir := fs.String("dir", defaultCephDir, "the cluster's private directory")
	name := fs.String("client", "", "a client of the cluster with writer caps (fenceproof ceph client NAME)")
	opTimeout := fs.Duration("op-timeout", 5*time.Second, "a connection or write without an answer this long is refused")
	limit := fs.Duration("limit", 25*time.Second, "the probe gives up (an error, exit 2) and cleans up after this long")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "fenceproof ceph-write-probe: "+format+"\n", a...)
		return 2
	}
	if fs.NArg() != 1 || *name == "" {
		return fail("usage: ceph-write-probe --dir DIR --client NAME ADDR")
	}
	addr, err := netip.ParseAddr(fs.Arg(0))
	if err != nil {
		return fail("%v", err)
	}
	if !addr.Unmap().Is4() {
		fmt.Println("untestable") // the cluster's daemons bind an IPv4 address only
		return 0
	}
	c, err := cluster.Attach(*dir)
	if err != nil {
		return fail("%v", err)
	}
	ci := c.Client(*name)
	if ci == nil {
		return fail("no client %q in %s", *name, *dir)
	}
	// The probe ends by itself, its namespace removed, before the suite's
	// --enforce-timeout (30 s) kills it, and on SIGTERM.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *limit)
	defer cancel()
	ns, remove, err := c.WriterAt(ctx, addr.Unmap())
	if err != nil {
		return fail("%v", err)
	}
	defer remove()
	type result struct {
		code int
		out  string
	}
	done := make(chan result, 1)
	go func() { code, out := writeFrom(c, ci, ns, addr, *opTimeout); done <- result{code, out} }()
	select {
	case r := <-done:
		fmt.Print(r.out)
		return r.code
	case <-ctx.Done():
		return fail("no answer from the cluster within %s (or stopped): %v", *limit, context.Cause(ctx))
	}
}

// connectAttempts is how many times the probe connects before a failed
// connect is an error of the command.
const connectAttempts = 3

// writeFrom connects from the namespace ns and appends one line; it
// returns the exit status and what to print.
func writeFrom(c *cluster.Cluster, ci *cluster.ClientInfo, ns string, addr netip.Addr, opTimeout time.Duration) (int, string) {
	// A connect that fails for another reason than a refusal (a mon busy
	// with a blocklist commit answered EPERM under load) is tried again:
	// only the write's answer decides.
	var conn *librados.Conn
	var err error
	for attempt := 1; ; attempt++ {
		conn, err = librados.Dial(librados.Options{Conf: ci.Conf, User: ci.Name, Keyring: ci.Keyring, NetNS: ns,
			MonTimeout: 10 * time.Second, OSDTimeout: opTimeout,
			Config: map[string]string{"client_mount_timeout": fmt.Sprint(int(opTimeout.Seconds()))}})
		if err == nil {
			break
		}
		if _, reason := writer.Classify(err); reason == "EBLOCKLISTED (-108)" || reason == "timeout (-110)" {
			return 1, fmt.Sprintf("connecting: %s\nrefused\n", reason)
		}
		if attempt == connectAttempts {
			return 2, fmt.Sprintf("connecting from %s (%d attempts): %v\n", addr, attempt, err)
		}
		time.Sleep(time.Duration(attempt) * 500 * time.Millisecond)
	}
	defer conn.Shutdown()
	p, err := conn.Pool(c.Pool())
	if err != nil {
		return 2, err.Error() + "\n"
	}
	defer p.Close()
	outcome, reason := writer.Classify(p.Append(writer.AuditObject("write-probe"), fmt.Appendf(nil, "write from %s\n", addr)))
	switch {
	case outcome == rswriter.OutcomeOK:
		return 0, "allowed\n"
	case outcome == rswriter.OutcomeRefused || reason == "timeout (-110)":
		return 1, reason + "\nrefused\n"
	}
	return 2, fmt.Sprintf("the write from %s failed: %s\n", addr, reason)
}
