package rulebook

import (
	"context"
	"slices"
	"testing"

	"github.com/onsi/ginkgo/v2"
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
	)
	s := book.Suite(SuiteOptions{})
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
	})
	res, err := s.Run(RunOptions{Selection: Selection{LabelFilter: "a"}, NoColor: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Verdict{"R-001": VerdictPass, "R-002": VerdictFail, "R-003": VerdictWarn, "R-004": VerdictPass, "R-005": VerdictNotRun, "R-006": VerdictNotRun}
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
	if res.Verdict != DoesNotConform || !slices.Equal(res.Failed(), []string{"R-002"}) {
		t.Errorf("verdict %s, failed %v", res.Verdict, res.Failed())
	}
	if m := book.Suite(SuiteOptions{}).Missing(); len(m) != book.Len() {
		t.Errorf("a suite with no bodies misses %v", m)
	}
}
