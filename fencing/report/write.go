package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/judge"
)

// Write writes the run's reports into dir and returns their paths:
// report.md, report.html, timeline.svg, junit.xml, result.json, and
// evidence/input.json (the judge's input: `fenceproof fencing judge DIR`
// decides again from it).
func Write(dir string, r *Run) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "evidence"), 0o755); err != nil {
		return nil, err
	}
	svg := Timeline(r)
	files := []struct {
		name string
		data func() ([]byte, error)
	}{
		{"timeline.svg", func() ([]byte, error) { return []byte(svg), nil }},
		{"report.md", func() ([]byte, error) { return []byte(Markdown(r)), nil }},
		{"report.html", func() ([]byte, error) { return HTML(r, svg) }},
		{"junit.xml", func() ([]byte, error) { return JUnit(r) }},
		{"result.json", func() ([]byte, error) {
			return json.MarshalIndent(struct {
				Status, Reason string
				Meta           Meta
				Steps          []Step
				Result         *judge.Result
				Leftovers      []string
			}{r.Status, r.Reason, r.Meta, r.Steps, r.Result, r.Leftovers}, "", "  ")
		}},
		{"evidence/input.json", func() ([]byte, error) { return json.MarshalIndent(r.Input, "", " ") }},
	}
	var paths []string
	for _, f := range files {
		b, err := f.data()
		if err != nil {
			return paths, fmt.Errorf("%s: %w", f.name, err)
		}
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// ReadInput reads a run's evidence/input.json.
func ReadInput(dir string) (judge.Input, error) {
	var in judge.Input
	b, err := os.ReadFile(filepath.Join(dir, "evidence", "input.json"))
	if err != nil {
		return in, err
	}
	return in, json.Unmarshal(b, &in)
}

// ReadRun reads back what Write wrote (result.json, evidence/input.json).
func ReadRun(dir string) (*Run, error) {
	r := &Run{}
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("result.json: %w", err)
	}
	if r.Input, err = ReadInput(dir); err != nil {
		return nil, err
	}
	return r, nil
}

// Summary is the verdict in a few lines: the status, why, and the first
// broken promise.
func Summary(r *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict: %s", r.Status)
	if r.Reason != "" {
		fmt.Fprintf(&b, " (%s)", r.Reason)
	}
	b.WriteString("\n")
	if r.Result != nil {
		for _, c := range judge.Checks {
			if sev := r.Result.Checks[c.ID]; sev != "" && sev != judge.SevNote {
				fmt.Fprintf(&b, "  %-16s %s\n", c.ID, strings.ToUpper(string(sev)))
			}
		}
		if f := r.Result.First(); f != nil {
			fmt.Fprintf(&b, "first: %s\n  evidence: %s\n", f, f.Evidence)
		}
	}
	for _, l := range r.Leftovers {
		fmt.Fprintf(&b, "LEFT: %s\n", l)
	}
	return b.String()
}

// rel is t relative to the run's start, in seconds.
func (r *Run) rel(t int64) float64 { return float64(t-r.Meta.StartNs) / 1e9 }

func fmtTime(ns int64) string {
	if ns == 0 {
		return "—"
	}
	return time.Unix(0, ns).UTC().Format("15:04:05.000000")
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }
