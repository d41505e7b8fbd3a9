package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/csiproxy/conformance"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// These tests run the real fenceproof binary: the suite in one process
// (Ginkgo allows one run per process), the simulated host in-process or as
// its own process, gRPC over unix sockets between them.

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fenceproof-csiproxy-")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "fenceproof")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/fenceproof")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building fenceproof:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

type run struct {
	exit   int
	out    string
	result conformance.Result
	dir    string
}

func sanity(t *testing.T, args ...string) run {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"csiproxy-sanity", "--reports", dir, "--no-color"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("csiproxy-sanity %v did not finish:\n%s", args, out.String())
	}
	r := run{out: out.String(), dir: dir}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "csiproxy.json")); err == nil {
		if err := json.Unmarshal(b, &r.result); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r run) verdicts() map[string]conformance.Verdict {
	m := map[string]conformance.Verdict{}
	for _, rr := range r.result.Rules {
		m[rr.ID] = rr.Verdict
	}
	return m
}

// TestSimulatedHostConforms: against the faithful simulated host every rule
// passes (none skipped: the simulated host offers every resource).
func TestSimulatedHostConforms(t *testing.T) {
	r := sanity(t)
	if r.exit != 0 {
		t.Fatalf("exit %d:\n%s", r.exit, r.out)
	}
	for id, v := range r.verdicts() {
		if v != conformance.VerdictPass && !(id == "VER-003" && v == conformance.VerdictInfo) {
			t.Errorf("%s: %s", id, v)
		}
	}
	if n := len(r.result.Rules); n != len(conformance.AllRules()) {
		t.Errorf("%d rules in the report, want %d", n, len(conformance.AllRules()))
	}
	for _, f := range []string{"csiproxy.md", "csiproxy-junit.xml"} {
		b, err := os.ReadFile(filepath.Join(r.dir, f))
		if err != nil || !bytes.Contains(b, []byte("PATH-004")) || !bytes.Contains(b, []byte("LINK-006")) {
			t.Errorf("report %s missing or incomplete: %v", f, err)
		}
	}
	if strings.Contains(r.out, "sim-password") || strings.Contains(r.out, "not-a-real-password") {
		t.Errorf("a password appears in the output")
	}
}

// faultCases: each deliberately broken host and the exact set of MUST
// rules the suite must fail against it. Every restriction is covered by
// its skip= fault (added below from restrict.Rules).
var faultCases = []struct {
	fault string
	fails []string
}{
	{"drop=filesystem/v1", []string{"VER-001"}},
	{"drop=smb/v1beta1", nil}, // a beta version may go: nothing fails
	{"no-effect", []string{"FS-001", "FS-002", "FS-003", "VOL-001", "SMBAPI-001"}},
	{"effect-before-check", []string{"NOEFF-001"}},
	{"unknown-code", nil}, // CODE-001 is a SHOULD: a warning, see TestUnknownCodeWarns
	{"no-default-port", []string{"ISCSI-002"}},
}

func TestEveryFaultFailsExactlyItsRules(t *testing.T) {
	cases := append([]struct {
		fault string
		fails []string
	}{}, faultCases...)
	for _, r := range restrict.Rules {
		cases = append(cases, struct {
			fault string
			fails []string
		}{"skip=" + r.ID, []string{r.ID}})
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			r := sanity(t, "--sim-fault", c.fault)
			failed := r.result.Failed()
			slices.Sort(failed)
			want := slices.Clone(c.fails)
			slices.Sort(want)
			if !slices.Equal(failed, want) {
				t.Fatalf("failed rules %v, want exactly %v:\n%s", failed, want, r.out)
			}
			if wantExit := map[bool]int{true: 1, false: 0}[len(want) > 0]; r.exit != wantExit {
				t.Fatalf("exit %d, want %d", r.exit, wantExit)
			}
		})
	}
}

func TestUnknownCodeWarns(t *testing.T) {
	r := sanity(t, "--sim-fault", "unknown-code")
	if v := r.verdicts()["CODE-001"]; v != conformance.VerdictWarn {
		t.Fatalf("CODE-001 %s, want WARN:\n%s", v, r.out)
	}
}

// TestSeparateSimProcess runs csiproxy-sim as its own process and the
// suite against its socket directory, the way a user runs them.
func TestSeparateSimProcess(t *testing.T) {
	dir := t.TempDir()
	sim := exec.Command(bin, "csiproxy-sim", "--dir", dir)
	var out bytes.Buffer
	sim.Stdout, sim.Stderr = &out, &out
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Process.Kill(); _ = sim.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "csi-proxy-volume-v1")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("csiproxy-sim did not serve:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := sanity(t, "--endpoint", "unix://"+dir, "--scratch-disk", "2", "--iscsi-portal", "192.0.2.77",
		"--symlink-in-pods", `C:\var\lib\kubelet\pods\fenceproof-symlink`)
	if r.exit != 0 {
		t.Fatalf("exit %d:\n%s", r.exit, r.out)
	}
	v := r.verdicts()
	if v["SMBAPI-001"] != conformance.VerdictSkip {
		t.Errorf("SMBAPI-001 %s, want SKIP without --smb-share", v["SMBAPI-001"])
	}
	for _, id := range []string{"VOL-001", "ISCSIAPI-001", "LINK-006", "PATH-004"} {
		if v[id] != conformance.VerdictPass {
			t.Errorf("%s %s, want PASS", id, v[id])
		}
	}
}

func TestBadFlagsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"--sim-fault", "no-such-fault"},
		{"--sim-fault", "skip=NOPE-001"},
		{"--endpoint", "tcp://127.0.0.1:1"},
		{"--endpoint", "unix:///tmp/x", "--sim-fault", "no-effect"},
		{"extra"},
	} {
		if r := sanity(t, args...); r.exit != 2 {
			t.Errorf("%v: exit %d, want 2:\n%s", args, r.exit, r.out)
		}
	}
}
