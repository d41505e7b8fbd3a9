package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/fenceproof/fenceproof/refstore"
)

func TestRefstoreCtl(t *testing.T) {
	dir, err := os.MkdirTemp("", "rc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := refstore.New(refstore.Options{Listen: "127.0.0.1:0", Admin: "unix://" + filepath.Join(dir, "a.sock"),
		AuditPath: filepath.Join(dir, "audit.log"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	ep := "unix://" + filepath.Join(dir, "a.sock")
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--admin", ep, "set", "192.0.2.0/24"}, 0},
		{[]string{"--admin", ep, "set", "192.0.2.7"}, 2},
		{[]string{"--admin", ep, "blocklist"}, 0},
		{[]string{"--admin", ep, "clients"}, 0},
		{[]string{"--admin", ep, "stats"}, 0},
		{[]string{"--admin", ep, "frob"}, 2},
		{[]string{"--admin", ep, "dump", "audit"}, 0},
		{[]string{"--admin", ep, "dump", "enforce"}, 0},
		{[]string{"--admin", ep, "dump", "secrets"}, 2},
		{[]string{"--admin", "unix://" + filepath.Join(dir, "none.sock"), "stats"}, 1},
		{[]string{"--admin", "http://x", "stats"}, 2},
		{nil, 2},
	} {
		if got := runRefstoreCtl(c.args); got != c.want {
			t.Errorf("refstore ctl %v: exit %d, want %d", c.args, got, c.want)
		}
	}
	if got := s.Blocklist().Strings(); len(got) != 1 || got[0] != "192.0.2.0/24" {
		t.Fatalf("blocklist after ctl set and a rejected set: %v", got)
	}
	if got := runRefstore([]string{"--listen", "127.0.0.1:0", "extra"}); got != 2 {
		t.Errorf("refstore with an extra argument: exit %d, want 2", got)
	}
	if got := runWriter([]string{"--server", "127.0.0.1:1"}); got != 2 {
		t.Errorf("writer without --id: exit %d, want 2", got)
	}
}

func TestDriverRefstoreFlags(t *testing.T) {
	cmd, err := parseDriverFlags([]string{"--state", "s.db", "--backend", "refstore", "--refstore-admin", "unix:///run/refstore/admin.sock",
		"--refstore-token-file", "/etc/refstore/token", "--fault", "ack-before-enforce=2s"})
	o := cmd.o
	if err != nil || o.Backend != "refstore" || o.RefstoreAdmin != "unix:///run/refstore/admin.sock" || o.RefstoreTokenFile != "/etc/refstore/token" {
		t.Fatalf("%+v %v", o, err)
	}
	for _, args := range [][]string{
		{"--state", "s", "--backend", "refstore"},
		{"--state", "s", "--refstore-admin", "unix:///x.sock"},
		{"--state", "s", "--fault", "ack-before-enforce=never"},
	} {
		if _, err := parseDriverFlags(args); err == nil {
			t.Errorf("parseDriverFlags(%q) accepted", args)
		}
	}
}
