package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFencingExitStatus: bad flags 2, an API server that does not answer
// 4 (nothing created, no report), the judge's replay of a missing run 2;
// the statuses fenceproof sanity gives the same meanings.
func TestFencingExitStatus(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c
`), 0o600)
	names := []string{"--kubeconfig", kc, "--node", "n", "--namespace", "ns", "--class", "c", "--storage", "refstore", "--refstore", "10.0.0.1:7070", "--reports", dir, "--name", "t1"}
	for _, c := range []struct {
		args []string
		want int
	}{
		{names, 4},
		{append(names[:len(names):len(names)], "--cidrs-from", "somewhere"), 2},
		{append(names[:len(names):len(names)], "--secret", "ns/s"), 2},
		{append(names[:len(names):len(names)], "--cut-command", "true"), 2},
		{[]string{"--node", "n"}, 2},
		{[]string{"--bogus"}, 2},
		{[]string{"judge", filepath.Join(dir, "none")}, 2},
		{[]string{"judge"}, 2},
		{[]string{"cleanup", "--run", "x"}, 2},
		{[]string{"agent"}, 2},
	} {
		if got := runFencing(c.args); got != c.want {
			t.Errorf("fencing %v: exit %d, want %d", c.args, got, c.want)
		}
	}
}
