package sim

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The README's generated sections: the scripted scenarios' verdicts (from
// the scenario files) and the verdicts that differ between the MDB
// implementations (from mdbVerdictChanges). go test ./sim/... -update
// rewrites them; otherwise they must match.

func scenarioTable(t *testing.T) string {
	scs := loadAll(t)
	names := make([]string, len(scs))
	expect := map[string]map[string]string{}
	for i, sc := range scs {
		names[i], expect[sc.Name] = sc.Name, sc.Expect
	}
	return verdictTable(names, func(sc, p string) string { return expect[sc][p] })
}

func mdbTable() string {
	var b strings.Builder
	b.WriteString("| scenario | policy | machine-api-operator | machine-remediation |\n|---|---|---|---|\n")
	for _, c := range mdbVerdictChanges {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.scenario, c.policy, c.mao, c.mro)
	}
	return b.String()
}

// section replaces (update) or checks the text between the README's
// <!-- begin NAME --> and <!-- end NAME --> markers.
func section(t *testing.T, doc *string, name, want string) {
	t.Helper()
	begin, end := "<!-- begin "+name+" -->\n", "<!-- end "+name+" -->"
	i, j := strings.Index(*doc, begin), strings.Index(*doc, end)
	if i < 0 || j < i {
		t.Fatalf("sim/README.md lacks the %s markers", name)
	}
	got := (*doc)[i+len(begin) : j]
	if got == want {
		return
	}
	if *update {
		*doc = (*doc)[:i+len(begin)] + want + (*doc)[j:]
		return
	}
	t.Errorf("sim/README.md's %s section is out of date; run go test ./sim/... -update\n%s", name, firstDiff(got, want))
}

func TestREADMEGeneratedSections(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	section(t, &doc, "scenario-verdicts", scenarioTable(t))
	section(t, &doc, "mdb-verdicts", mdbTable())
	if *update && doc != string(b) {
		if err := os.WriteFile("README.md", []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
