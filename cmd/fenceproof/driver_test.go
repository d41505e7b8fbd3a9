package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/driver/store"
)

func TestParseDriverFlags(t *testing.T) {
	dir := t.TempDir()
	sf := filepath.Join(dir, "secrets.yaml")
	if err := os.WriteFile(sf, []byte("userID: admin\nuserKey: from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, err := parseDriverFlags([]string{"--state", "s.db", "--endpoint", "tcp://127.0.0.1:0", "--secrets-file", sf,
		"--secret", "userKey=from-flag", "--require-param", "clusterID", "--protect-port", "6789", "--protect-port", "3300",
		"--client", "n1=192.0.2.10/32,2001:db8::10/128", "--fault", "race", "--fault", "delay=Fence:1s", "--no-get-clients",
		"--host-bits", "reject", "--backend", "nftables", "--netns", "new", "--protect", "10.0.0.0/24", "--protect", "fd00::/64",
		"--max-prefix", "8,32", "--table", "fp-b", "--reconcile-interval", "2s", "--tls-cert", "c.pem", "--tls-key", "k.pem"})
	if err != nil {
		t.Fatal(err)
	}
	o, ep := cmd.o, cmd.endpoint
	if len(o.Protect) != 2 || o.MaxPrefix != "8,32" || o.Table != "fp-b" || o.ReconcileInterval != 2*time.Second ||
		o.TLS.Cert != "c.pem" || o.TLS.Key != "k.pem" || o.MaxMessageBytes != 1<<20 {
		t.Fatalf("parsed %+v", o)
	}
	if ep != "tcp://127.0.0.1:0" || o.StatePath != "s.db" || o.Secrets["userID"] != "admin" || o.Secrets["userKey"] != "from-flag" ||
		len(o.RequiredParameters) != 1 || len(o.ProtectedPorts) != 2 || o.ProtectedPorts[1] != 3300 ||
		len(o.StaticClients) != 1 || len(o.StaticClients[0].Addresses) != 2 || len(o.Faults) != 2 || !o.DisableGetClients ||
		o.HostBits != "reject" || o.Backend != "nftables" || o.NetNS != "new" || o.Logger == nil {
		t.Fatalf("parsed %+v endpoint %q", o, ep)
	}
	bad := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("- a-secret-value\n"), 0o600)
	if bad != nil {
		t.Fatal(bad)
	}
	for _, args := range [][]string{
		{},
		{"--state", "s", "--fault", "bogus"},
		{"--state", "s", "--protect-port", "70000"},
		{"--state", "s", "--client", "noequals"},
		{"--state", "s", "--secret", "novalue"},
		{"--state", "s", "--log-level", "loud"},
		{"--state", "s", "--log-format", "xml"},
		{"--state", "s", "--secrets-file", filepath.Join(dir, "bad.yaml")},
		{"--state", "s", "extra"},
		{"--state", "s", "--max-prefix", "0/0"},
		{"--state", "s", "--protect", "10.0.0.1"},
	} {
		_, err := parseDriverFlags(args)
		if err == nil {
			t.Errorf("parseDriverFlags(%q) accepted", args)
		} else if strings.Contains(err.Error(), "a-secret-value") {
			t.Errorf("error quotes a secret: %v", err)
		}
	}
}

// TestVerifyState: --verify-state exits 0 on a sound file, 1 naming the
// problem on a corrupt one, and never modifies either.
func TestVerifyState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(store.State{"192.0.2.0/24": {Seq: 1, Count: 1}, "2001:db8::/32": {Seq: 2, Count: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if code := runDriver([]string{"--verify-state", path}); code != 0 {
		t.Fatalf("sound file: exit %d", code)
	}
	raw, _ := os.ReadFile(path)
	i := bytes.Index(raw, []byte("192.0.2.0/24"))
	if i < 0 {
		t.Fatal("record not found in the file")
	}
	raw[i+10] ^= 0x04 // "/24" becomes "/64"... a different, still parseable key
	bad := filepath.Join(t.TempDir(), "bad.db")
	if err := os.WriteFile(bad, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := runDriver([]string{"--verify-state", bad}); code != 1 {
		t.Fatalf("flipped record: exit %d, want 1", code)
	}
	after, _ := os.ReadFile(bad)
	if !bytes.Equal(after, raw) {
		t.Fatal("--verify-state modified the file")
	}
	if code := runDriver([]string{"--verify-state", filepath.Join(t.TempDir(), "missing.db")}); code != 1 {
		t.Fatalf("missing file: exit %d, want 1", code)
	}
}
