package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fenceproof/fenceproof/fencing/pathwriter"
)

func init() {
	register("path-writer", "write numbered, checksummed records to a mounted path with O_DIRECT|O_DSYNC, one JSON line per attempt; 'path-writer read' reads them back (the writer contract)", runPathWriter)
}

func runPathWriter(args []string) int {
	var w writerFlags
	args = w.mode(args)
	fs := flag.NewFlagSet("path-writer", flag.ContinueOnError)
	w.bind(fs)
	dir := fs.String("dir", "", "the mounted path (required)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, "fenceproof path-writer:", err)
		return code
	}
	if *dir == "" || w.id == "" && (!w.readMode || w.read == "") {
		return fail(2, errors.New("--dir and --id (or $FENCEPROOF_WRITER) are required"))
	}
	if w.readMode {
		recs, done, err := pathwriter.ReadBack(*dir, w.readIDs())
		if err != nil {
			return fail(1, err)
		}
		printRead(recs, done)
		return 0
	}
	log, closeLog, err := w.openLog()
	if err != nil {
		return fail(2, err)
	}
	defer closeLog()
	pw, err := pathwriter.New(pathwriter.Options{Dir: *dir, ID: w.id, Node: w.node, Interval: w.interval, Log: log})
	if err != nil {
		return fail(2, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err = pw.Run(ctx)
	fmt.Fprintf(os.Stderr, "fenceproof path-writer: %s on %s into %s: %v\n", w.id, w.node, pw.Path(), pw.Counts())
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail(1, err)
	}
	return 0
}
