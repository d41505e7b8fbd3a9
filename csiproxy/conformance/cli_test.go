package conformance_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/csiproxy/conformance"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
	"github.com/fenceproof/fenceproof/rulebook/clitest"
)

// These tests run the real fenceproof binary: the suite in one process
// (Ginkgo allows one run per process), the simulated host in-process or as
// its own process, gRPC over unix sockets between them.

func TestMain(m *testing.M) { clitest.Main(m, "../../cmd/fenceproof") }

// run is one run of `fenceproof csiproxy-sanity` and its JSON report.
type run struct {
	clitest.Run
	result conformance.Result
}

func sanity(t *testing.T, args ...string) run {
	t.Helper()
	var r run
	r.Run = clitest.RunSuite(t, 2*time.Minute, "csiproxy-sanity", "csiproxy.json", &r.result, args...)
	return r
}

func (r run) verdicts() map[string]rulebook.Verdict {
	m := map[string]rulebook.Verdict{}
	for _, rr := range r.result.Rules {
		m[rr.ID] = rr.Verdict
	}
	return m
}

// TestSimulatedHostConforms: against the faithful simulated host every rule
// passes (none skipped: the simulated host offers every resource).
func TestSimulatedHostConforms(t *testing.T) {
	r := sanity(t)
	if r.Exit != 0 {
		t.Fatalf("exit %d:\n%s", r.Exit, r.Out)
	}
	for id, v := range r.verdicts() {
		if v != rulebook.VerdictPass && !(id == "VER-003" && v == rulebook.VerdictInfo) {
			t.Errorf("%s: %s", id, v)
		}
	}
	if n := len(r.result.Rules); n != len(conformance.Rules()) {
		t.Errorf("%d rules in the report, want %d", n, len(conformance.Rules()))
	}
	for _, f := range []string{"csiproxy.md", "csiproxy.html", "csiproxy-junit.xml"} {
		b, err := os.ReadFile(filepath.Join(r.Dir, f))
		if err != nil || !bytes.Contains(b, []byte("PATH-004")) || !bytes.Contains(b, []byte("LINK-006")) {
			t.Errorf("report %s missing or incomplete: %v", f, err)
		}
	}
	if strings.Contains(r.Out, "sim-password") || strings.Contains(r.Out, "not-a-real-password") {
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
				t.Fatalf("failed rules %v, want exactly %v:\n%s", failed, want, r.Out)
			}
			if wantExit := map[bool]int{true: 1, false: 0}[len(want) > 0]; r.Exit != wantExit {
				t.Fatalf("exit %d, want %d", r.Exit, wantExit)
			}
		})
	}
}

// TestUnknownCodeWarns: a refusal with a code outside the two the rule
// names is a SHOULD not met: a warning, and a failure with --strict.
func TestUnknownCodeWarns(t *testing.T) {
	r := sanity(t, "--sim-fault", "unknown-code")
	if v := r.verdicts()["CODE-001"]; v != rulebook.VerdictWarn || r.Exit != 0 {
		t.Fatalf("CODE-001 %s, exit %d; want WARN, exit 0:\n%s", v, r.Exit, r.Out)
	}
	r = sanity(t, "--sim-fault", "unknown-code", "--strict")
	if v := r.verdicts()["CODE-001"]; v != rulebook.VerdictFail || r.Exit != 1 {
		t.Fatalf("--strict: CODE-001 %s, exit %d; want FAIL, exit 1:\n%s", v, r.Exit, r.Out)
	}
}

// TestSeparateSimProcess runs csiproxy-sim as its own process and the
// suite against its socket directory, the way a user runs them.
func TestSeparateSimProcess(t *testing.T) {
	dir := t.TempDir()
	sim := exec.Command(clitest.Bin, "csiproxy-sim", "--dir", dir)
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
	if r.Exit != 0 {
		t.Fatalf("exit %d:\n%s", r.Exit, r.Out)
	}
	v := r.verdicts()
	if v["SMBAPI-001"] != rulebook.VerdictSkip {
		t.Errorf("SMBAPI-001 %s, want SKIP without --smb-share", v["SMBAPI-001"])
	}
	for _, id := range []string{"VOL-001", "ISCSIAPI-001", "LINK-006", "PATH-004"} {
		if v[id] != rulebook.VerdictPass {
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
		{"--label-filter", "MUST && ("},
	} {
		if r := sanity(t, args...); r.Exit != 2 {
			t.Errorf("%v: exit %d, want 2:\n%s", args, r.Exit, r.Out)
		}
	}
}
