package sim

import (
	"fmt"
	"html"
	"strings"
)

// HTML renders the comparison as a page a person reads: the frontier
// (table, words and plot), the invariants and availability tables, the
// scripted verdicts with a link to each violating run's trace, the first
// violation of each, the random schedules that broke something, and the
// bar charts.
func (c *Comparison) HTML() string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>fenceproof sim compare</title>
<style>
body{font-family:sans-serif;margin:1.5em;max-width:1400px}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}
th{background:#f3f3f3} td.l,th.l{text-align:left} td.w{text-align:left;white-space:normal;max-width:60em;overflow-wrap:anywhere}
td.pass{background:#e8f5e9} td.fail{background:#ffebee} td.unexp{outline:2px solid #d50000}
code{font-size:90%}
</style></head><body>
`)
	fmt.Fprintf(&b, "<h1>fenceproof sim compare</h1>\n<p>%s</p>\n", esc(c.intro()))
	st, pts := c.rows()
	for ti, t := range policyTables {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", esc(t.title))
		if t.intro != "" {
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(strings.ReplaceAll(t.intro, "*", "")))
		}
		b.WriteString("<table><tr>")
		for j, col := range t.cols {
			cls := ""
			if j == 0 {
				cls = " class=l"
			}
			fmt.Fprintf(&b, "<th%s>%s</th>", cls, esc(col.head))
		}
		b.WriteString("</tr>\n")
		for i := range st {
			b.WriteString("<tr>")
			for j, col := range t.cols {
				cls := ""
				if j == 0 || col.head == "dominated by" {
					cls = " class=l"
				}
				fmt.Fprintf(&b, "<td%s>%s</td>", cls, esc(col.cell(st[i], &pts[i])))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
		if ti == 0 {
			fmt.Fprintf(&b, "<p><b>%s</b></p>\n%s", esc(FrontierText(pts)), c.FrontierSVG())
		}
	}
	b.WriteString("<h2>Invariants</h2>\n<table>")
	for n := 1; n < numInvariants; n++ {
		fmt.Fprintf(&b, "<tr><td>inv%d</td><td class=w>%s</td></tr>", n, esc(InvariantDocs[n]))
	}
	b.WriteString("</table>\n<h2>Scripted scenarios</h2>\n<p>Each violating verdict links to the run's trace; a red outline marks a verdict that differs from the scenario file's expectation.</p>\n<table><tr><th class=l>scenario</th>")
	for _, p := range PolicyNames() {
		fmt.Fprintf(&b, "<th class=l>%s</th>", esc(p))
	}
	b.WriteString("</tr>\n")
	for _, sc := range c.Scenarios {
		fmt.Fprintf(&b, "<tr><td class=l>%s</td>", esc(sc))
		for _, p := range PolicyNames() {
			v := c.Verdicts[sc][p]
			cls := "l pass"
			cell := esc(v)
			if v != "pass" {
				cls = "l fail"
				key := sc + "." + p
				cell = fmt.Sprintf(`<a href="sim-compare-traces/%s.txt" title="%s">%s</a>`, esc(key), esc(c.FirstViolation[key]), esc(v))
			}
			if e, ok := c.Expected[sc][p]; ok && e != v {
				cls += " unexp"
				cell += " (expected " + esc(e) + ")"
			}
			fmt.Fprintf(&b, `<td class="%s">%s</td>`, cls, cell)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n<h2>Where each policy breaks</h2>\n<table><tr><th class=l>scenario</th><th class=l>policy</th><th class=l>first violation</th></tr>\n")
	for _, sc := range c.Scenarios {
		for _, p := range PolicyNames() {
			key := sc + "." + p
			if v, ok := c.FirstViolation[key]; ok {
				fmt.Fprintf(&b, `<tr><td class=l>%s</td><td class=l><a href="sim-compare-traces/%s.txt">%s</a></td><td class=w>%s</td></tr>`+"\n", esc(sc), esc(key), esc(p), esc(v))
			}
		}
	}
	b.WriteString("</table>\n<h2>Random schedules that broke an invariant (first 5 per policy)</h2>\n<ul>\n")
	for _, p := range PolicyNames() {
		for _, s := range c.Breaks[p] {
			fmt.Fprintf(&b, "<li>%s: <code>%s</code></li>\n", esc(p), esc(s))
		}
	}
	b.WriteString("</ul>\n<h2>Charts</h2>\n")
	b.WriteString(c.SVG())
	b.WriteString("</body></html>\n")
	return b.String()
}
