//go:build ceph

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/ceph/writer"
)

func init() {
	register("ceph-writer", "write RADOS objects in a loop, one JSON line per attempt (ok, -108, timeout); 'ceph-writer read-back' checks every acknowledged one", runCephWriter)
}

func runCephWriter(args []string) int {
	readBack := len(args) > 0 && args[0] == "read-back"
	if readBack {
		args = args[1:]
	}
	fs := flag.NewFlagSet("ceph-writer", flag.ContinueOnError)
	var co librados.Options
	var wo writer.Options
	fs.StringVar(&co.Conf, "conf", "", "ceph.conf path")
	fs.StringVar(&co.User, "user", "admin", `Ceph user without "client."`)
	fs.StringVar(&co.Keyring, "keyring", "", "keyring path")
	fs.StringVar(&co.Key, "key-file", "", "file holding the key (instead of a keyring)")
	fs.StringVar(&co.MonHost, "mon-host", "", "mon_host")
	fs.StringVar(&co.NetNS, "netns", "", "connect from this network namespace (path)")
	fs.DurationVar(&co.OSDTimeout, "op-timeout", 2*time.Second, "a write without an answer this long is a timeout (rados_osd_op_timeout)")
	pool := fs.String("pool", "fenceproof", "pool")
	fs.StringVar(&wo.ID, "id", "writer", "client id: the objects are <id>.<seq>")
	fs.DurationVar(&wo.Interval, "interval", 20*time.Millisecond, "between writes")
	fs.IntVar(&wo.Payload, "payload", 64, "bytes per object")
	logPath := fs.String("log", "", "attempt log (default standard output); read-back: the writer logs to check, comma-separated")
	duration := fs.Duration("duration", 0, "stop after this long (0: at SIGTERM/SIGINT)")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if co.Key != "" {
		raw, err := os.ReadFile(co.Key)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof ceph-writer:", err)
			return 2
		}
		co.Key = string(raw)
	}
	conn, err := librados.Dial(co)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof ceph-writer:", err)
		return 1
	}
	defer conn.Shutdown()
	p, err := conn.Pool(*pool)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof ceph-writer:", err)
		return 1
	}
	defer p.Close()
	if readBack {
		return runReadBack(p, *logPath, wo.Payload)
	}
	out := os.Stdout
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof ceph-writer:", err)
			return 1
		}
		defer f.Close()
		out = f
	}
	wo.Source, wo.Log = conn.Source(), out
	w, err := writer.New(p, wo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof ceph-writer:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	w.Run(ctx)
	fmt.Fprintf(os.Stderr, "fenceproof ceph-writer: %s from %s: %v\n", wo.ID, wo.Source, w.Counts())
	return 0
}

// runReadBack reads the objects of every acknowledged attempt of the given
// logs and prints one writer.ReadBack line per object; exit 1 if any is
// missing or wrong.
func runReadBack(p *librados.Pool, logs string, payload int) int {
	var attempts []writer.Attempt
	for _, path := range splitComma(logs) {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof ceph-writer read-back:", err)
			return 2
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var a writer.Attempt
			if json.Unmarshal(sc.Bytes(), &a) == nil && a.Object != "" {
				attempts = append(attempts, a)
			}
		}
		f.Close()
	}
	bad := 0
	enc := json.NewEncoder(os.Stdout)
	for _, rb := range writer.ReadAll(p, attempts, payload) {
		if rb.Result != writer.ReadOK {
			bad++
		}
		enc.Encode(rb)
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "fenceproof ceph-writer read-back: %d acknowledged objects missing or wrong\n", bad)
		return 1
	}
	return 0
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
