package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// writerFlags are the flags every writer command takes, defaulting to the
// writer contract's environment (fencing/contract), so that one pod
// template serves both modes: FENCEPROOF_MODE=read, or "read" as the
// first argument, reads back instead of writing.
type writerFlags struct {
	id, node, logPath, logCopy, read string
	interval                         time.Duration
	readMode                         bool
}

func (w *writerFlags) bind(fs *flag.FlagSet) {
	interval := 20 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv(contract.EnvInterval)); err == nil && d > 0 {
		interval = d
	}
	fs.StringVar(&w.id, "id", os.Getenv(contract.EnvWriter), "writer id (default $"+contract.EnvWriter+")")
	fs.StringVar(&w.node, "node", os.Getenv(contract.EnvNode), "the node this runs on, logged and written in every record (default $"+contract.EnvNode+")")
	fs.DurationVar(&w.interval, "interval", interval, "time between writes (default $"+contract.EnvInterval+", else 20ms)")
	fs.StringVar(&w.logPath, "log", "-", "attempt log: a file (appended) or - for standard output")
	fs.StringVar(&w.logCopy, "log-copy", "", "also append every attempt line to this file (default $"+contract.EnvLogDir+"/<id>.log when set)")
	fs.StringVar(&w.read, "read", os.Getenv(contract.EnvRead), "read mode: the writer ids to read back, comma-separated (default $"+contract.EnvRead+", else --id)")
}

// mode strips a leading "read" argument and tells the mode.
func (w *writerFlags) mode(args []string) []string {
	w.readMode = os.Getenv(contract.EnvMode) == contract.ModeRead
	if len(args) > 0 && args[0] == "read" {
		w.readMode = true
		return args[1:]
	}
	return args
}

// readIDs are the writers read mode reads.
func (w *writerFlags) readIDs() []string {
	if w.read == "" {
		return []string{w.id}
	}
	return strings.Split(w.read, ",")
}

// openLog opens the attempt log and its copy; close closes both.
func (w *writerFlags) openLog() (out io.Writer, close func(), err error) {
	if w.logCopy == "" && os.Getenv(contract.EnvLogDir) != "" && w.id != "" {
		w.logCopy = filepath.Join(os.Getenv(contract.EnvLogDir), w.id+".log")
	}
	var files []*os.File
	close = func() {
		for _, f := range files {
			f.Close()
		}
	}
	out = os.Stdout
	if w.logPath != "-" {
		f, err := os.OpenFile(w.logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, close, err
		}
		files, out = append(files, f), f
	}
	if w.logCopy != "" {
		f, err := os.OpenFile(w.logCopy, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			close()
			return nil, func() {}, err
		}
		files, out = append(files, f), io.MultiWriter(out, f)
	}
	return out, close, nil
}

// printRead prints a read-back: one JSON line per record, then read_done.
func printRead(recs []contract.Record, done contract.ReadDone) {
	enc := json.NewEncoder(os.Stdout)
	for _, r := range recs {
		enc.Encode(r)
	}
	enc.Encode(done)
	fmt.Fprintf(os.Stderr, "read %d records of %v\n", len(recs), done.Writers)
}
