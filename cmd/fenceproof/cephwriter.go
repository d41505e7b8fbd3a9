//go:build ceph

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/ceph/writer"
)

func init() {
	register("ceph-writer", "write to a Ceph pool in a loop, one JSON line per attempt (ok, refused -108, error/timeout); 'ceph-writer read' reads the records back (the writer contract), 'ceph-writer audit' prints the writes Ceph accepted", runCephWriter)
}

func runCephWriter(args []string) int {
	auditMode := len(args) > 0 && args[0] == "audit"
	if auditMode {
		args = args[1:]
	}
	var wf writerFlags
	args = wf.mode(args)
	fs := flag.NewFlagSet("ceph-writer", flag.ContinueOnError)
	wf.bind(fs)
	var co librados.Options
	var wo writer.Options
	fs.StringVar(&co.Conf, "conf", "", "ceph.conf path")
	fs.StringVar(&co.User, "user", "admin", `Ceph user without "client."`)
	fs.StringVar(&co.Keyring, "keyring", "", "keyring path")
	fs.StringVar(&co.MonHost, "mon-host", "", "mon_host")
	fs.StringVar(&co.NetNS, "netns", "", "connect from this network namespace (path)")
	fs.DurationVar(&co.OSDTimeout, "op-timeout", 2*time.Second, "a write without an answer this long is a timeout (rados_osd_op_timeout)")
	pool := fs.String("pool", "fenceproof", "pool")
	duration := fs.Duration("duration", 0, "stop after this long (0: at SIGTERM/SIGINT)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if wf.id == "" {
		wf.id = "writer"
	}
	wo.ID, wo.Node, wo.Interval = wf.id, wf.node, wf.interval
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "fenceproof ceph-writer:", err)
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// A mon that is not up yet (a pod starting with the cluster): retry.
	var conn *librados.Conn
	var err error
	for conn, err = librados.Dial(co); err != nil; conn, err = librados.Dial(co) {
		select {
		case <-ctx.Done():
			return fail(1, err)
		case <-time.After(time.Second):
		}
		fmt.Fprintln(os.Stderr, "fenceproof ceph-writer: retrying:", err)
	}
	defer conn.Shutdown()
	p, err := conn.Pool(*pool)
	if err != nil {
		return fail(1, err)
	}
	defer p.Close()
	if auditMode {
		recs, warns, err := writer.Audit(p)
		if err != nil {
			return fail(1, err)
		}
		enc := json.NewEncoder(os.Stdout)
		for _, r := range recs {
			enc.Encode(r)
		}
		for _, w := range warns {
			fmt.Fprintln(os.Stderr, "fenceproof ceph-writer audit:", w)
		}
		return 0
	}
	if wf.readMode {
		recs, done, err := writer.ReadBack(p, wf.readIDs())
		if err != nil {
			return fail(1, err)
		}
		printRead(recs, done)
		return 0
	}
	log, closeLog, err := wf.openLog()
	if err != nil {
		return fail(1, err)
	}
	defer closeLog()
	wo.Source, wo.Log = conn.Source(), log
	w, err := writer.New(p, wo)
	if err != nil {
		return fail(2, err)
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if err := w.Run(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return fail(1, err)
	}
	fmt.Fprintf(os.Stderr, "fenceproof ceph-writer: %s from %s: %v\n", wo.ID, wo.Source, w.Counts())
	return 0
}
