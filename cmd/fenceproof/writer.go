package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/refstore/writer"
)

func init() {
	register("writer", "write sequenced records to refstore until SIGTERM, one JSON line per attempt", runWriter)
}

func runWriter(args []string) int {
	fs := flag.NewFlagSet("writer", flag.ContinueOnError)
	var o writer.Options
	logPath := fs.String("log", "-", "attempt log: a file (appended) or - for stdout")
	fs.StringVar(&o.Server, "server", "", "refstore host:port (required)")
	fs.StringVar(&o.ID, "id", "", "client id (required; e.g. the pod name)")
	fs.StringVar(&o.Source, "source", "", "local IP to bind (default: chosen by the kernel)")
	fs.DurationVar(&o.Interval, "interval", 20*time.Millisecond, "time between writes")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Second, "per connect and per reply")
	fs.DurationVar(&o.MaxBackoff, "max-backoff", time.Second, "cap of the reconnect backoff after a refusal or error")
	fs.Uint64Var(&o.StartSeq, "start-seq", 0, "first sequence number (0: the current unix time in µs, so restarts never reuse one)")
	fs.IntVar(&o.Payload, "payload", 16, "payload bytes per write")
	duration := fs.Duration("duration", 0, "stop after this long (0: until SIGTERM)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 || o.Server == "" || o.ID == "" {
		fmt.Fprintln(os.Stderr, "fenceproof writer: --server and --id are required, and no arguments")
		return 2
	}
	var out io.Writer = os.Stdout
	if *logPath != "-" {
		f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof writer:", err)
			return 2
		}
		defer f.Close()
		out = f
	}
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
