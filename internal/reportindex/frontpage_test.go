package reportindex

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reportsWithAFailure is a reports directory as a run leaves it, with the
// fencing suite failing one case.
func reportsWithAFailure(t *testing.T) string {
	dir := t.TempDir()
	// A run narrowed to one rule: every MUST rule it passed, yet it vouches
	// for nothing else (INCOMPLETE), and the page must not colour it green.
	write(t, dir, "sanity.json", `{"driverName":"ref","verdict":"INCOMPLETE","duration":2000000000,"selection":{"labelFilter":"IDENT-001"},
		"rules":[{"id":"IDENT-001","level":"MUST","verdict":"PASS"},{"id":"CIDR-010","level":"MUST","verdict":"NOT RUN","notRun":"filtered"},{"id":"LIST-003","level":"SHOULD","verdict":"NOT RUN","notRun":"filtered"}]}`)
	write(t, dir, "sanity.html", "<html></html>")
	write(t, dir, "csiproxy.json", `{"verdict":"DOES NOT CONFORM","rules":[{"id":"PATH-001","level":"MUST","verdict":"PASS"},{"id":"PIPE-002","level":"MUST","verdict":"FAIL"}]}`)
	write(t, dir, "fencing.xml", `<testsuites><testsuite name="fencing end to end" time="312.5">
<testcase name="[BeforeSuite]" status="passed"></testcase>
<testcase name="[It] fencing through csi-addons FENCING-001 fence [suite:fencing]" status="passed"></testcase>
<testcase name="[It] fencing through csi-addons FENCING-003 the driver pod is deleted [suite:fencing]" status="failed"><failure message="oracle">x</failure></testcase>
<testcase name="[It] DR rehearsal FENCING-007 DR rehearsal [suite:fencing]" status="skipped"><skipped message="not kind"></skipped></testcase>
</testsuite></testsuites>`)
	write(t, dir, "fencing.md", "# fencing")
	write(t, dir, "isolation.xml", `<testsuites><testsuite name="data-plane isolation">
<testcase name="ISOLATION-014 legacy: the legacy selector"></testcase>
<testcase name="ISOLATION-014 legacy-equivalent: its location"></testcase>
<testcase name="ISOLATION-016 wrong-policy: one pod too many"></testcase>
</testsuite></testsuites>`)
	write(t, dir, "sim-compare.json", `{"scenarios":24,"randomRuns":200,"policies":[{"policy":"safe","runs":224,"violatingRuns":0},{"policy":"seed","runs":224,"violatingRuns":73}],"unexpected":[]}`)
	write(t, dir, "e2e-summary.xml", `<testsuites><testsuite name="make e2e" tests="2" failures="x"><broken`)
	for i := range 30 {
		write(t, dir, "sim-explore-seed/seed-"+string(rune('a'+i%26))+".yaml", "seed: 1\n")
	}
	return dir
}

// TestFrontPageLeadsWithTheFailure: the verdicts come first, failures
// before everything else, each with the figure read from its report; a
// missing report says "not run", a broken one "unreadable"; the per-run
// files follow, folded by producer.
func TestFrontPageLeadsWithTheFailure(t *testing.T) {
	dir := reportsWithAFailure(t)
	lines, _, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, verdict, figure string }{
		{"csi-proxy conformance", "DOES NOT CONFORM", "1 of 2 MUST rules pass; failed: PIPE-002"},
		{"fencing end to end (refstore)", "FAIL", "1 of 3 cases passed; failed: FENCING-003; skipped: FENCING-007; in 312 s"},
		{"make e2e (every kind suite)", "unreadable", "e2e-summary.xml: "},
		{"fence conformance (fenceproof sanity)", "INCOMPLETE", `1 of 2 MUST rules pass; 1 of 3 rules selected (--label-filter "IDENT-001"); driver ref; in 2s`},
		{"data-plane isolation", "PASS", "2 of 2 matrix cases passed"},
		{"simulator: policies compared", "PASS", "safe 0/224, seed 73/224"},
		{"fencing end to end (Ceph)", "not run", "no fencing-ceph.xml; make e2e-fencing FENCING_STORAGE=ceph writes it"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(lines), len(want), lines)
	}
	for i, w := range want {
		l := lines[i]
		if l.Name != w.name || l.Verdict != w.verdict || !strings.Contains(l.Figure, w.figure) {
			t.Errorf("line %d = %q %q %q, want %q %q containing %q", i, l.Name, l.Verdict, l.Figure, w.name, w.verdict, w.figure)
		}
	}

	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	rows := regexp.MustCompile(`<tr class="(\w+)"><td>(.*?)</td><td class="v">(.*?)</td>`).FindAllStringSubmatch(html, -1)
	if len(rows) != len(want) {
		t.Fatalf("%d verdict rows on the page, want %d:\n%s", len(rows), len(want), html)
	}
	if rows[0][1] != "failed" || !strings.Contains(rows[0][2], "csi-proxy conformance") || rows[1][3] != "FAIL" || !strings.Contains(rows[1][2], `<a href="fencing.md">`) {
		t.Errorf("the page does not lead with the failures, linked to their reports: %q, %q", rows[0], rows[1])
	}
	verdicts, files := strings.Index(html, "<h2>Verdicts</h2>"), strings.Index(html, "<details>")
	if verdicts < 0 || files < verdicts {
		t.Errorf("the verdicts do not come before the files (verdicts at %d, first folded group at %d)", verdicts, files)
	}
	if !strings.Contains(html, "<details><summary>simulator exploration: 26 files</summary>") {
		t.Errorf("the exploration's per-seed files are not folded into one group:\n%s", html)
	}
	if strings.Index(html, "sim-explore-seed/seed-a.yaml") < files {
		t.Error("a per-seed file is listed before the folded groups")
	}
}

func TestReadJUnitNeedsTestcases(t *testing.T) {
	if _, err := readJUnit("cases")([]byte(`<testsuite tests="0"></testsuite>`)); err == nil {
		t.Error("a JUnit report without testcases read as a verdict")
	}
	l, err := readJUnit("suites")([]byte(`<testsuite name="make e2e" time="265"><testcase name="e2e-smoke"></testcase><testcase name="e2e-fencing"><failure message="exit 1"/></testcase></testsuite>`))
	if err != nil || l.State != Failed || l.Figure != "1 of 2 suites passed; failed: e2e-fencing; in 265 s" {
		t.Errorf("lone testsuite: %+v, %v", l, err)
	}
}

// TestConformanceLineIsTheRunVerdict: the line says the suite's own run
// verdict, coloured so that only CONFORMS is green; a report without one
// (written before the suites computed it once) is unreadable, not a pass.
func TestConformanceLineIsTheRunVerdict(t *testing.T) {
	for verdict, want := range map[string]State{"CONFORMS": Passed, "DOES NOT CONFORM": Failed, "INCOMPLETE": Incomplete, "UNREACHABLE": Failed} {
		l, err := readConformance([]byte(`{"verdict":"` + verdict + `","rules":[{"id":"A-001","level":"MUST","verdict":"PASS"}]}`))
		if err != nil || l.State != want || l.Verdict != verdict {
			t.Errorf("%s: %+v %v, want state %s", verdict, l, err, want)
		}
	}
	if l, err := readConformance([]byte(`{"core":"CONFORMS","rules":[{"id":"A-001","level":"MUST","verdict":"PASS"}]}`)); err == nil {
		t.Errorf("a report without a run verdict read as %+v", l)
	}
}
