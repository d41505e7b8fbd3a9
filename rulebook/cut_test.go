package rulebook

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

// TestFoldCutCases: a case ended by Cut keeps its kind and reason, and a
// case interrupted or timed out while it ran is NOT RUN of the run's cut,
// never FAIL.
func TestFoldCutCases(t *testing.T) {
	s := testBook.Suite(SuiteOptions{})
	s.noteCut(NotRunInterrupted)
	rep := types.Report{SuiteDescription: "test suite", SpecReports: []types.SpecReport{
		spec("A-001", "", types.SpecStateSkipped, "the budget is spent", ran(s, "A-001", &outcome{Verdict: VerdictNotRun, NotRun: NotRunBudget, Reason: "the budget is spent"})),
		spec("B-002", "", types.SpecStateInterrupted, "interrupted by user", ran(s, "B-002", nil)),
	}}
	res := s.Fold(rep, Selection{})
	if rr, _ := res.Rule("A-001"); rr.Verdict != VerdictNotRun || rr.NotRun != NotRunBudget || rr.Reason != "the budget is spent" {
		t.Errorf("A-001: %s/%s %q", rr.Verdict, rr.NotRun, rr.Reason)
	}
	if rr, _ := res.Rule("B-002"); rr.Verdict != VerdictNotRun || rr.NotRun != NotRunInterrupted {
		t.Errorf("B-002: %s/%s %q, want NOT RUN (interrupted)", rr.Verdict, rr.NotRun, rr.Reason)
	}
}

// TestSettleReplacesNotRun: a check run after a cut settles the rule, and
// the run is concluded again.
func TestSettleReplacesNotRun(t *testing.T) {
	b := New("settle", Rule{ID: "S-001", Level: Must, Title: "t", Spec: "s"}, Rule{ID: "S-002", Level: Must, Title: "t", Spec: "s"})
	b.Incomplete = func(rr RuleResult) string {
		if rr.Verdict == VerdictNotRun {
			return "did not run"
		}
		return ""
	}
	r := &Result{Rules: []RuleResult{{Rule: b.rules[0], Verdict: VerdictPass}, {Rule: b.rules[1], Verdict: VerdictNotRun, NotRun: NotRunInterrupted}}}
	r.conclude(b.Incomplete)
	if r.Verdict != Incomplete {
		t.Fatalf("verdict %s", r.Verdict)
	}
	b.Settle(r, "S-002", CaseResult{Name: "after the cut", Verdict: VerdictFail, Message: "1 fence left behind"})
	if rr, _ := r.Rule("S-002"); rr.Verdict != VerdictFail || r.Verdict != DoesNotConform {
		t.Errorf("S-002 %s, run %s", rr.Verdict, r.Verdict)
	}
}

func TestPrintableEscapesWhatATerminalActsOn(t *testing.T) {
	for in, want := range map[string]string{
		"plain 192.0.2.1/32":    "plain 192.0.2.1/32",
		"nul\x00esc\x1b[31mred": `nul\x00esc\x1b[31mred`,
		"cr\rdel\x7f":           `cr\x0ddel\x7f`,
		"bad\xffutf8":           `bad\xffutf8`,
		"bidi\u202eevil":        `bidi\u202eevil`,
		"zero\u200bwidth":       `zero\u200bwidth`,
		"c1\u009bx":             `c1\u009bx`,
		"keep\nnewline\ttab é":  "keep\nnewline\ttab é",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReportsEscapeHostileText: the Markdown, HTML and JUnit reports hold
// no raw control byte, invalid UTF-8, raw HTML or redacted secret from a
// driver's message.
func TestReportsEscapeHostileText(t *testing.T) {
	hostile := "\x00\x1b]0;pwned\x07\r<script>x</script>``` | \xfe hunter2"
	r := &Result{Suite: "s", Facts: []Fact{{"driver", hostile}}, Rules: []RuleResult{{Rule: testBook.rules[0], Verdict: VerdictFail, Reason: hostile,
		Cases: []CaseResult{{Name: "c", Verdict: VerdictFail, Message: hostile}}}}}
	var md, html strings.Builder
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": html.String()} {
		for _, bad := range []string{"\x00", "\x1b", "\r", "\x07", "\xfe"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s report holds %q", name, bad)
			}
		}
	}
	// Raw HTML stays out of the HTML page and of Markdown table cells (a
	// fenced code block shows it as text).
	if strings.Contains(html.String(), "<script>") {
		t.Error("the HTML report holds raw <script>")
	}
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "|") && strings.Contains(line, "<script>") {
			t.Errorf("a Markdown table cell holds raw HTML: %s", line)
		}
	}
	s := testBook.Suite(SuiteOptions{Redact: func(m string) string { return strings.ReplaceAll(m, "hunter2", "[REDACTED]") }})
	rep := types.Report{SuiteDescription: "s", SpecReports: []types.SpecReport{spec("A-001", "x", types.SpecStateFailed, hostile, ran(s, "A-001", nil))}}
	folded := s.Fold(rep, Selection{})
	folded.Facts = []Fact{{"driver", strings.ReplaceAll(hostile, "hunter2", "")}}
	var junit strings.Builder
	if err := folded.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"\x00", "\x1b", "\xfe", "hunter2", "<script>"} {
		if strings.Contains(junit.String(), bad) {
			t.Errorf("JUnit report holds %q", bad)
		}
	}
}

// TestSelectionErrorsArePlainText pins the label-filter error that printed
// terminal colours whatever --no-color said.
func TestSelectionErrorsArePlainText(t *testing.T) {
	err := Selection{LabelFilter: "MUST && ("}.Check()
	if err == nil || strings.Contains(err.Error(), "\x1b") || !strings.Contains(err.Error(), "Mismatched") {
		t.Errorf("error %q: want a plain sentence", err)
	}
}
