package sanity

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// WriteReports writes sanity.json, sanity.md and sanity.html into dir and
// returns their paths.
func (r *Result) WriteReports(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{{"sanity.json", r.WriteJSON}, {"sanity.md", r.WriteMarkdown}, {"sanity.html", r.WriteHTML}} {
		p := filepath.Join(dir, w.name)
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

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Summary is a one-line count of verdicts, e.g. "54 PASS, 1 FAIL".
func (r *Result) Summary() string {
	var parts []string
	for _, v := range Verdicts {
		if n := r.Count(v); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	return strings.Join(parts, ", ")
}

// attention are the rules that failed or warned, in report order.
func (r *Result) attention() []RuleResult {
	var out []RuleResult
	for _, rr := range r.Rules {
		if rr.Verdict == VerdictFail || rr.Verdict == VerdictWarn {
			out = append(out, rr)
		}
	}
	return out
}

func (r *Result) verdictWord() string {
	if r.Passed() {
		return "CONFORMS"
	}
	return "DOES NOT CONFORM"
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// WriteMarkdown writes a human summary: the driver, the verdict, a table of
// every rule and the details of each rule that did not pass.
func (r *Result) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# fenceproof sanity: %s\n\n", r.verdictWord())
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| endpoint | `%s` |\n| driver | %s %s |\n| capabilities | %s |\n", r.Endpoint, mdCell(r.DriverName), mdCell(r.DriverVer), strings.Join(r.Capabilities, ", "))
	fmt.Fprintf(&b, "| profile | hostBits=%s, ipv6=%s, listClusterFence=%s, strict=%v |\n", r.Profile.HostBits, r.Profile.IPv6, r.Profile.ListClusterFence, r.Strict)
	fmt.Fprintf(&b, "| seed | %d |\n| started | %s |\n| duration | %s (%d RPCs) |\n| rules | %s |\n", r.Seed, r.Started.UTC().Format(time.RFC3339), r.Duration.Round(time.Millisecond), r.Calls, r.Summary())
	fmt.Fprintf(&b, "| state read from | %s |\n| core verdict | **%s** |\n| extended verdict | %s |\n\n", r.StateSource, r.Core, mdCell(r.Extended))
	if r.SetupError != "" {
		fmt.Fprintf(&b, "**Setup failed:** %s\n\n", mdCell(r.SetupError))
	}
	if att := r.attention(); len(att) > 0 {
		fmt.Fprintf(&b, "## Needs attention\n\n| rule | level | verdict | reason |\n|---|---|---|---|\n")
		for _, rr := range att {
			fmt.Fprintf(&b, "| %s | %s | **%s** | %s |\n", rr.ID, rr.Level, rr.Verdict, mdCell(rr.Reason))
		}
		fmt.Fprintf(&b, "\n## All rules\n\n")
	}
	fmt.Fprintf(&b, "| rule | level | verdict | what a conforming driver does | reason |\n|---|---|---|---|---|\n")
	for _, rr := range r.Rules {
		fmt.Fprintf(&b, "| %s | %s | **%s** | %s | %s |\n", rr.ID, rr.Level, rr.Verdict, mdCell(rr.Title), mdCell(rr.Reason))
	}
	for _, rr := range r.Rules {
		if rr.Verdict != VerdictFail && rr.Verdict != VerdictWarn {
			continue
		}
		fmt.Fprintf(&b, "\n## %s %s: %s\n\n%s\n\n> %s\n\n", rr.Verdict, rr.ID, rr.Title, "Labels: "+strings.Join(rr.labels(), ", "), rr.Spec)
		for _, c := range rr.Cases {
			if c.State == "passed" {
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

var htmlReport = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":    func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"lower": func(v Verdict) string { return strings.ToLower(strings.ReplaceAll(string(v), " ", "")) },
	"join":  strings.Join,
	"rfc":   func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fenceproof sanity: {{.Word}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
h1{font-size:1.5em} h1 .conforms{color:#176f2c} h1 .notconform{color:#b3261e}
table{border-collapse:collapse;width:100%;margin:1em 0} td,th{border:1px solid #ddd;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f4f4f4} .meta td:first-child{font-weight:600;width:10em}
.v{font-weight:700;white-space:nowrap} .fail{color:#b3261e} .warn{color:#9a6700} .pass{color:#176f2c} .info{color:#0b57d0} .skip,.notrun{color:#777}
tr.fail{background:#fdecea} tr.warn{background:#fff8e1}
details{margin:.2em 0} pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em;margin:.3em 0}
.muted{color:#777;font-size:12px} td code{white-space:nowrap}
</style></head><body>
<h1>fenceproof sanity: <span class="{{if .R.Passed}}conforms{{else}}notconform{{end}}">{{.Word}}</span></h1>
<table class="meta">
<tr><td>endpoint</td><td><code>{{.R.Endpoint}}</code></td></tr>
<tr><td>core verdict</td><td>{{.R.Core}}</td></tr>
<tr><td>extended verdict</td><td>{{.R.Extended}}</td></tr>
<tr><td>state read from</td><td>{{.R.StateSource}}</td></tr>
<tr><td>driver</td><td>{{.R.DriverName}} {{.R.DriverVer}}</td></tr>
<tr><td>capabilities</td><td>{{join .R.Capabilities ", "}}</td></tr>
<tr><td>profile</td><td>hostBits={{.R.Profile.HostBits}}, ipv6={{.R.Profile.IPv6}}, listClusterFence={{.R.Profile.ListClusterFence}}, strict={{.R.Strict}}</td></tr>
<tr><td>seed</td><td>{{.R.Seed}}</td></tr>
<tr><td>run</td><td>{{rfc .R.Started}}, {{ms .R.Duration}}, {{.R.Calls}} RPCs</td></tr>
<tr><td>rules</td><td>{{.R.Summary}}</td></tr>
{{if .R.SetupError}}<tr class="fail"><td>setup</td><td>{{.R.SetupError}}</td></tr>{{end}}
</table>
{{with .Attention}}<h2>Needs attention</h2>
<table><tr><th>rule</th><th>level</th><th>verdict</th><th>reason</th></tr>
{{range .}}<tr class="{{lower .Verdict}}"><td><a href="#{{.ID}}"><code>{{.ID}}</code></a></td><td>{{.Level}}</td><td class="v {{lower .Verdict}}">{{.Verdict}}</td><td>{{.Title}}<pre>{{.Reason}}</pre></td></tr>
{{end}}</table>{{end}}
<h2>All rules</h2>
<table><tr><th>rule</th><th>level</th><th>verdict</th><th>what a conforming driver does</th><th>reason and cases</th></tr>
{{range .R.Rules}}<tr class="{{lower .Verdict}}" id="{{.ID}}"><td><code>{{.ID}}</code></td><td>{{.Level}}</td><td class="v {{lower .Verdict}}">{{.Verdict}}</td>
<td>{{.Title}}<div class="muted">{{.Spec}}</div></td>
<td>{{.Reason}}{{if .Cases}}<details><summary>{{len .Cases}} case(s), {{ms .Duration}}</summary>{{range .Cases}}<div><b>{{.Name}}</b> {{.State}} {{ms .Duration}}{{if .Message}}<pre>{{.Message}}</pre>{{end}}</div>{{end}}</details>{{end}}</td></tr>
{{end}}</table>
<p class="muted">Generated by fenceproof. Levels follow RFC 2119: only MUST failures (and SHOULD failures with --strict) make a driver non-conforming.</p>
</body></html>
`))

// WriteHTML writes a self-contained HTML page of the result.
func (r *Result) WriteHTML(w io.Writer) error {
	return htmlReport.Execute(w, struct {
		R         *Result
		Word      string
		Attention []RuleResult
	}{r, r.verdictWord(), r.attention()})
}
