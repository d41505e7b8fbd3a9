package rulebook

import (
	"bytes"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"
)

// readJUnit reads a JUnit report with a reader that is not ours
// (github.com/joshdk/go-junit, the parser CI report tools ingest with) and
// returns the totals and each testcase's status by name.
func readJUnit(t *testing.T, r *Result) (junit.Totals, map[string]junit.Status) {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Ingest(b.Bytes())
	if err != nil || len(suites) != 1 {
		t.Fatalf("the JUnit report does not read back (%d suites): %v\n%s", len(suites), err, b.String())
	}
	status := map[string]junit.Status{}
	for _, tc := range suites[0].Tests {
		status[tc.Name] = tc.Status
	}
	return suites[0].Totals, status
}

// red is how Jenkins and GitLab judge a JUnit report: any failure or error.
func red(tot junit.Totals) bool { return tot.Failed+tot.Error > 0 }

// resultOf concludes a run of testBook's four rules with the verdicts,
// under the MustRulesRun policy.
func resultOf(vs ...RuleResult) *Result {
	r := &Result{Suite: "test suite", Endpoint: "unix:///x.sock"}
	for i, rr := range vs {
		rr.Rule = testBook.rules[i]
		r.Rules = append(r.Rules, rr)
	}
	r.conclude(MustRulesRun)
	return r
}

// TestJUnitSaysTheRunVerdict: one testcase per rule with the rule's
// verdict, and a JUnit reader sees red exactly when the exit status is not
// 0 (INCOMPLETE and UNREACHABLE included), with as many failures as rules
// failed.
func TestJUnitSaysTheRunVerdict(t *testing.T) {
	pass, fail := RuleResult{Verdict: VerdictPass}, RuleResult{Verdict: VerdictFail, Reason: "Fence of 192.0.2.0/24 was not listed"}
	notRun := func(kind NotRunKind) RuleResult {
		return RuleResult{Verdict: VerdictNotRun, NotRun: kind, Reason: kind.Reason()}
	}
	unreachable := resultOf(notRun(NotRunDependency), notRun(NotRunDependency), notRun(NotRunDependency), notRun(NotRunDependency))
	unreachable.SetUnreachable("nothing answered at unix:///x.sock")
	for _, c := range []struct {
		name                    string
		r                       *Result
		verdict                 RunVerdict
		failed, errors, skipped int
		statusA001, statusB002  junit.Status
	}{
		{"conforms", resultOf(pass, RuleResult{Verdict: VerdictWarn, Reason: "SHOULD not met"}, RuleResult{Verdict: VerdictInfo}, RuleResult{Verdict: VerdictSkip, Reason: "not asked for"}),
			Conforms, 0, 0, 1, junit.StatusPassed, junit.StatusSkipped},
		{"does not conform", resultOf(fail, pass, RuleResult{Verdict: VerdictInfo}, fail),
			DoesNotConform, 2, 0, 0, junit.StatusFailed, junit.StatusFailed},
		{"incomplete: cut by the budget", resultOf(pass, pass, RuleResult{Verdict: VerdictInfo}, notRun(NotRunBudget)),
			Incomplete, 1, 1, 0, junit.StatusPassed, junit.StatusError},
		{"incomplete: filtered out", resultOf(pass, notRun(NotRunFiltered), notRun(NotRunFiltered), notRun(NotRunFiltered)),
			Incomplete, 1, 0, 3, junit.StatusPassed, junit.StatusSkipped},
		{"unreachable", unreachable, Unreachable, 1, 0, 4, junit.StatusSkipped, junit.StatusSkipped},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.r.Verdict != c.verdict {
				t.Fatalf("verdict %s, want %s", c.r.Verdict, c.verdict)
			}
			tot, status := readJUnit(t, c.r)
			if red(tot) != (c.verdict.ExitCode() != 0) {
				t.Errorf("exit %d but a JUnit reader sees red=%v (%+v)", c.verdict.ExitCode(), red(tot), tot)
			}
			if tot.Failed != c.failed || tot.Error != c.errors || tot.Skipped != c.skipped {
				t.Errorf("totals %+v, want %d failed, %d errors, %d skipped", tot, c.failed, c.errors, c.skipped)
			}
			wantTests := len(c.r.Rules)
			if c.verdict == Incomplete || c.verdict == Unreachable {
				wantTests++ // the run's own testcase
			}
			if tot.Tests != wantTests {
				t.Errorf("%d testcases, want one per rule (%d) and one for an INCOMPLETE or UNREACHABLE run", tot.Tests, wantTests)
			}
			if status["[A-001] a"] != c.statusA001 || status["[B-002] d"] != c.statusB002 {
				t.Errorf("A-001 %s, B-002 %s; want %s, %s", status["[A-001] a"], status["[B-002] d"], c.statusA001, c.statusB002)
			}
		})
	}
}

// TestJUnitCountsRulesNotCases pins the report that counted Ginkgo cases (16
// failures where the terminal said 4 rules): a rule with many failed cases
// is one failed testcase.
func TestJUnitCountsRulesNotCases(t *testing.T) {
	var cases []CaseResult
	for _, n := range []string{"Fence", "Unfence", "List", "GetFenceClients"} {
		cases = append(cases, CaseResult{Name: n, Verdict: VerdictFail, Message: n + " answered OK"})
	}
	r := resultOf(RuleResult{Verdict: VerdictFail, Cases: cases, Reason: "Fence: Fence answered OK"}, RuleResult{Verdict: VerdictPass}, RuleResult{Verdict: VerdictInfo}, RuleResult{Verdict: VerdictPass})
	tot, _ := readJUnit(t, r)
	if tot.Failed != 1 || tot.Tests != 4 {
		t.Errorf("totals %+v, want 4 testcases and 1 failure", tot)
	}
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !strings.Contains(b.String(), c.Message) {
			t.Errorf("the failed testcase does not name its case %q", c.Message)
		}
	}
	if !strings.Contains(b.String(), `name="verdict" value="DOES NOT CONFORM"`) {
		t.Errorf("the testsuite does not carry the run's verdict:\n%s", b.String())
	}
}
