package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// Verdict is the outcome of one rule.
type Verdict string

// Verdicts.
const (
	VerdictPass   Verdict = "PASS"
	VerdictFail   Verdict = "FAIL"
	VerdictWarn   Verdict = "WARN"
	VerdictSkip   Verdict = "SKIP"
	VerdictInfo   Verdict = "INFO"
	VerdictNotRun Verdict = "NOT RUN"
)

// RuleResult is one rule's verdict.
type RuleResult struct {
	Rule
	Verdict Verdict  `json:"verdict"`
	Reason  string   `json:"reason,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

// Result is a whole run.
type Result struct {
	Endpoint string        `json:"endpoint"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	Rules    []RuleResult  `json:"rules"`
}

// Passed: no MUST rule failed.
func (r *Result) Passed() bool {
	for _, rr := range r.Rules {
		if rr.Verdict == VerdictFail {
			return false
		}
	}
	return true
}

// Failed lists the IDs of failed rules.
func (r *Result) Failed() []string {
	var out []string
	for _, rr := range r.Rules {
		if rr.Verdict == VerdictFail {
			out = append(out, rr.ID)
		}
	}
	return out
}

func buildResult(cfg Config, rep types.Report, started time.Time) *Result {
	byID := map[string]*RuleResult{}
	res := &Result{Endpoint: cfg.Endpoint, Started: started, Duration: time.Since(started)}
	for _, r := range AllRules() {
		res.Rules = append(res.Rules, RuleResult{Rule: r, Verdict: VerdictNotRun})
	}
	for i := range res.Rules {
		byID[res.Rules[i].ID] = &res.Rules[i]
	}
	for _, sr := range rep.SpecReports {
		var rr *RuleResult
		var warnings, notes []string
		for _, e := range sr.ReportEntries {
			switch e.Name {
			case entryRule:
				rr = byID[e.Value.String()]
			case entryWarning:
				warnings = append(warnings, e.Value.String())
			case entryNote:
				notes = append(notes, e.Value.String())
			}
		}
		if rr == nil {
			// a setup failure (BeforeAll) fails every rule after it
			if sr.State.Is(types.SpecStateFailureStates) && sr.LeafNodeType == types.NodeTypeBeforeAll {
				for i := range res.Rules {
					res.Rules[i].Verdict, res.Rules[i].Reason = VerdictFail, "setup: "+sr.Failure.Message
				}
			}
			continue
		}
		rr.Notes = append(rr.Notes, notes...)
		switch {
		case sr.State.Is(types.SpecStateFailureStates):
			rr.Verdict, rr.Reason = VerdictFail, sr.Failure.Message
		case sr.State == types.SpecStateSkipped:
			rr.Verdict, rr.Reason = VerdictSkip, sr.Failure.Message
		case len(warnings) > 0:
			rr.Verdict, rr.Reason = VerdictWarn, strings.Join(warnings, "; ")
		case sr.State == types.SpecStatePassed && rr.Level == Info:
			rr.Verdict = VerdictInfo
		case sr.State == types.SpecStatePassed:
			rr.Verdict = VerdictPass
		}
	}
	return res
}

// WriteReports writes csiproxy.json and csiproxy.md into dir.
func (r *Result) WriteReports(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "csiproxy.json"), b, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "csiproxy.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	return r.WriteMarkdown(f)
}

// WriteMarkdown writes the verdict table.
func (r *Result) WriteMarkdown(w io.Writer) error {
	verdict := "conforms"
	if !r.Passed() {
		verdict = "does NOT conform"
	}
	fmt.Fprintf(w, "# csi-proxy conformance: %s\n\nendpoint `%s`, %s, %s\n\n", verdict, r.Endpoint, r.Started.UTC().Format(time.RFC3339), r.Duration.Round(time.Millisecond))
	fmt.Fprintln(w, "| rule | level | verdict | what | detail |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
	for _, rr := range r.Rules {
		detail := rr.Reason
		if len(rr.Notes) > 0 {
			detail = strings.TrimSpace(detail + " " + strings.Join(rr.Notes, "; "))
		}
		_, err := fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", rr.ID, rr.Level, rr.Verdict, cell(rr.Title), cell(detail))
		if err != nil {
			return err
		}
	}
	return nil
}

// Summary is one line per failed or warned rule and a count.
func (r *Result) Summary() string {
	var b strings.Builder
	counts := map[Verdict]int{}
	for _, rr := range r.Rules {
		counts[rr.Verdict]++
		if rr.Verdict == VerdictFail || rr.Verdict == VerdictWarn {
			fmt.Fprintf(&b, "%s %s: %s\n", rr.Verdict, rr.ID, firstLine(rr.Reason))
		}
	}
	fmt.Fprintf(&b, "%d rules: %d pass, %d fail, %d warn, %d skip, %d info, %d not run\n",
		len(r.Rules), counts[VerdictPass], counts[VerdictFail], counts[VerdictWarn], counts[VerdictSkip], counts[VerdictInfo], counts[VerdictNotRun])
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", "<br>")
	if len(s) > 600 {
		s = s[:600] + " ..."
	}
	return s
}
