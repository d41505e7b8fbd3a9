package sanity_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"

	"github.com/fenceproof/fenceproof/rulebook"
	"github.com/fenceproof/fenceproof/rulebook/clitest"
	"github.com/fenceproof/fenceproof/sanity"
)

// TestOneVerdictEverywhere runs the suite to each run verdict and checks
// that the terminal, the JSON, Markdown and HTML reports, the JUnit report
// as a JUnit reader that is not ours sees it (github.com/joshdk/go-junit;
// red is failures + errors > 0, as Jenkins and GitLab judge) and the
// reports index all say the same thing: the run's verdict, and each rule's.
func TestOneVerdictEverywhere(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  []string
		exit  int
		index string // the class of the index's line
	}{
		{"incomplete: one rule selected", []string{"--driver-backend", "memory", "--label-filter", "IDENT-001"}, 3, "incomplete"},
		{"unreachable", []string{"--endpoint", "unix://" + filepath.Join(t.TempDir(), "nobody.sock"), "--connect-timeout", "1s"}, 4, "failed"},
		{"does not conform: two rules fail", []string{"--driver-backend", "memory", "--driver-fault", "no-auth", "--label-filter", "secrets"}, 1, "failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := sanityRun(t, 2*time.Minute, c.args...)
			if r.Exit != c.exit {
				t.Fatalf("exit %d, want %d:\n%s", r.Exit, c.exit, clitest.Tail(r.Out))
			}
			verdict := string(r.result.Verdict)
			if rulebook.RunVerdict(verdict).ExitCode() != r.Exit {
				t.Errorf("the JSON says %s, the exit status %d", verdict, r.Exit)
			}
			out := outputs(t, r)
			if !strings.Contains(out["stdout"], "verdict: "+verdict) || !strings.HasPrefix(out["sanity.md"], "# fenceproof sanity: "+verdict) ||
				!strings.Contains(out["sanity.html"], "<title>fenceproof sanity: "+verdict+"</title>") {
				t.Errorf("the terminal, Markdown or HTML report does not say %s", verdict)
			}
			for _, o := range []string{"stdout", "sanity.md", "sanity.html", "sanity.json", "sanity-junit.xml"} {
				if strings.Contains(out[o], "core") && strings.Contains(out[o], "extended") {
					t.Errorf("%s still shows the core and extended verdicts", o)
				}
			}
			checkJUnit(t, r)
			for _, rr := range r.result.Rules {
				if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(string(rr.Verdict)) + ` +` + rr.ID + ` `).MatchString(out["stdout"]) {
					t.Errorf("the terminal does not print %s's verdict %s", rr.ID, rr.Verdict)
				}
				if !strings.Contains(out["sanity.md"], fmt.Sprintf("| %s | %s | **%s** |", rr.ID, rr.Level, rr.Verdict)) {
					t.Errorf("the Markdown report does not give %s the verdict %s", rr.ID, rr.Verdict)
				}
			}
			page, err := os.ReadFile(filepath.Join(r.Dir, "index.html"))
			if err != nil {
				t.Fatalf("the run did not update the reports index: %v", err)
			}
			row := regexp.MustCompile(`<tr class="(\w+)"><td><a href="sanity.html">fence conformance \(fenceproof sanity\)</a></td><td class="v">([A-Z ]+)</td>`).FindStringSubmatch(string(page))
			if row == nil || row[1] != c.index || row[2] != verdict {
				t.Errorf("the index's line is %q, want class %s and verdict %s", row, c.index, verdict)
			}
		})
	}
}

// checkJUnit reads the run's JUnit report with go-junit and checks it says
// what the JSON report says: one testcase per rule, each rule's verdict
// (FAIL failed, NOT RUN that keeps the run INCOMPLETE an error, SKIP, NOT
// SUPPORTED and other NOT RUN skipped, the rest passed), a failing testcase
// of its own for an INCOMPLETE or UNREACHABLE run, and red exactly when the
// exit status is not 0.
func checkJUnit(t *testing.T, r run) {
	t.Helper()
	suites, err := junit.IngestFile(filepath.Join(r.Dir, "sanity-junit.xml"))
	if err != nil || len(suites) != 1 {
		t.Fatalf("the JUnit report does not read (%d suites): %v", len(suites), err)
	}
	s := suites[0]
	tot := s.Totals
	if red := tot.Failed+tot.Error > 0; red != (r.Exit != 0) {
		t.Errorf("exit %d, but a JUnit reader sees %+v", r.Exit, tot)
	}
	if tot.Failed+tot.Error == 0 && r.result.Verdict != rulebook.Conforms {
		t.Errorf("JUnit is green for %s", r.result.Verdict)
	}
	extra := 0
	if v := r.result.Verdict; v == rulebook.Incomplete || v == rulebook.Unreachable {
		extra = 1
	}
	if tot.Tests != len(r.result.Rules)+extra || tot.Failed != len(r.result.Failed())+extra {
		t.Errorf("JUnit has %d testcases and %d failures; the run has %d rules, %d failed (and %s)", tot.Tests, tot.Failed, len(r.result.Rules), len(r.result.Failed()), r.result.Verdict)
	}
	status := map[string]junit.Status{}
	for _, tc := range s.Tests {
		status[tc.Name] = tc.Status
	}
	for _, rr := range r.result.Rules {
		want := junit.StatusPassed
		switch {
		case rr.Verdict == sanity.VerdictFail:
			want = junit.StatusFailed
		case rr.Verdict == sanity.VerdictNotRun && rr.Incomplete != "" && rr.NotRun != rulebook.NotRunFiltered:
			want = junit.StatusError
		case rr.Verdict == sanity.VerdictNotRun || rr.Verdict == sanity.VerdictSkip || rr.Verdict == sanity.VerdictNotSup:
			want = junit.StatusSkipped
		}
		if got := status[rr.Text()]; got != want {
			t.Errorf("JUnit says %s for %s (%s), want %s", got, rr.ID, rr.Verdict, want)
		}
	}
}
