package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEndpointComesFromFlagOrConfigOnly pins the bug where an undocumented
// $ENDPOINT silently redirected a run: only --endpoint and the config file
// name the driver, and the run says which one did. A set $ENDPOINT is
// reported as not read, and the run tests what the flags say (here the
// reference driver), never the environment's endpoint.
func TestEndpointComesFromFlagOrConfigOnly(t *testing.T) {
	dir := t.TempDir()
	missing := "unix://" + filepath.Join(dir, "missing.sock")
	env := []string{"ENDPOINT=" + missing}
	quick := []string{"--connect-timeout", "1s", "--no-color"}

	code, out, _ := fenceproofEnv(t, env, append([]string{"sanity", "--reports", filepath.Join(dir, "flag"), "--endpoint", "unix://" + filepath.Join(dir, "flag.sock")}, quick...)...)
	if code != 4 || !strings.Contains(out, "endpoint unix://"+filepath.Join(dir, "flag.sock")+" (from --endpoint)") {
		t.Errorf("--endpoint: exit %d, want 4 (nothing listens) and the endpoint named with its source:\n%s", code, out)
	}

	config := filepath.Join(dir, "sanity.yaml")
	if err := os.WriteFile(config, []byte("endpoint: unix://"+filepath.Join(dir, "config.sock")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = fenceproofEnv(t, env, append([]string{"sanity", "--reports", filepath.Join(dir, "config"), "--config", config}, quick...)...)
	if code != 4 || !strings.Contains(out, "(from --config "+config+")") {
		t.Errorf("--config: exit %d, want 4 and the config file named as the endpoint's source:\n%s", code, out)
	}

	reports := filepath.Join(dir, "env")
	code, out, errOut := fenceproofEnv(t, env, append([]string{"sanity", "--reports", reports, "--driver-backend", "memory",
		"--label-filter", "IDENT-001", "--hold", "0s"}, quick...)...)
	if !strings.Contains(errOut, "$ENDPOINT is set but not read") {
		t.Errorf("no word that $ENDPOINT is ignored:\n%s", errOut)
	}
	var rep struct{ Endpoint string }
	b, err := os.ReadFile(filepath.Join(reports, "sanity.json"))
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil || rep.Endpoint == "" || rep.Endpoint == missing {
		t.Errorf("exit %d: the run's endpoint is %q (%v), want the reference driver's, never $ENDPOINT's:\n%s%s", code, rep.Endpoint, err, out, errOut)
	}
}
