package reportindex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIndex: every report gets one row with the verdict read from it.
func TestIndex(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "sanity-junit.xml", `<testsuites><testsuite tests="10" failures="2" errors="0"></testsuite></testsuites>`)
	write(t, dir, "sanity.html", "<html></html>")
	write(t, dir, "sanity.md", "# sanity")
	write(t, dir, "e2e-isolation-junit.xml", `<testsuite tests="4" failures="0" errors="0"></testsuite>`)
	write(t, dir, "sim/power-loss/safe-1.txt", "# scenario\n# verdict: pass\n")
	write(t, dir, "sim/power-loss/safe-1.html", "<html></html>")
	write(t, dir, "sim/power-loss/safe-1.svg", "<svg/>")
	write(t, dir, "sim/two-failures/seed-1.txt", "# verdict: inv1\n")
	write(t, dir, "sim/two-failures/seed-1.html", "<html></html>")
	write(t, dir, "sim-compare.html", "<html></html>")
	write(t, dir, "sim-compare.md", "# md")
	write(t, dir, "sim-compare-traces/x.txt", "# verdict: inv1\n")
	write(t, dir, "sim-explore-seed.txt", "...\nexplore: policy seed: 41 of 100 random schedules broke an invariant\n")
	_, es, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range es {
		got[e.Path] = e.Verdict
	}
	want := map[string]string{
		"sanity-junit.xml":             "2 of 10 failed",
		"sanity.html":                  "",
		"e2e-isolation-junit.xml":      "pass (4 tests)",
		"sim/power-loss/safe-1.html":   "pass",
		"sim/two-failures/seed-1.html": "inv1",
		"sim-compare.html":             "",
		"sim-explore-seed.txt":         "41 of 100 schedules broke an invariant",
	}
	for p, v := range want {
		if g, ok := got[p]; !ok || g != v {
			t.Errorf("%s: verdict %q (listed %v), want %q", p, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("listed %v, want exactly %d entries", got, len(want))
	}
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `href="sim/two-failures/seed-1.html"`) {
		t.Error("index.html does not link a sim run")
	}
}
