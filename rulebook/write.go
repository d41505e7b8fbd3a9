package rulebook

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Reportable is a suite's result: its own type, which embeds *Result (or
// Result) and is what the JSON report holds.
type Reportable interface{ Base() *Result }

// WriteReports writes base.json (r as a whole), base.md and base.html into
// dir and returns their paths.
func WriteReports(dir, base string, r Reportable) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res := r.Base()
	var paths []string
	for _, w := range []struct {
		ext   string
		write func(io.Writer) error
	}{
		{".json", func(w io.Writer) error { return WriteJSON(w, r) }},
		{".md", res.WriteMarkdown},
		{".html", res.WriteHTML},
	} {
		p := filepath.Join(dir, base+w.ext)
		f, err := os.Create(p)
		if err != nil {
			return paths, err
		}
		err = w.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("%s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// MarkdownCell makes s fit in one cell of a Markdown table.
func MarkdownCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// headerLine is one line of a report's header.
type headerLine struct {
	Name, Value  string
	Code, Strong bool // shown as code, in bold
}

// header are the lines of a report's header, in order: the endpoint, the
// suite's facts, then the run's own.
func (r *Result) header() []headerLine {
	out := []headerLine{{Name: "endpoint", Value: r.Endpoint, Code: true}}
	for _, f := range r.Facts {
		out = append(out, headerLine{Name: f.Name, Value: f.Value})
	}
	if r.Seed != 0 {
		out = append(out, headerLine{Name: "seed", Value: fmt.Sprint(r.Seed)})
	}
	out = append(out,
		headerLine{Name: "started", Value: r.Started.UTC().Format(time.RFC3339)},
		headerLine{Name: "duration", Value: r.Duration.Round(time.Millisecond).String()},
		headerLine{Name: "strict", Value: fmt.Sprint(r.Strict)},
		headerLine{Name: "rules", Value: r.Summary()},
		headerLine{Name: "core verdict", Value: r.Core, Strong: true},
		headerLine{Name: "extended verdict", Value: r.Extended})
	if len(r.IncompleteBecause) > 0 {
		out = append(out, headerLine{Name: "incomplete because", Value: strings.Join(r.IncompleteBecause, "; ")})
	}
	return out
}

// WriteMarkdown writes a human summary: the run, its verdict, a table of
// every rule and the details of each rule that did not pass.
func (r *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: %s\n\n| | |\n|---|---|\n", r.Suite, r.Verdict)
	for _, l := range r.header() {
		v := MarkdownCell(l.Value)
		switch {
		case l.Code:
			v = "`" + v + "`"
		case l.Strong:
			v = "**" + v + "**"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", l.Name, v)
	}
	b.WriteString("\n")
	if r.SetupError != "" {
		fmt.Fprintf(&b, "**Setup failed:** %s\n\n", MarkdownCell(r.SetupError))
	}
	if att := r.Attention(); len(att) > 0 {
		fmt.Fprintf(&b, "## Needs attention\n\n| rule | level | verdict | reason |\n|---|---|---|---|\n")
		for _, rr := range att {
			fmt.Fprintf(&b, "| %s | %s | **%s** | %s |\n", rr.ID, rr.Level, rr.Verdict, MarkdownCell(rr.Reason))
		}
		fmt.Fprintf(&b, "\n## All rules\n\n")
	}
	fmt.Fprintf(&b, "| rule | level | verdict | what a conforming implementation does | reason |\n|---|---|---|---|---|\n")
	for _, rr := range r.Rules {
		reason := rr.Reason
		if rr.Verdict != VerdictInfo && len(rr.Notes) > 0 {
			reason = strings.TrimSpace(reason + " (" + strings.Join(rr.Notes, "; ") + ")")
		}
		fmt.Fprintf(&b, "| %s | %s | **%s** | %s | %s |\n", rr.ID, rr.Level, rr.Verdict, MarkdownCell(rr.Title), MarkdownCell(reason))
	}
	for _, rr := range r.Attention() {
		fmt.Fprintf(&b, "\n## %s %s: %s\n\nLabels: %s\n\n> %s\n", rr.Verdict, rr.ID, rr.Title, strings.Join(rr.Selectors(), ", "), rr.Spec)
		if rr.Source != "" {
			fmt.Fprintf(&b, ">\n> (%s)\n", rr.Source)
		}
		b.WriteString("\n")
		for _, c := range rr.Cases {
			if c.Verdict != VerdictFail && c.Verdict != VerdictWarn {
				continue
			}
			fmt.Fprintf(&b, "- **%s** (%s)", c.Name, c.State)
			if c.Location != "" {
				fmt.Fprintf(&b, " at `%s`", c.Location)
			}
			fmt.Fprintf(&b, "\n\n  ```\n  %s\n  ```\n", strings.ReplaceAll(c.Message, "\n", "\n  "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteAttention prints, for a terminal, each rule that failed or warned
// with its reason.
func (r *Result) WriteAttention(w io.Writer) {
	for _, rr := range r.Attention() {
		fmt.Fprintf(w, "  %-4s %-10s %-6s %s\n       %s\n", rr.Verdict, rr.ID, rr.Level, rr.Title, rr.Reason)
	}
}
