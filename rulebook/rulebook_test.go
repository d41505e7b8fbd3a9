package rulebook

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

var testBook = New("test suite",
	Rule{ID: "A-001", Level: Must, Title: "a", Spec: "spec a", Area: "alpha", RPCs: []string{"Fence"}},
	Rule{ID: "A-002", Level: Should, Title: "b", Spec: "spec b", Area: "alpha", Labels: []string{"ipv6"}},
	Rule{ID: "B-001", Level: Info, Title: "c", Spec: "spec c", Area: "beta"},
	Rule{ID: "B-002", Level: Must, Title: "d", Spec: "spec d", Area: "beta"},
)

func TestNewRefusesBadTables(t *testing.T) {
	for name, rules := range map[string][]Rule{
		"empty ID":     {{Level: Must, Title: "t", Spec: "s"}},
		"bad level":    {{ID: "X-1", Level: "MAY", Title: "t", Spec: "s"}},
		"no spec":      {{ID: "X-1", Level: Must, Title: "t"}},
		"twice":        {{ID: "X-1", Level: Must, Title: "t", Spec: "s"}, {ID: "X-1", Level: Must, Title: "t", Spec: "s"}},
		"tag is an ID": {{ID: "X-1", Level: Must, Title: "t", Spec: "s"}, {ID: "X-2", Level: Must, Title: "t", Spec: "s", Labels: []string{"X-1"}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("New accepted a table with %s", name)
				}
			}()
			New("bad", rules...)
		})
	}
}

func TestSelectReadsTheTable(t *testing.T) {
	ids := func(rs []Rule) (out []string) {
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for filter, want := range map[string][]string{
		"":               {"A-001", "A-002", "B-001", "B-002"},
		"MUST":           {"A-001", "B-002"},
		"alpha && !ipv6": {"A-001"},
		"Fence || B-001": {"A-001", "B-001"},
		"beta && SHOULD": nil,
	} {
		got, err := testBook.Select(filter)
		if err != nil {
			t.Fatalf("%q: %v", filter, err)
		}
		if !slices.Equal(ids(got), want) {
			t.Errorf("Select(%q) = %v, want %v", filter, ids(got), want)
		}
	}
	if _, err := testBook.Select("MUST && ("); err == nil {
		t.Error("a filter that does not parse was accepted")
	}
}

// spec builds the report of one spec of a rule.
func spec(id, text string, state types.SpecState, msg string, entries ...types.ReportEntry) types.SpecReport {
	return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, LeafNodeLabels: []string{id, "x"},
		State: state, Failure: types.Failure{Message: msg}, ReportEntries: entries}
}

func entry(name string, value any) types.ReportEntry {
	return types.ReportEntry{Name: name, Value: types.WrapEntryValue(value)}
}

// ran is the run state the engine attaches to a case of rule id of s when
// its body starts, with the outcome the body recorded (nil: none).
func ran(s *Suite, id string, o *outcome) types.ReportEntry {
	r, _ := s.book.Rule(id)
	return entry(entryCase, &caseRun{suite: s, rule: r, outcome: o})
}

func TestFoldDecidesEachRule(t *testing.T) {
	s := testBook.Suite(SuiteOptions{Redact: func(m string) string { return strings.ReplaceAll(m, "hunter2", "[REDACTED]") }})
	rep := types.Report{SuiteDescription: "test suite", SpecReports: []types.SpecReport{
		spec("A-001", "v4", types.SpecStatePassed, "", ran(s, "A-001", nil)),
		// The skip message says nothing the fold reads: the typed outcome does.
		spec("A-001", "v6", types.SpecStateSkipped, "not run: misleading words", ran(s, "A-001", &outcome{Verdict: VerdictNotSup, Reason: "no IPv6"})),
		spec("A-002", "", types.SpecStatePassed, "", ran(s, "A-002", &outcome{Verdict: VerdictWarn, Reason: "SHOULD not met: sent hunter2"})),
		spec("B-001", "", types.SpecStatePassed, "", ran(s, "B-001", nil), entry(entryNote, "saw 3 clients")),
		spec("B-002", "", types.SpecStateSkipped, "not supported: misleading words", ran(s, "B-002", &outcome{Verdict: VerdictNotRun, NotRun: NotRunDependency, Reason: "List is broken"})),
	}}
	res := s.Fold(rep, Selection{})
	want := map[string]Verdict{"A-001": VerdictPass, "A-002": VerdictWarn, "B-001": VerdictInfo, "B-002": VerdictNotRun}
	for id, v := range want {
		rr, _ := res.Rule(id)
		if rr.Verdict != v {
			t.Errorf("%s: %s, want %s (%s)", id, rr.Verdict, v, rr.Reason)
		}
	}
	if rr, _ := res.Rule("A-002"); strings.Contains(rr.Reason, "hunter2") {
		t.Errorf("a warning kept a secret: %s", rr.Reason)
	}
	if rr, _ := res.Rule("B-002"); rr.NotRun != NotRunDependency || rr.Reason != "List is broken" {
		t.Errorf("B-002: %s %q, want a dependency with its reason", rr.NotRun, rr.Reason)
	}
	if rr, _ := res.Rule("A-001"); rr.Reason != "1 of 2 cases did not run; v6: no IPv6" {
		t.Errorf("A-001 reason %q", rr.Reason)
	}
	if rr, _ := res.Rule("B-001"); rr.Reason != "saw 3 clients" {
		t.Errorf("B-001 reason %q", rr.Reason)
	}
	if res.Verdict != Conforms {
		t.Errorf("verdict %s, want CONFORMS: no policy makes a rule not run an incomplete cause", res.Verdict)
	}
}

// TestFoldNamesWhyARuleDidNotRun: a rule cut off by the budget or a signal
// is not reported as filtered out.
func TestFoldNamesWhyARuleDidNotRun(t *testing.T) {
	for _, c := range []struct {
		cut  NotRunKind // what the suite recorded; Ginkgo's words are not read
		sel  Selection
		want map[string]NotRunKind
	}{
		{"", Selection{LabelFilter: "alpha"}, map[string]NotRunKind{"B-001": NotRunFiltered, "B-002": NotRunFiltered}},
		{NotRunBudget, Selection{LabelFilter: "!B-001"}, map[string]NotRunKind{"B-001": NotRunFiltered, "B-002": NotRunBudget}},
		{NotRunInterrupted, Selection{Focus: []string{`\[B-00`}}, map[string]NotRunKind{"B-001": NotRunInterrupted, "B-002": NotRunInterrupted}},
		{NotRunInterrupted, Selection{Skip: []string{"B-001"}}, map[string]NotRunKind{"B-001": NotRunFiltered, "B-002": NotRunInterrupted}},
	} {
		s := testBook.Suite(SuiteOptions{})
		s.noteCut(c.cut)
		rep := types.Report{SuiteDescription: "test suite", SpecialSuiteFailureReasons: []string{"Interrupted by User", "Suite Timeout Elapsed"}, SpecReports: []types.SpecReport{
			spec("A-001", "", types.SpecStatePassed, "", ran(s, "A-001", nil)),
			spec("A-002", "", types.SpecStatePassed, "", ran(s, "A-002", nil)),
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[B-001] c", LeafNodeLabels: []string{"B-001", "INFO", "beta"}, State: types.SpecStateSkipped},
			{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[B-002] d", LeafNodeLabels: []string{"B-002", "MUST", "beta"}, State: types.SpecStateSkipped},
		}}
		res := s.Fold(rep, c.sel)
		for id, kind := range c.want {
			rr, _ := res.Rule(id)
			if rr.Verdict != VerdictNotRun || rr.NotRun != kind || rr.Reason != kind.Reason() {
				t.Errorf("cut %q %+v: %s is %s/%s (%q), want NOT RUN/%s", c.cut, c.sel, id, rr.Verdict, rr.NotRun, rr.Reason, kind)
			}
		}
	}
}

func TestRunVerdicts(t *testing.T) {
	mk := func(v ...Verdict) *Result {
		r := &Result{}
		for i, x := range v {
			r.Rules = append(r.Rules, RuleResult{Rule: testBook.rules[i], Verdict: x})
		}
		return r
	}
	mustNotRun := func(rr RuleResult) string {
		if rr.Level == Must && rr.Verdict == VerdictNotRun {
			return "a MUST rule did not run"
		}
		return ""
	}
	for _, c := range []struct {
		r          *Result
		strict     bool
		incomplete func(RuleResult) string
		want       RunVerdict
		exit       int
	}{
		{mk(VerdictPass, VerdictWarn, VerdictInfo, VerdictPass), false, nil, Conforms, 0},
		{mk(VerdictPass, VerdictFail, VerdictInfo, VerdictPass), false, nil, Conforms, 0},
		{mk(VerdictPass, VerdictFail, VerdictInfo, VerdictPass), true, nil, DoesNotConform, 1},
		{mk(VerdictFail, VerdictPass, VerdictInfo, VerdictPass), false, nil, DoesNotConform, 1},
		{mk(VerdictPass, VerdictPass, VerdictInfo, VerdictNotRun), false, nil, Conforms, 0},
		{mk(VerdictPass, VerdictPass, VerdictInfo, VerdictNotRun), false, mustNotRun, Incomplete, 3},
		{mk(VerdictFail, VerdictPass, VerdictInfo, VerdictNotRun), false, mustNotRun, DoesNotConform, 1},
	} {
		c.r.Strict = c.strict
		c.r.conclude(c.incomplete)
		if c.r.Verdict != c.want || c.r.Verdict.ExitCode() != c.exit {
			t.Errorf("%s strict=%v: %s (exit %d), want %s (exit %d)", c.r.Summary(), c.strict, c.r.Verdict, c.r.Verdict.ExitCode(), c.want, c.exit)
		}
	}
}

// TestWritersShowEveryVerdict: the reports name the run's verdict, each
// rule with its verdict, and an INCOMPLETE run's reasons.
func TestWritersShowEveryVerdict(t *testing.T) {
	r := &Result{Suite: "test suite", Endpoint: "unix:///x.sock", Facts: []Fact{{"driver", "d 1.0"}}}
	for i, v := range []Verdict{VerdictPass, VerdictNotSup, VerdictInfo, VerdictNotRun} {
		r.Rules = append(r.Rules, RuleResult{Rule: testBook.rules[i], Verdict: v, Reason: "reason " + string(v)})
	}
	r.conclude(func(rr RuleResult) string {
		if rr.Verdict == VerdictNotRun {
			return "could not run"
		}
		return ""
	})
	var md, html, js bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"markdown": md.String(), "html": html.String(), "json": js.String()} {
		for _, want := range []string{"INCOMPLETE", "B-002", "NOT SUPPORTED", "could not run"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report does not say %q", name, want)
			}
		}
	}
	if !strings.Contains(html.String(), `class="incomplete"`) || !strings.Contains(md.String(), "| driver | d 1.0 |") {
		t.Errorf("reports miss the verdict's style or the suite's facts")
	}
	var back Result
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Verdict != Incomplete || len(back.Rules) != 4 {
		t.Errorf("JSON does not read back: %v %+v", err, back)
	}
}
