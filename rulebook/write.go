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

// WriteReports writes base.json (r as a whole), base.md, base.html and the
// JUnit XML report (at junit, or base-junit.xml when junit is "") into dir
// and returns their paths, JUnit first. Every one renders the verdicts the
// result holds; none computes one.
func WriteReports(dir, base string, r Reportable, junit string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if junit == "" {
		junit = filepath.Join(dir, base+"-junit.xml")
	}
	res := r.Base()
	var paths []string
	for _, w := range []struct {
		path  string
		write func(io.Writer) error
	}{
		{junit, res.WriteJUnit},
		{filepath.Join(dir, base+".json"), func(w io.Writer) error { return WriteJSON(w, r) }},
		{filepath.Join(dir, base+".md"), res.WriteMarkdown},
		{filepath.Join(dir, base+".html"), res.WriteHTML},
	} {
		p := w.path
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
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(Printable(s))
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
		headerLine{Name: "rules", Value: r.Summary()})
	if sel := r.Selection.String(); sel != "" {
		out = append(out, headerLine{Name: "selection", Value: fmt.Sprintf("%d of %d rules selected by %s", r.Ran(), len(r.Rules), sel)})
	}
	out = append(out, headerLine{Name: "verdict", Value: string(r.Verdict), Strong: true})
	if len(r.IncompleteBecause) > 0 {
		out = append(out, headerLine{Name: "incomplete because", Value: strings.Join(r.IncompleteBecause, "; ")})
	}
	return out
}

// WriteMarkdown writes a human summary: the run, its verdict, a table of
// every rule and the details of each rule that did not pass.
func (r *Result) WriteMarkdown(w io.Writer) error {
	r = r.shown()
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
			fence := codeFence(c.Message)
			fmt.Fprintf(&b, "\n\n  %s\n  %s\n  %s\n", fence, strings.ReplaceAll(c.Message, "\n", "\n  "), fence)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteVerdicts prints, for a terminal, the verdict of every rule, one line
// each, with the reason under each rule that did not pass, then the rules
// that keep the run from CONFORMS and the run's verdict.
func (r *Result) WriteVerdicts(w io.Writer) {
	r = r.shown()
	width := 0
	for _, rr := range r.Rules {
		width = max(width, len(rr.ID))
	}
	filtered := func(rr RuleResult) bool { return rr.Verdict == VerdictNotRun && rr.NotRun == NotRunFiltered }
	for _, rr := range r.Rules {
		fmt.Fprintf(w, "  %-13s %-*s %-6s %s\n", rr.Verdict, width, rr.ID, rr.Level, clip(rr.Title, 90))
		if rr.Verdict != VerdictPass && rr.Reason != "" && !filtered(rr) {
			fmt.Fprintf(w, "  %-13s %s\n", "", clip(rr.Reason, 200))
		}
	}
	var incomplete []string
	unselected := 0
	for _, rr := range r.Rules {
		switch {
		case rr.Incomplete == "":
		case filtered(rr):
			unselected++
		default:
			incomplete = append(incomplete, rr.ID+": "+clip(rr.Incomplete, 200))
		}
	}
	for i, why := range incomplete {
		if i == 10 {
			fmt.Fprintf(w, "incomplete: and %d more rules (the reports name each)\n", len(incomplete)-10)
			break
		}
		fmt.Fprintf(w, "incomplete: %s\n", why)
	}
	if sel := r.Selection.String(); sel != "" {
		fmt.Fprintf(w, "selection: %d of %d rules selected by %s", r.Ran(), len(r.Rules), sel)
		if unselected > 0 {
			fmt.Fprintf(w, "; the %d rules it leaves out that must run keep the run from CONFORMS", unselected)
		}
		fmt.Fprintln(w)
	}
}

// clip is the first line of s, at most n runes.
func clip(s string, n int) string {
	s, _, cut := strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	} else if cut {
		return s + " …"
	}
	return s
}

// codeFence is a Markdown code fence longer than any run of backticks in s,
// so that s cannot close it.
func codeFence(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
