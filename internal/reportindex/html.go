package reportindex

import (
	"fmt"
	"html"
	"strings"
	"time"
)

const style = `body{font-family:sans-serif;margin:1.5em;max-width:75em}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3}
tr.failed td.v,tr.unreadable td.v,td.bad{background:#ffebee}tr.passed td.v,td.ok{background:#e8f5e9}
tr.incomplete td.v{background:#fff8e1}tr.notrun{color:#777}summary{cursor:pointer;margin:.3em 0}
p.meta{color:#555}`

// HTML renders the front page: the verdict lines (failed first), then every
// report file, grouped by producer, each group folded.
func HTML(lines []Line, entries []Entry, written time.Time) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>fenceproof reports</title><style>` + style + "</style></head><body>\n<h1>fenceproof reports</h1>\n")
	counts := map[State]int{}
	for _, l := range lines {
		counts[l.State]++
	}
	fmt.Fprintf(&b, "<p class=\"meta\">Written %s. %d verdicts: %d failed, %d passed, %d incomplete, %d not run",
		written.UTC().Format(time.RFC3339), len(lines), counts[Failed], counts[Passed], counts[Incomplete], counts[NotRun])
	if counts[Unreadable] > 0 {
		fmt.Fprintf(&b, ", %d unreadable", counts[Unreadable])
	}
	fmt.Fprintf(&b, "; %d report files below.</p>\n", len(entries))

	b.WriteString("<h2>Verdicts</h2>\n<table class=\"verdicts\"><tr><th>what</th><th>verdict</th><th>key figure</th></tr>\n")
	for _, l := range lines {
		name := html.EscapeString(l.Name)
		if l.Link != "" && l.State != NotRun {
			name = fmt.Sprintf("<a href=\"%s\">%s</a>", html.EscapeString(l.Link), name)
		}
		fmt.Fprintf(&b, "<tr class=\"%s\"><td>%s</td><td class=\"v\">%s</td><td>%s</td></tr>\n",
			strings.ReplaceAll(l.State.String(), " ", ""), name, html.EscapeString(l.Verdict), html.EscapeString(l.Figure))
	}
	b.WriteString("</table>\n")

	b.WriteString("<h2>Report files by producer</h2>\n<p>Each run's files, folded; a simulator verdict other than pass can be what its scenario expects (the comparison above says whether any was unexpected).</p>\n")
	for start := 0; start < len(entries); {
		end := start
		for end < len(entries) && entries[end].Group == entries[start].Group {
			end++
		}
		group := entries[start:end]
		notPass := 0
		for _, e := range group {
			if e.Failed {
				notPass++
			}
		}
		fmt.Fprintf(&b, "<details><summary>%s: %d files", html.EscapeString(group[0].Group), len(group))
		if notPass > 0 {
			fmt.Fprintf(&b, ", %d with a verdict other than pass", notPass)
		}
		b.WriteString("</summary>\n<table><tr><th>report</th><th>verdict</th></tr>\n")
		for _, e := range group {
			cls := ""
			switch {
			case e.Verdict == "":
			case e.Failed:
				cls = ` class="bad"`
			default:
				cls = ` class="ok"`
			}
			fmt.Fprintf(&b, "<tr><td><a href=\"%s\">%s</a></td><td%s>%s</td></tr>\n", html.EscapeString(e.Path), html.EscapeString(e.Path), cls, html.EscapeString(e.Verdict))
		}
		b.WriteString("</table></details>\n")
		start = end
	}
	b.WriteString("</body></html>\n")
	return b.String()
}
