package e2e

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

func spec(text string, labels ...string) types.SpecReport {
	return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, LeafNodeLabels: labels}
}

func TestCasesCheck(t *testing.T) {
	table := Cases{Suite: "demo", Prefix: "DEMO", List: []Case{
		{ID: "DEMO-001", Title: "reaches", Area: "netpol", Cluster: Shared},
		{ID: "DEMO-002", Title: "cuts a node off", Area: "rehearsal", Cluster: Exclusive},
	}}
	good := ginkgo.Report{SpecReports: []types.SpecReport{
		spec("DEMO-001 reaches", "suite:demo", "area:netpol", "cluster:shared"),
		spec("DEMO-002 cuts a node off", "suite:demo", "area:rehearsal", "cluster:exclusive", "extra"),
		{LeafNodeType: types.NodeTypeBeforeSuite},
	}}
	if err := table.Check(good); err != nil {
		t.Fatalf("a table matching its specs: %v", err)
	}
	if got := table.Case("DEMO-002").Text(); got != "DEMO-002 cuts a node off" {
		t.Errorf("Text() = %q", got)
	}

	bad := func(name string, cs Cases, r ginkgo.Report, want string) {
		t.Helper()
		err := cs.Check(r)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Check = %v, want an error containing %q", name, err, want)
		}
	}
	with := func(list ...Case) Cases { return Cases{Suite: "demo", Prefix: "DEMO", List: list} }
	c1 := table.List[0]
	bad("duplicate ID", with(c1, c1), good, "DEMO-001: twice in the table")
	bad("other prefix", with(c1, Case{ID: "OTHER-002", Title: "x", Area: "a", Cluster: Shared}), good, `"OTHER-002": want DEMO-NNN`)
	bad("two digits", with(c1, Case{ID: "DEMO-02", Title: "x", Area: "a", Cluster: Shared}), good, `"DEMO-02"`)
	bad("no cluster use", with(c1, Case{ID: "DEMO-002", Title: "x", Area: "a"}), good, "DEMO-002: want a title")
	bad("case without spec", table, ginkgo.Report{SpecReports: good.SpecReports[:1]}, "DEMO-002: 0 specs, want 1")
	bad("case with two specs", table, ginkgo.Report{SpecReports: append(good.SpecReports, good.SpecReports[0])}, "DEMO-001: 2 specs, want 1")
	bad("spec without ID", table, ginkgo.Report{SpecReports: append(good.SpecReports, spec("reaches again"))}, `spec "reaches again"`)
	bad("wrong label", table, ginkgo.Report{SpecReports: []types.SpecReport{
		spec("DEMO-001 reaches", "suite:demo", "area:netpol", "cluster:exclusive"), good.SpecReports[1],
	}}, "DEMO-001: spec lacks label cluster:shared")
}

func TestCasesCaseUnknownPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "no case DEMO-009") {
			t.Errorf("recover() = %v, want a panic naming the unknown ID", r)
		}
	}()
	Cases{Suite: "demo", Prefix: "DEMO"}.Case("DEMO-009")
}
