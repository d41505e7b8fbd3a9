package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/refstore/writer"
)

func init() {
	register("writer", "write sequenced records to refstore until SIGTERM, one JSON line per attempt; 'writer read' reads them back (the writer contract)", runWriter)
}

func runWriter(args []string) int {
	var wf writerFlags
	args = wf.mode(args)
	fs := flag.NewFlagSet("writer", flag.ContinueOnError)
	var o writer.Options
	wf.bind(fs)
	fs.StringVar(&o.Server, "server", "", "refstore host:port (required)")
	fs.StringVar(&o.Source, "source", "", "local IP to bind (default: chosen by the kernel)")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Second, "per connect and per reply")
	fs.DurationVar(&o.MaxBackoff, "max-backoff", time.Second, "cap of the reconnect backoff after a refusal or error")
	fs.Uint64Var(&o.StartSeq, "start-seq", 0, "first sequence number (0: the current unix time in µs, so restarts never reuse one)")
	fs.IntVar(&o.Payload, "payload", -1, "payload bytes per write (default: the writer contract's record with --node, else 16 bytes)")
	duration := fs.Duration("duration", 0, "stop after this long (0: until SIGTERM)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || o.Server == "" || wf.id == "" && (!wf.readMode || wf.read == "") {
		fmt.Fprintln(os.Stderr, "fenceproof writer: --server and --id are required, and no arguments")
		return 2
	}
	if wf.readMode {
		recs, done, err := writer.ReadBack(o.Server, wf.readIDs(), time.Minute)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof writer read:", err)
			return 1
		}
		printRead(recs, done)
		return 0
	}
	o.ID, o.Node, o.Interval = wf.id, wf.node, wf.interval
	if o.Payload < 0 {
		o.Payload = map[bool]int{true: 0, false: 16}[o.Node != ""]
	}
	out, closeLog, err := wf.openLog()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof writer:", err)
		return 2
	}
	defer closeLog()
	o.Log = out
	w, err := writer.New(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof writer:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	err = w.Run(ctx)
	c := w.Counts()
	fmt.Fprintf(os.Stderr, "fenceproof writer: %s: ok %d, refused %d, error %d\n", o.ID, c[writer.OutcomeOK], c[writer.OutcomeRefused], c[writer.OutcomeError])
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintln(os.Stderr, "fenceproof writer:", err)
		return 1
	}
	return 0
}
