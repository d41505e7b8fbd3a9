package rulebook

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// TestRunRegistersBodiesByID runs a small book through Ginkgo: each body is
// registered by its rule's ID, a SHOULD rule that is not met warns, a table
// rule folds its cases, and a rule outside the label filter is reported as
// filtered out.
func TestRunRegistersBodiesByID(t *testing.T) {
	book := New("rulebook self test",
		Rule{ID: "R-001", Level: Must, Title: "passes", Spec: "s", Area: "a"},
		Rule{ID: "R-002", Level: Must, Title: "fails", Spec: "s", Area: "a"},
		Rule{ID: "R-003", Level: Should, Title: "warns", Spec: "s", Area: "a"},
		Rule{ID: "R-004", Level: Must, Title: "a table", Spec: "s", Area: "a"},
		Rule{ID: "R-005", Level: Must, Title: "filtered out", Spec: "s", Area: "b"},
		Rule{ID: "R-006", Level: Must, Title: "lacks a dependency", Spec: "s", Area: "a"},
		Rule{ID: "R-007", Level: Should, Title: "warns through Fail", Spec: "s", Area: "a"},
		Rule{ID: "R-008", Level: Must, Title: "fails through Fail", Spec: "s", Area: "a"},
		Rule{ID: "R-009", Level: Must, Title: "opt-in, not given", Spec: "s", Area: "a", OptIn: "--restart-command"},
		Rule{ID: "R-010", Level: Must, Title: "opt-in, given", Spec: "s", Area: "a", OptIn: "--destructive"},
	)
	s := book.Suite(SuiteOptions{OptedIn: func(o string) bool { return o == "--destructive" }})
	// A second suite in the same process and run, strict: strictness is the
	// run's, not the package's. Its report is folded apart.
	strictBook := New("strict self test", Rule{ID: "T-001", Level: Should, Title: "fails through Fail", Spec: "s", Area: "a"})
	strict := strictBook.Suite(SuiteOptions{Strict: true})
	var strictReport types.Report
	ginkgo.ReportAfterSuite("strict self test", func(r types.Report) { strictReport = r })
	ran := 0
	ginkgo.Describe("self test", ginkgo.Ordered, ginkgo.ContinueOnFailure, func() {
		s.It("R-001", func(context.Context) { ran++ })
		s.It("R-002", func(context.Context) { gomega.Expect(1).To(gomega.Equal(2), "one is not two") })
		s.It("R-003", func(context.Context) { gomega.Expect(true).To(gomega.BeFalse()) })
		Table(s, "R-004", func(_ context.Context, n int) {
			if n == 2 {
				NotSupported("no two")
			}
		}, ginkgo.Entry("one", 1), ginkgo.Entry("two", 2))
		s.It("R-005", func(context.Context) { ran++ })
		s.It("R-006", func(context.Context) { NotRun("List is broken") })
		s.It("R-007", func(context.Context) { Fail("a SHOULD not met") })
		s.It("R-008", func(context.Context) { Fail("a MUST not met") })
		s.It("R-009", func(context.Context) { ran++ })
		s.It("R-010", func(context.Context) {})
		strict.It("T-001", func(context.Context) { Fail("a SHOULD not met") })
	})
	res, err := s.Run(RunOptions{Selection: Selection{LabelFilter: "a"}, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Verdict{"R-001": VerdictPass, "R-002": VerdictFail, "R-003": VerdictWarn, "R-004": VerdictPass, "R-005": VerdictNotRun,
		"R-006": VerdictNotRun, "R-007": VerdictWarn, "R-008": VerdictFail, "R-009": VerdictSkip, "R-010": VerdictPass}
	for id, v := range want {
		if rr, _ := res.Rule(id); rr.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", id, rr.Verdict, rr.Reason, v)
		}
	}
	if rr, _ := res.Rule("R-005"); rr.NotRun != NotRunFiltered || ran != 1 {
		t.Errorf("R-005 %s, ran %d bodies: the filter did not hold", rr.NotRun, ran)
	}
	if rr, _ := res.Rule("R-004"); len(rr.Cases) != 2 || rr.Cases[1].Verdict != VerdictNotSup {
		t.Errorf("R-004 cases %+v", rr.Cases)
	}
	if res.Verdict != DoesNotConform || !slices.Equal(res.Failed(), []string{"R-002", "R-008"}) {
		t.Errorf("verdict %s, failed %v", res.Verdict, res.Failed())
	}
	if rr, _ := res.Rule("R-006"); rr.NotRun != NotRunDependency || rr.Reason != "List is broken" {
		t.Errorf("R-006 %s %q: the typed outcome did not reach the fold", rr.NotRun, rr.Reason)
	}
	if rr, _ := res.Rule("R-009"); !strings.Contains(rr.Reason, "--restart-command") {
		t.Errorf("R-009 %q does not name its opt-in", rr.Reason)
	}
	if rr, _ := strict.Fold(strictReport, Selection{}).Rule("T-001"); rr.Verdict != VerdictFail {
		t.Errorf("T-001 in the strict suite: %s (%s), want FAIL (R-007, the same SHOULD failure, warned in the other)", rr.Verdict, rr.Reason)
	}
	if m := book.Suite(SuiteOptions{}).Missing(); len(m) != book.Len() {
		t.Errorf("a suite with no bodies misses %v", m)
	}
}
