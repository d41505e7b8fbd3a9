package fencing

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/reporters"
)

// The figures the summary of reports/fencing.md gathers from every case.
const (
	figEnforce   = "RPC return → enforcement (ms; the storage's enforcement time minus the ack)"
	figSucceeded = "CR creation → Succeeded (s)"
	figLastB     = "last write of B accepted before the ack (ms before the ack)"
	figRefusal   = "ack → first refusal seen by B's writer (ms)"
	figLost      = "writes lost by the unfenced worker A"
)

var summaryFigures = []string{figEnforce, figSucceeded, figLastB, figRefusal, figLost}

// suiteReport collects every case for reports/fencing.md
// (fencing-<storage>.md on another storage); the JUnit XML
// (reports/fencing.xml) is Ginkgo's own.
type suiteReport struct {
	mu      sync.Mutex
	target  string
	started time.Time
	cases   []*fcase
	results map[string]string // case id -> PASS/FAIL and failure message
}

func (r *suiteReport) start(target string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.target, r.started, r.results = target, time.Now(), map[string]string{}
}

// add records a case when its spec ends (from its DeferCleanup, so the
// spec's verdict is known).
func (r *suiteReport) add(c *fcase) {
	rep := CurrentSpecReport()
	verdict := "PASS"
	if rep.Failed() {
		verdict = "FAIL: " + oneLine(rep.FailureMessage())
	}
	c.event("case ends: %s", verdict)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cases = append(r.cases, c)
	r.results[c.id] = verdict
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

// write renders <reportBase>.md and one timeline file per case in its
// directory.
func (r *suiteReport) write(dir string, w *world) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.MkdirAll(filepath.Join(dir, reportBase()), 0o755); err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# fencing end to end (storage: %s)\n\nTarget: %s\n\nSuite wall time: %.1f s (deploy included); %d cases.\n\n",
		w.store.name(), r.target, time.Since(w.startedAt).Seconds(), len(r.cases))
	b.WriteString("| case | verdict | wall time (s) |\n| --- | --- | --- |\n")
	for _, c := range r.cases {
		fmt.Fprintf(&b, "| %s | %s | %.1f |\n", c.name, mdEscape(r.results[c.id]), c.wall().Seconds())
	}
	b.WriteString("\n## Figures\n\n| figure | per case |\n| --- | --- |\n")
	for _, name := range summaryFigures {
		var vals []string
		for _, c := range r.cases {
			for _, f := range c.figures {
				if f.Name == name {
					vals = append(vals, c.id+": "+f.Value)
				}
			}
		}
		if len(vals) > 0 {
			fmt.Fprintf(&b, "| %s | %s |\n", name, mdEscape(strings.Join(vals, "; ")))
		}
	}
	for _, c := range r.cases {
		fmt.Fprintf(&b, "\n## %s\n\n", c.name)
		if len(c.figures) > 0 {
			b.WriteString("| figure | value |\n| --- | --- |\n")
			for _, f := range c.figures {
				fmt.Fprintf(&b, "| %s | %s |\n", f.Name, mdEscape(f.Value))
			}
			b.WriteString("\n")
		}
		b.WriteString("Timeline (seconds since the case started):\n\n```\n")
		var t strings.Builder
		for _, e := range c.events {
			fmt.Fprintf(&t, "%8.3f  %s\n", e.At.Seconds(), e.What)
		}
		b.WriteString(t.String())
		b.WriteString("```\n")
		if err := os.MkdirAll(c.caseDir(), 0o755); err == nil {
			_ = os.WriteFile(filepath.Join(c.caseDir(), "timeline.txt"), []byte(t.String()), 0o644)
		}
	}
	fmt.Fprintf(&b, "\nEvidence: reports/%s/ holds the storage's accepted, refused and enforcement logs, every driver pod's log, and per case (a directory named by its ID) the writers' logs, the oracle's inputs and report, and the timeline.\n", reportBase())
	md := filepath.Join(dir, reportBase()+".md")
	if err := os.WriteFile(md, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return []string{md}, nil
}

func (c *fcase) wall() time.Duration {
	if len(c.events) == 0 {
		return 0
	}
	return c.events[len(c.events)-1].At
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// The JUnit report of the suite, reports/<reportBase>.xml, whatever the
// flags; not for a preview (the case table test).
var _ = ReportAfterSuite("fencing JUnit report", func(r Report) {
	if r.SuiteConfig.DryRun {
		return
	}
	_ = os.MkdirAll(*flagReports, 0o755)
	if err := reporters.GenerateJUnitReport(r, filepath.Join(*flagReports, reportBase()+".xml")); err != nil {
		fmt.Fprintf(os.Stderr, "fencing: JUnit report: %v\n", err)
	}
})
