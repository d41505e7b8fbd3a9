package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoClientGo pins why the probe's wire format is a package of its own
// (isolation/probeline): the probe runs in every e2e pod and must stay a
// small static binary, so nothing Kubernetes may be linked in.
func TestNoClientGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v (no go tool here)", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/") || strings.HasPrefix(dep, "sigs.k8s.io/") {
			t.Errorf("cmd/probe depends on %s", dep)
		}
	}
}
