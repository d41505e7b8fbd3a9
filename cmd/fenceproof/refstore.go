package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fenceproof/fenceproof/refstore"
)

func init() {
	register("refstore", "run the reference storage service (audited writes, storage-side fence); 'refstore ctl' calls its admin API", runRefstore)
}

func runRefstore(args []string) int {
	if len(args) > 0 && args[0] == "ctl" {
		return runRefstoreCtl(args[1:])
	}
	fs := flag.NewFlagSet("refstore", flag.ContinueOnError)
	var o refstore.Options
	logFmt := fs.String("log-format", "json", "json | text")
	fs.StringVar(&o.Listen, "listen", ":7070", "TCP address of the write service")
	fs.StringVar(&o.Admin, "admin", "unix:///run/refstore/admin.sock", "admin API endpoint (HTTP/JSON), unix:///path.sock")
	fs.StringVar(&o.AdminTCP, "admin-tcp", "", "optional second admin listener host:port, guarded by --admin-token-file")
	fs.StringVar(&o.AdminTokenFile, "admin-token-file", "", "bearer token (>= 16 characters) for --admin-tcp")
	fs.StringVar(&o.AuditPath, "audit", "/var/lib/refstore/audit.log", "audit log: one fsynced JSON line per accepted write")
	fs.StringVar(&o.StatePath, "state", "", "persisted blocklist (default: blocklist.json next to --audit)")
	fs.StringVar(&o.RefusalsPath, "refusals", "", "refusals log (default: refused.log next to --audit)")
	fs.StringVar(&o.EnforcePath, "enforce-log", "", "blocklist changes with their enforcement time (default: enforce.log next to --audit)")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", 5*time.Minute, "close sessions silent this long")
	fs.IntVar(&o.MaxSessions, "max-sessions", 4096, "refuse connections beyond this many open sessions")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	switch *logFmt {
	case "json":
		o.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	case "text":
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	default:
		fmt.Fprintf(os.Stderr, "fenceproof refstore: --log-format %q: want json or text\n", *logFmt)
		return 2
	}
	s, err := refstore.New(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof refstore:", err)
		return 1
	}
	if err := s.Start(); err != nil {
		s.Stop()
		fmt.Fprintln(os.Stderr, "fenceproof refstore:", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	o.Logger.Info("signal received, stopping")
	s.Stop()
	return 0
}
