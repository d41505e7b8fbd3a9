// Package sanityjob tests deploy/sanity-job: the kustomize base of the
// conformance suite as a Kubernetes Job, run.sh (render, run, fetch the
// reports from the Job's log, gate on the JUnit) and the CI recipes of
// docs/ci that call it. The Job itself runs on kind in suites/image.
package sanityjob

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/rulebook/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m, "../../cmd/fenceproof") }

// runSh runs a function of run.sh (sourced, so main does not run) with
// stdin, and returns its exit status and output.
func runSh(t *testing.T, stdin []byte, fn string, args ...string) (int, string) {
	t.Helper()
	// $0 is not run.sh's path, so sourcing it does not run its main.
	cmd := exec.Command("bash", append([]string{"-c", `source ./run.sh && "$@"`, "runsh-test", fn}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// jobRun is `fenceproof log-reports` around a sanity run against the
// reference driver, as the Job's container runs it: its exit status, its
// standard output (the Job's log) and the reports directory it archived.
func jobRun(t *testing.T, sanityArgs ...string) (code int, log []byte, dir string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "reports")
	args := append([]string{"log-reports", "--dir", dir, "--", "sanity", "--reports", dir, "--no-color",
		"--driver-backend", "memory", "--hold", "1s"}, sanityArgs...)
	cmd := exec.Command(clitest.Bin, args...)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.Bytes(), dir
}

// jobLogs caches the Job logs of jobRun by arguments: several tests read the
// same run's log (a run is a whole suite, seconds).
var jobLogs = map[string]struct {
	code int
	log  []byte
}{}

// jobLog is jobRun's exit status and log, run once per arguments.
func jobLog(t *testing.T, sanityArgs ...string) (int, []byte) {
	t.Helper()
	key := strings.Join(sanityArgs, "\x00")
	if r, ok := jobLogs[key]; ok {
		return r.code, r.log
	}
	code, log, _ := jobRun(t, sanityArgs...)
	jobLogs[key] = struct {
		code int
		log  []byte
	}{code, log}
	return code, log
}

// TestReportsTravelThroughTheJobLog: what the Job's container archives in
// its log, run.sh's extract_reports unpacks byte for byte; the begin line
// carries the exit status, and log-reports exits with the command's.
func TestReportsTravelThroughTheJobLog(t *testing.T) {
	code, log, dir := jobRun(t, "--driver-fault", "no-auth", "--label-filter", "ERR-003 || ERR-004")
	if code != 1 {
		t.Fatalf("log-reports around a broken driver's run: exit %d, want the suite's 1", code)
	}
	if !bytes.Contains(log, []byte("exit status 1 =====\n")) {
		t.Errorf("the archive's begin line does not carry the exit status:\n%s", clitest.Tail(string(log)))
	}
	out := t.TempDir()
	// A log may hold an earlier attempt's archive: the last one counts.
	stale := "===== fenceproof reports: old =====\nbm90IGEgdGFyLmd6Cg==\n===== end of fenceproof reports =====\n"
	if rc, msg := runSh(t, append([]byte(stale), log...), "extract_reports", out); rc != 0 {
		t.Fatalf("extract_reports: exit %d: %s", rc, msg)
	}
	want, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(want) < 4 {
		t.Fatalf("the run wrote %d reports, want the JUnit, JSON, Markdown and HTML", len(want))
	}
	for _, w := range want {
		a, _ := os.ReadFile(w)
		b, err := os.ReadFile(filepath.Join(out, filepath.Base(w)))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: extracted %d bytes (%v), the run wrote %d", filepath.Base(w), len(b), err, len(a))
		}
	}
	if rc, _ := runSh(t, []byte("no archive here\n"), "extract_reports", t.TempDir()); rc == 0 {
		t.Error("extract_reports found reports in a log without an archive")
	}
}

// TestJUnitGate: run.sh's gate passes the suite's exit status through, and
// fails a run that exited 0 while its JUnit holds a failure, or has no
// JUnit; it names the failed rules, here exactly those the fault table says
// the fault fails.
func TestJUnitGate(t *testing.T) {
	code, log := jobLog(t, "--driver-fault", "no-auth")
	out := t.TempDir()
	if rc, msg := runSh(t, log, "extract_reports", out); rc != 0 {
		t.Fatalf("extract_reports: %s", msg)
	}
	junit := filepath.Join(out, "sanity-junit.xml")
	rc, msg := runSh(t, nil, "junit_gate", junit, "1")
	var want []string
	for _, f := range fault.All() {
		if f.Name == "no-auth" {
			want = f.Proofs[0].Fails
		}
	}
	slices.Sort(want)
	if code != 1 || rc != 1 || !strings.Contains(msg, "failed: "+strings.Join(want, " ")+" ") {
		t.Errorf("no-auth: suite exit %d, gate exit %d, want 1 and 1 naming %v:\n%s", code, rc, want, msg)
	}

	code, log = jobLog(t)
	out = t.TempDir()
	if rc, msg := runSh(t, log, "extract_reports", out); rc != 0 || code != 0 {
		t.Fatalf("the faithful driver: suite exit %d, extract_reports exit %d: %s", code, rc, msg)
	}
	junit = filepath.Join(out, "sanity-junit.xml")
	if rc, msg := runSh(t, nil, "junit_gate", junit, "0"); rc != 0 {
		t.Errorf("a clean run's gate: exit %d:\n%s", rc, msg)
	}
	if rc, _ := runSh(t, nil, "junit_gate", junit, "3"); rc != 3 {
		t.Errorf("the gate of an INCOMPLETE run (exit 3): exit %d, want 3", rc)
	}
	if rc, _ := runSh(t, nil, "junit_gate", filepath.Join(out, "missing.xml"), "0"); rc != 1 {
		t.Errorf("the gate of a run without a JUnit: exit %d, want 1", rc)
	}
	b, _ := os.ReadFile(junit)
	tampered := strings.Replace(string(b), `status="passed"`, `status="failed"`, 1)
	tampered = strings.Replace(tampered, `failures="0"`, `failures="1"`, 1)
	if err := os.WriteFile(junit, []byte(tampered), 0o644); err != nil {
		t.Fatal(err)
	}
	if rc, msg := runSh(t, nil, "junit_gate", junit, "0"); rc != 1 || !strings.Contains(msg, "failed: IDENT-001") {
		t.Errorf("exit 0 with a failed case in the JUnit: gate exit %d, want 1 naming IDENT-001:\n%s", rc, msg)
	}
}
