package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsolationCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	chain := "chain:\n  namespace: mods\n  modules:\n  - {name: m0, podSelector: {module: m0}, ports: [{port: 80}]}\n"
	good := write("good.yaml", "name: nb\nnamespace: apps\nselector:\n  workloadLocations:\n  - ipBlock: {cidr: \"{{ip \"apps/w\"}}/32\"}\n"+chain)
	empty := write("empty.yaml", "name: nb\nnamespace: apps\nselector: {}\n"+chain)
	bad := write("bad.yaml", "name: nb\nnamespace: apps\nselector:\n  workloadLocations:\n  - ipBlock: {cidr: 10.0.0.0/8, except: [11.0.0.0/16]}\n"+chain)
	tests := []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"-f", good, "-ip", "apps/w=192.0.2.7"}, 0, "cidr: 192.0.2.7/32", ""},
		{[]string{"-f", good}, 1, "", "no address for pod"},
		{[]string{"-f", empty}, 0, "", "no policies"},
		{[]string{"-f", bad}, 1, "", "not strictly inside"},
		{[]string{}, 2, "", "usage"},
		{[]string{"-f", good, "-ip", "nonsense"}, 2, "", "ns/pod=ADDR"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		code := isolationMain(tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, out.String(), errb.String(), tc.code, tc.out, tc.err)
		}
	}
}
