//go:build ceph

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"os"
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
	opTimeout := fs.Duration("op-timeout", 5*time.Second, "a write without an answer this long is refused")
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns, remove, err := c.WriterAt(ctx, addr.Unmap())
	if err != nil {
		return fail("%v", err)
	}
	defer remove()
	conn, err := librados.Dial(librados.Options{Conf: ci.Conf, User: ci.Name, Keyring: ci.Keyring, NetNS: ns,
		MonTimeout: 10 * time.Second, OSDTimeout: *opTimeout,
		Config: map[string]string{"client_mount_timeout": fmt.Sprint(int(opTimeout.Seconds()))}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "connecting from %s: %v\n", addr, err)
		if _, reason := writer.Classify(err); reason == "EBLOCKLISTED (-108)" || reason == "timeout (-110)" {
			fmt.Printf("connecting: %s\nrefused\n", reason)
			return 1
		}
		return fail("connecting from %s: %v", addr, err)
	}
	defer conn.Shutdown()
	p, err := conn.Pool(c.Pool())
	if err != nil {
		return fail("%v", err)
	}
	defer p.Close()
	outcome, reason := writer.Classify(p.Append(writer.AuditObject("write-probe"), fmt.Appendf(nil, "write from %s\n", addr)))
	switch {
	case outcome == rswriter.OutcomeOK:
		fmt.Println("allowed")
		return 0
	case outcome == rswriter.OutcomeRefused || reason == "timeout (-110)":
		fmt.Printf("%s\nrefused\n", reason)
		return 1
	}
	return fail("the write from %s failed: %s", addr, reason)
}
