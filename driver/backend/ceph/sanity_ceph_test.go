//go:build ceph

package ceph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/sanity"
)

// driverProc is `fenceproof driver --backend ceph` run as its own process
// by a start script, which is also the suite's --restart-command (it stops
// the running driver first).
type driverProc struct {
	dir    string
	script string
}

// Secrets and parameters the sanity runs configure, so the error-table
// rules run too.
var sanitySecurity = []string{"--secret", "userKey=ceph-sanity-secret", "--param", "clusterID=ceph-1"}

func startDriverProc(t *testing.T, extra ...string) *driverProc {
	t.Helper()
	dir, err := os.MkdirTemp("", "fpcs") // short: unix socket path limit
	if err != nil {
		t.Fatal(err)
	}
	args := []string{env.bin, "driver", "--backend", "ceph", "--ceph-conf", env.fencer.Conf, "--ceph-user", env.fencer.Name,
		"--ceph-netns", env.fencer.NetNSPath(), "--state", filepath.Join(dir, "fences.db"), "--endpoint", "unix://" + filepath.Join(dir, "d.sock"),
		"--secret", "userKey=ceph-sanity-secret", "--require-param", "clusterID=ceph-1"}
	args = append(args, extra...)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	script := fmt.Sprintf(`#!/bin/sh
# Stops the running driver (SIGTERM, then waits), starts it again.
d=%q
if [ -f "$d/pid" ]; then
  p=$(cat "$d/pid"); kill "$p" 2>/dev/null
  i=0; while kill -0 "$p" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
  kill -9 "$p" 2>/dev/null
fi
rm -f "$d/d.sock"
%s >> "$d/driver.log" 2>&1 &
echo $! > "$d/pid"
i=0; while [ ! -S "$d/d.sock" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
[ -S "$d/d.sock" ] || { echo "driver did not start:"; tail -20 "$d/driver.log"; exit 1; }
`, dir, strings.Join(quoted, " "))
	p := &driverProc{dir: dir, script: filepath.Join(dir, "start.sh")}
	if err := os.WriteFile(p.script, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", p.script).CombinedOutput(); err != nil {
		t.Fatalf("starting the driver: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if raw, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil {
				syscall.Kill(pid, syscall.SIGTERM)
				for i := 0; i < 200 && syscall.Kill(pid, 0) == nil; i++ {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(dir, "driver.log"))
			t.Logf("driver log (end):\n%s", tailLines(string(log), 30))
		}
		os.RemoveAll(dir)
	})
	return p
}

func (p *driverProc) endpoint() string { return "unix://" + filepath.Join(p.dir, "d.sock") }

// sanityResult is one `fenceproof sanity` run.
type sanityResult struct {
	exit   int
	out    string
	took   time.Duration
	result sanity.Result
}

func runSanity(t *testing.T, reports string, p *driverProc, args ...string) sanityResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	args = append([]string{"sanity", "--endpoint", p.endpoint(), "--reports", reports, "--no-color", "--restart-command", "sh " + p.script}, append(sanitySecurity, args...)...)
	cmd := exec.CommandContext(ctx, env.bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	r := sanityResult{out: out.String(), took: time.Since(t0)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("fenceproof sanity: %v\n%s", err, tailLines(r.out, 40))
	}
	raw, err := os.ReadFile(filepath.Join(reports, "sanity.json"))
	if err != nil {
		t.Fatalf("no sanity.json (exit %d):\n%s", r.exit, tailLines(r.out, 40))
	}
	if err := json.Unmarshal(raw, &r.result); err != nil {
		t.Fatal(err)
	}
	return r
}

func tailLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// enforceCommand is the suite's --enforce-command on this cluster: a
// librados write with the neighbour writer's credentials from a namespace
// holding the address (IPv4 only: the daemons bind IPv4, so IPv6 is
// untestable and the runs that use it make IPv6 optional).
func enforceCommand() []string {
	return []string{"--enforce-command", fmt.Sprintf("%s ceph-write-probe --dir %s --client %s", env.bin, env.c.Dir(), env.neighbour.Name), "--ipv6", "optional"}
}

// TestSanityOnCeph runs the conformance suite, as `fenceproof sanity`,
// against `fenceproof driver --backend ceph` on the real cluster, with
// secrets, a required parameter, the restart command and the enforce
// command configured so that every rule runs: exit 0, every MUST passed
// (ENFORCE-001 on IPv4; its IPv6 case NOT SUPPORTED). The reports go to
// $FP_CEPH_REPORTS/sanity-ceph/.
func TestSanityOnCeph(t *testing.T) {
	need(t)
	p := startDriverProc(t)
	reports := filepath.Join(reportDir(t), "sanity-ceph")
	os.MkdirAll(reports, 0o755)
	r := runSanity(t, reports, p, append([]string{"--destructive"}, enforceCommand()...)...)
	must, passed := 0, 0
	var bad []string
	for _, rr := range r.result.Rules {
		if rr.Level == sanity.Must {
			must++
			if rr.Verdict == sanity.VerdictPass {
				passed++
			} else {
				bad = append(bad, fmt.Sprintf("%s %s: %s", rr.ID, rr.Verdict, rr.Reason))
			}
		}
	}
	if r.exit != 0 || len(bad) > 0 {
		t.Fatalf("fenceproof sanity against the Ceph backend: exit %d; MUST rules not passed: %v\n%s", r.exit, bad, tailLines(r.out, 30))
	}
	t.Logf("FIGURES sanity on Ceph: exit %d, %d rules, %d MUST all passed, %s (%s)", r.exit, len(r.result.Rules), must, r.took.Round(time.Second), r.result.Summary())
}

// TestSuiteFaultsFailOnCeph: broken drivers of the suite's fault table,
// run with the Ceph backend, still fail their rules (the faults live in
// the driver's core, so the backend must not hide them): one of each kind
// (List, Unfence, Fence, concurrency, restart, deadline).
func TestSuiteFaultsFailOnCeph(t *testing.T) {
	need(t)
	for _, c := range []struct {
		fault string
		rules []string
		args  []string
	}{
		{"drop-list", []string{"FENCE-001"}, nil},
		{"unfence-noop", []string{"FENCE-001"}, nil},
		{"first-only", []string{"FENCE-005"}, nil},
		{"race", []string{"CONC-002"}, nil},
		{"forget-on-restart", []string{"RESTART-001"}, nil},
		{"delay=Fence:10m", []string{"TIME-001"}, []string{"--rpc-timeout", "1s"}},
		{"enforce-neighbour", []string{"ENFORCE-001"}, enforceCommand()},
	} {
		t.Run(c.fault, func(t *testing.T) {
			var want []string
			for _, fp := range fault.Proofs() {
				if fp.Spec == c.fault && len(fp.Flags) == len(c.args) {
					for _, id := range fp.Fails {
						if slices.Contains(c.rules, id) {
							want = append(want, id)
						}
					}
				}
			}
			for _, id := range c.rules {
				// Faults proven by a test of their own (RESTART-001's).
				if how, ok := fault.ProvenOtherwise[id]; ok && strings.Contains(how, "`"+c.fault+"`") {
					want = append(want, id)
				}
			}
			if len(want) == 0 {
				t.Fatalf("neither the fault table nor ProvenOtherwise says %s fails %v", c.fault, c.rules)
			}
			// A fault that forgets or delays fences leaves blocklist
			// entries its run could not undo; the next fault's run must
			// start from an empty blocklist (ENFORCE-001 refuses to judge
			// a driver while a write is refused before any fence).
			if _, _, err := env.admin.MonCommand([]byte(`{"prefix":"osd blocklist clear"}`)); err != nil {
				t.Fatalf("clearing the blocklist: %v", err)
			}
			p := startDriverProc(t, "--fault", c.fault)
			r := runSanity(t, t.TempDir(), p, append([]string{"--label-filter", strings.Join(c.rules, " || ")}, c.args...)...)
			var got []string
			for _, rr := range r.result.Rules {
				if rr.Verdict == sanity.VerdictFail {
					got = append(got, rr.ID)
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if r.exit != 1 || !slices.Equal(got, want) {
				t.Fatalf("fault %s on Ceph: exit %d, failing %v, want exit 1 failing %v\n%s", c.fault, r.exit, got, want, tailLines(r.out, 20))
			}
		})
	}
}
