package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseDriverFlags(t *testing.T) {
	dir := t.TempDir()
	sf := filepath.Join(dir, "secrets.yaml")
	if err := os.WriteFile(sf, []byte("userID: admin\nuserKey: from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, ep, err := parseDriverFlags([]string{"--state", "s.db", "--endpoint", "tcp://127.0.0.1:0", "--secrets-file", sf,
		"--secret", "userKey=from-flag", "--require-param", "clusterID", "--protect-port", "6789", "--protect-port", "3300",
		"--client", "n1=192.0.2.10/32,2001:db8::10/128", "--fault", "race", "--fault", "delay=Fence:1s", "--no-get-clients",
		"--host-bits", "reject", "--backend", "nftables", "--netns", "new"})
	if err != nil {
		t.Fatal(err)
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
	} {
		_, _, err := parseDriverFlags(args)
		if err == nil {
			t.Errorf("parseDriverFlags(%q) accepted", args)
		} else if strings.Contains(err.Error(), "a-secret-value") {
			t.Errorf("error quotes a secret: %v", err)
		}
	}
}
