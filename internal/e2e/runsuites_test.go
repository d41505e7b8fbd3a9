package e2e

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// runSuites runs fixtures/cluster/run-suites.sh (make e2e) against an
// existing-cluster kubeconfig with a stand-in for make that records each
// target and fails the ones named *fail*.
func runSuites(t *testing.T, kubeconfig string, targets ...string) (out string, code int, reports, calls string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "fixtures", "cluster", "run-suites.sh")
	dir := t.TempDir()
	reports, calls = filepath.Join(dir, "reports"), filepath.Join(dir, "calls")
	fakeMake := filepath.Join(dir, "make")
	os.WriteFile(fakeMake, []byte(`#!/bin/bash
t=${@: -1}
echo "$t $E2E_KUBECONFIG" >> `+calls+`
echo "suite output of $t"
[[ $t != *fail* ]]
`), 0o755)
	cmd := exec.Command("bash", append([]string{script}, targets...)...)
	cmd.Env = append(os.Environ(), "MAKE="+fakeMake, "E2E_KUBECONFIG="+kubeconfig, "REPORTS="+reports,
		"FENCEPROOF_CACHE="+filepath.Join(dir, "cache"))
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
	if want := "e2e-a " + kc + "\ne2e-fail " + kc + "\ne2e-b " + kc + "\n"; string(got) != want {
		t.Errorf("targets run (target kubeconfig):\n%s\nwant:\n%s", got, want)
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
	if log, _ := os.ReadFile(filepath.Join(reports, "e2e-fail.log")); !strings.Contains(string(log), "suite output of e2e-fail") {
		t.Errorf("the failing suite's log was not kept: %q", log)
	}

	if out, code, _, _ := runSuites(t, kc, "e2e-a", "e2e-b"); code != 0 {
		t.Errorf("every suite passed: exit %d, want 0:\n%s", code, out)
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
