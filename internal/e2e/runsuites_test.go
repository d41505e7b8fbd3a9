package e2e

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// runSuites runs fixtures/cluster/run-suites.sh (make e2e) against an
// existing-cluster kubeconfig with a stand-in for make that records each
// target and fails the ones named *fail*.
func runSuites(t *testing.T, kubeconfig string, targets ...string) (out string, code int, reports, calls string) {
	t.Helper()
	return runSuitesEnv(t, nil, kubeconfig, targets...)
}

// runSuitesEnv is runSuites with more environment (it wins, e.g. REPORTS:
// the reports are then read there); the stand-in for make
// also records in DIR/peaks how many targets ran at once when each started,
// and sleeps $SLEEP seconds.
func runSuitesEnv(t *testing.T, env []string, kubeconfig string, targets ...string) (out string, code int, reports, calls string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "fixtures", "cluster", "run-suites.sh")
	dir := t.TempDir()
	reports, calls = filepath.Join(dir, "reports"), filepath.Join(dir, "calls")
	fakeMake := filepath.Join(dir, "make")
	os.WriteFile(fakeMake, []byte(`#!/bin/bash
t=${@: -1}
d=`+dir+`
( flock 9; echo "$t $E2E_KUBECONFIG" >> `+calls+`; n=$(( $(cat $d/running 2>/dev/null || echo 0) + 1 )); echo $n > $d/running; echo $n >> $d/peaks ) 9> $d/lk
sleep ${SLEEP:-0}
( flock 9; echo $(( $(cat $d/running) - 1 )) > $d/running ) 9> $d/lk
echo "suite output of $t"
if [[ $t == *cases* ]]; then
  s=${t#e2e-}; s=${s//-/}; st=passed; [[ $t != *fail* ]] || st=failed
  printf '%s\n' '<testsuites><testsuite name="x">' \
    '<testcase name="[BeforeSuite]" classname="x" status="passed" time="0"></testcase>' \
    '<testcase name="[It] d CASES-001 one [suite:x, area:a]" classname="x" status="passed" time="0"></testcase>' \
    '<testcase name="[It] d tab CASES-002 two &amp; more" classname="x" status="'$st'" time="0"><failure message="m">[FAILED] m</failure></testcase>' \
    '<testcase name="[It] d CASES-003 three" classname="x" status="skipped" time="0"></testcase>' \
    '<testcase name="[AfterSuite]" classname="x" status="'$st'" time="0"></testcase>' \
    '</testsuite></testsuites>' > "$REPORTS/e2e-$s-junit.xml"
fi
[[ $t != *fail* ]] || { printf '  \033[31m[FAILED]\033[0m the reason of %s\n  In [It] at: x_test.go:1\n' "$t"; for i in $(seq 40); do echo "later output $i"; done; exit 1; }
`), 0o755)
	cmd := exec.Command("bash", append([]string{script}, targets...)...)
	cmd.Env = append(append(os.Environ(), "MAKE="+fakeMake, "E2E_KUBECONFIG="+kubeconfig, "REPORTS="+reports,
		"FENCEPROOF_CACHE="+filepath.Join(dir, "cache")), env...)
	b, err := cmd.CombinedOutput()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(b), code, reports, calls
}

// TestMakeE2ERunsEverySuiteOnOneCluster: every target runs on the given
// cluster even after one fails, the run exits 1, and the summary names each
// target's verdict.
func TestMakeE2ERunsEverySuiteOnOneCluster(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\n"), 0o600)
	out, code, reports, calls := runSuites(t, kc, "e2e-a", "e2e-fail", "e2e-b")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (one suite failed):\n%s", code, out)
	}
	got, _ := os.ReadFile(calls)
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	slices.Sort(lines)
	if want := []string{"e2e-a " + kc, "e2e-b " + kc, "e2e-fail " + kc}; !slices.Equal(lines, want) {
		t.Errorf("targets run (target kubeconfig):\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	summary, err := os.ReadFile(filepath.Join(reports, "e2e-summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| e2e-a | PASSED |", "| e2e-fail | FAILED (exit 1) |", "| e2e-b | PASSED |", "1 of 3 suite(s) failed", "nothing built, created or deleted"} {
		if !strings.Contains(string(summary), want) || !strings.Contains(out, strings.Fields(strings.Trim(want, "| "))[0]) {
			t.Errorf("summary lacks %q:\n%s\noutput:\n%s", want, summary, out)
		}
	}
	var junit struct {
		Suite struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string  `xml:"name,attr"`
				Failure *string `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	x, _ := os.ReadFile(filepath.Join(reports, "e2e-summary.xml"))
	if err := xml.Unmarshal(x, &junit); err != nil {
		t.Fatalf("e2e-summary.xml: %v\n%s", err, x)
	}
	if s := junit.Suite; s.Tests != 3 || s.Failures != 1 || len(s.Cases) != 3 || s.Cases[1].Name != "e2e-fail" ||
		s.Cases[1].Failure == nil || s.Cases[0].Failure != nil || s.Cases[2].Failure != nil {
		t.Errorf("e2e-summary.xml: %+v\n%s", s, x)
	}
	// A cut CI log keeps its end: the failure's message is repeated there,
	// after the summary, without colours.
	if i := strings.LastIndex(out, "total "); i < 0 || !strings.Contains(out[i:], "[FAILED] the reason of e2e-fail\n  In [It] at: x_test.go:1") {
		t.Errorf("the failure is not repeated after the summary:\n%s", out)
	}
	if log, _ := os.ReadFile(filepath.Join(reports, "e2e-fail.log")); !strings.Contains(string(log), "suite output of e2e-fail") {
		t.Errorf("the failing suite's log was not kept: %q", log)
	}

	if out, code, _, _ := runSuites(t, kc, "e2e-a", "e2e-b"); code != 0 {
		t.Errorf("every suite passed: exit %d, want 0:\n%s", code, out)
	}
}

// TestMakeE2ESummaryNamesCases: the summary lists each suite's cases by ID
// from the suite's Ginkgo JUnit report of this run (a stale report of an
// earlier run is not read).
func TestMakeE2ESummaryNamesCases(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\n"), 0o600)
	reports := filepath.Join(t.TempDir(), "reports")
	os.MkdirAll(reports, 0o755)
	stale := filepath.Join(reports, "e2e-nojunit-junit.xml")
	os.WriteFile(stale, []byte(`<testcase name="[It] OLD-001 x" status="failed">`), 0o644)
	out, code, _, _ := runSuitesEnv(t, []string{"REPORTS=" + reports}, kc, "e2e-cases", "e2e-cases-fail", "e2e-nojunit")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	summary, err := os.ReadFile(filepath.Join(reports, "e2e-summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	// target | verdict | seconds (any) | cases
	for _, want := range []string{
		`| e2e-cases | PASSED | \d+ | 2 passed; skipped: CASES-003 |`,
		`| e2e-cases-fail | FAILED \(exit 1\) | \d+ | 1 passed; failed: CASES-002 \[AfterSuite\]; skipped: CASES-003 |`,
		`| e2e-nojunit | PASSED | \d+ | - |`,
	} {
		re := regexp.MustCompile(strings.ReplaceAll(want, "|", `\|`))
		if !re.Match(summary) {
			t.Errorf("summary lacks %s:\n%s", want, summary)
		}
	}
	if !strings.Contains(out, "failed: CASES-002 [AfterSuite]") {
		t.Errorf("the printed summary does not name the failed case:\n%s", out)
	}
	if x, _ := os.ReadFile(filepath.Join(reports, "e2e-summary.xml")); !strings.Contains(string(x), "<system-out>cases: 1 passed; failed: CASES-002") {
		t.Errorf("e2e-summary.xml does not name the cases:\n%s", x)
	}
}

func TestMakeE2EBadInvocation(t *testing.T) {
	if out, code, _, calls := runSuites(t, "/nonexistent/kubeconfig", "e2e-a"); code != 2 || !strings.Contains(out, "not a readable file") {
		t.Errorf("unreadable E2E_KUBECONFIG: exit %d, want 2 and a message:\n%s", code, out)
	} else if _, err := os.Stat(calls); err == nil {
		t.Error("a suite ran although the kubeconfig is unreadable")
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\n"), 0o600)
	if out, code, _, _ := runSuites(t, kc); code != 2 || !strings.Contains(out, "usage") {
		t.Errorf("no targets: exit %d, want 2 and the usage:\n%s", code, out)
	}
}

// make e2e runs E2E_JOBS suites at a time, never more; E2E_JOBS=1 one after
// the other.
func TestMakeE2ERunsE2EJobsSuitesAtATime(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte("apiVersion: v1\n"), 0o600)
	for _, tc := range []struct {
		jobs string
		peak string
	}{{"1", "1"}, {"2", "2"}} {
		out, code, _, calls := runSuitesEnv(t, []string{"E2E_JOBS=" + tc.jobs, "SLEEP=0.5"}, kc, "e2e-a", "e2e-b", "e2e-c", "e2e-d")
		if code != 0 {
			t.Fatalf("E2E_JOBS=%s: exit %d:\n%s", tc.jobs, code, out)
		}
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(calls), "peaks"))
		peaks := strings.Fields(string(b))
		if len(peaks) != 4 || slices.Max(peaks) != tc.peak {
			t.Errorf("E2E_JOBS=%s: suites running when each started: %v, want at most and at some point %s", tc.jobs, peaks, tc.peak)
		}
	}
	if out, code, _, _ := runSuitesEnv(t, []string{"E2E_JOBS=0"}, kc, "e2e-a"); code != 2 || !strings.Contains(out, "E2E_JOBS") {
		t.Errorf("E2E_JOBS=0: exit %d, want 2 and a message:\n%s", code, out)
	}
}
