package isolation

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func matrices() (*Matrix, *Matrix) {
	cases := []PortProto{{Port: 80, Protocol: corev1.ProtocolTCP}}
	e := NewMatrix([]string{"a/x", "b/y"}, cases)
	o := NewMatrix([]string{"a/x", "b/y"}, cases)
	for i := range 2 {
		for j := range 2 {
			e.SetAt(0, i, j, Blocked)
			o.SetAt(0, i, j, Blocked)
		}
	}
	o.SetAt(0, 1, 0, Allowed)
	return e, o
}

const wrongCell = "tcp/80 b/y -> a/x: expected X (blocked), observed . (allowed)"

func TestPassed(t *testing.T) {
	e, o := matrices()
	tests := []struct {
		name string
		c    CaseResult
		pass bool
	}{
		{"equal", CaseResult{Expected: e, Observed: e}, true},
		{"mismatch", CaseResult{Expected: e, Observed: o}, false},
		{"expected mismatch caught", CaseResult{Expected: e, Observed: o, WantMismatches: []string{wrongCell}}, true},
		{"expected mismatch missed", CaseResult{Expected: e, Observed: e, WantMismatches: []string{wrongCell}}, false},
		{"not measured", CaseResult{Expected: e}, false},
		{"other failure", CaseResult{Expected: e, Observed: e, Failures: []string{"pinned cell"}}, false},
		{"shape", CaseResult{Expected: e, Observed: NewMatrix([]string{"a/x"}, e.Cases)}, false},
	}
	for _, tc := range tests {
		if got := tc.c.Passed(); got != tc.pass {
			t.Errorf("%s: Passed() = %v (%v), want %v", tc.name, got, tc.c.Problems(), tc.pass)
		}
	}
}

func TestWriteFiles(t *testing.T) {
	e, o := matrices()
	r := Report{Suite: "isolation", Target: "kind-test", Started: time.Unix(0, 0), Notes: []string{"source seen: 172.18.0.5"}, Cases: []CaseResult{
		{Name: "ok", Description: "fine", Expected: e, Observed: e, Duration: time.Second},
		{Name: "bad", Description: "one pod too many", Expected: e, Observed: o, Duration: 2 * time.Second},
	}}
	dir := t.TempDir()
	paths, err := r.WriteFiles(dir, "isolation")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 {
		t.Fatalf("paths %v", paths)
	}
	x, err := os.ReadFile(filepath.Join(dir, "isolation.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var js junitSuites
	if err := xml.Unmarshal(x, &js); err != nil {
		t.Fatal(err)
	}
	s := js.Suites[0]
	if s.Tests != 2 || s.Failures != 1 || s.Cases[0].Failure != nil || s.Cases[1].Failure == nil {
		t.Fatalf("junit %+v", s)
	}
	if !strings.Contains(s.Cases[1].Failure.Text, "mismatch: "+wrongCell) || !strings.Contains(s.Cases[1].Failure.Text, "1 b/y X.") {
		t.Errorf("failure does not name the cell or show the difference table:\n%s", s.Cases[1].Failure.Text)
	}
	md, err := os.ReadFile(filepath.Join(dir, "isolation.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**1/2 cases passed.**", "EXPECTED", "OBSERVED", "DIFFERENCE", wrongCell, "| [bad](#bad) one pod too many | FAIL |", "- source seen: 172.18.0.5\n"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestReportNamesCaseIDs(t *testing.T) {
	e, _ := matrices()
	r := Report{Suite: "isolation", Cases: []CaseResult{{ID: "ISOLATION-014", Name: "legacy", Description: "the legacy selector", Expected: e, Observed: e}}}
	var x, md bytes.Buffer
	if err := r.WriteJUnit(&x); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.String(), `name="ISOLATION-014 legacy: the legacy selector"`) {
		t.Errorf("JUnit testcase does not carry the case ID:\n%s", x.String())
	}
	for _, want := range []string{"| ISOLATION-014 [legacy](#legacy) the legacy selector | PASS |", "## ISOLATION-014 legacy: the legacy selector"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
