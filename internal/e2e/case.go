package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
)

// Case is one end-to-end case, named the way e2e-framework names a
// feature: a stable ID, what it proves, and labels to select it by. Its
// setup and teardown sit in its body, each teardown registered with
// DeferCleanup right after the setup it undoes; a suite-wide world (pods,
// the fencing deployment) is set up in BeforeSuite.
type Case struct {
	// ID is "<PREFIX>-NNN": stable, so that reports, CI history and
	// -ginkgo.focus=ID keep meaning the same case; a removed case's ID is
	// never given to another.
	ID string
	// Title says what the case proves.
	Title string
	// Area is what the case is about, the label "area:<Area>"
	// (-ginkgo.label-filter=area:rehearsal).
	Area string
	// Cluster is how the case uses the cluster, the label "cluster:<use>".
	Cluster ClusterUse
}

// ClusterUse says whether other suites may run beside a case.
type ClusterUse string

// The cluster uses.
const (
	// Shared: the case touches only what it creates.
	Shared ClusterUse = "shared"
	// Exclusive: the case disturbs every pod of a node and holds the
	// cluster lock exclusively (Cluster.Exclusive) while it runs.
	Exclusive ClusterUse = "exclusive"
)

// Text is the case's Ginkgo spec text, "<ID> <Title>": the ID leads the
// spec's name in the Ginkgo output and the JUnit report.
func (c Case) Text() string { return c.ID + " " + c.Title }

// Cases is one suite's table of cases, declared once; its It and Entry
// register a case's spec by ID, and Check compares the table with the specs
// the suite really has.
type Cases struct {
	// Suite is the suite's name, the label "suite:<Suite>".
	Suite string
	// Prefix starts every ID of the suite.
	Prefix string
	// List holds the cases.
	List []Case
}

// Labels are the case's Ginkgo labels: suite, area and cluster use.
func (cs Cases) Labels(c Case) []string {
	return []string{"suite:" + cs.Suite, "area:" + c.Area, "cluster:" + string(c.Cluster)}
}

// Case returns the case with id. It panics for an ID the table lacks: that
// happens while Ginkgo builds the spec tree, so a typo fails every run and
// the suite's table test.
func (cs Cases) Case(id string) Case {
	for _, c := range cs.List {
		if c.ID == id {
			return c
		}
	}
	panic(fmt.Sprintf("e2e: suite %s has no case %s in its table", cs.Suite, id))
}

// It registers the case id as a Ginkgo It: its text, its labels, then args
// (the body and decorators such as NodeTimeout), at the caller's location.
func (cs Cases) It(id string, args ...any) bool {
	c := cs.Case(id)
	return ginkgo.It(c.Text(), append([]any{ginkgo.Label(cs.Labels(c)...), ginkgo.Offset(1)}, args...)...)
}

// Entry is It for a DescribeTable entry: args are decorators and the
// entry's parameters.
func (cs Cases) Entry(id string, args ...any) ginkgo.TableEntry {
	c := cs.Case(id)
	return ginkgo.Entry(c.Text(), append([]any{ginkgo.Label(cs.Labels(c)...), ginkgo.Offset(1)}, args...)...)
}

var idPattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*(-[A-Z][A-Z0-9]*)*-[0-9]{3}$`)

// Check returns what is wrong with the table against the specs of a
// Ginkgo preview report (ginkgo.PreviewSpecs, no cluster needed): an ID
// that is malformed, lacks the prefix or appears twice; a case without
// title, area or cluster use; a case without exactly one spec; a spec that
// is no case of the table, or whose labels differ from the table's.
func (cs Cases) Check(r ginkgo.Report) error {
	var errs []string
	seen := map[string]bool{}
	for _, c := range cs.List {
		switch {
		case !idPattern.MatchString(c.ID) || !strings.HasPrefix(c.ID, cs.Prefix+"-"):
			errs = append(errs, fmt.Sprintf("%q: want %s-NNN", c.ID, cs.Prefix))
		case seen[c.ID]:
			errs = append(errs, fmt.Sprintf("%s: twice in the table", c.ID))
		case c.Title == "" || c.Area == "" || (c.Cluster != Shared && c.Cluster != Exclusive):
			errs = append(errs, fmt.Sprintf("%s: want a title, an area and a cluster use (shared or exclusive)", c.ID))
		}
		seen[c.ID] = true
	}
	specs := map[string]int{}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		id, _, _ := strings.Cut(s.LeafNodeText, " ")
		if !seen[id] {
			errs = append(errs, fmt.Sprintf("spec %q: its text does not start with an ID of the table", s.FullText()))
			continue
		}
		specs[id]++
		c := cs.Case(id)
		for _, l := range cs.Labels(c) {
			if !slices.Contains(s.Labels(), l) {
				errs = append(errs, fmt.Sprintf("%s: spec lacks label %s (has %v)", id, l, s.Labels()))
			}
		}
	}
	for _, c := range cs.List {
		if specs[c.ID] != 1 {
			errs = append(errs, fmt.Sprintf("%s: %d specs, want 1", c.ID, specs[c.ID]))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("suite %s: %s", cs.Suite, strings.Join(errs, "; "))
	}
	return nil
}

// TestTable is a suite's case-table test (`make test`, no cluster): it
// checks cs against the specs of a Ginkgo preview of the suite. A process
// that has run the suite on a cluster cannot preview it (Ginkgo builds a
// tree once), so there it skips.
func TestTable(t *testing.T, cfg *envconf.Config, cs Cases, description string) {
	t.Helper()
	if Enabled(cfg) {
		t.Skip("the suite ran on a cluster in this process: Ginkgo previews only an unbuilt tree (make test runs this)")
	}
	if err := cs.Check(ginkgo.PreviewSpecs(description)); err != nil {
		t.Fatal(err)
	}
}
