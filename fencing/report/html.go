package report

import (
	"bytes"
	"html/template"
	"strconv"
	"strings"

	"github.com/fenceproof/fenceproof/fencing/judge"
)

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"rel":    func(r *Run, t int64) string { return strings.TrimSpace(template.HTMLEscapeString(fmtFloat(r.rel(t)))) },
	"time":   fmtTime,
	"ms":     func(ns int64) string { return fmtFloat(ms(ns)) },
	"result": checkResult,
	"counts": counts,
	"opt":    optMs,
	"upper":  strings.ToUpper,
	"sev":    func(s judge.Severity) string { return string(s) },
}).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>fenceproof fencing {{.R.Meta.Name}}: {{.R.Status}}</title>
<style>body{font-family:sans-serif;margin:1.5em;max-width:1200px} table{border-collapse:collapse;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left;vertical-align:top} .fail{color:#b00;font-weight:bold}
.undecidable,.incomplete{color:#b60;font-weight:bold} .pass{color:#070} code,pre{font-size:12px}</style></head><body>
<h1>fenceproof fencing: <span class="{{.Class}}">{{.R.Status}}</span></h1>
{{if .R.Reason}}<p>{{.R.Reason}}</p>{{end}}
<p>Run <code>{{.R.Meta.Name}}</code> ({{.R.Meta.Mode}}) against {{.R.Meta.Cluster}}: node <code>{{.R.Meta.Node}}</code> fenced
({{if .R.Meta.Class}}NetworkFenceClass <code>{{.R.Meta.Class}}</code>, {{end}}driver <code>{{.R.Meta.Driver}}</code>), peer node <code>{{.R.Meta.PeerNode}}</code>,
{{.R.Meta.Storage}} writers in namespace <code>{{.R.Meta.Namespace}}</code>. Fenced CIDRs (from {{.R.Meta.CIDRsFrom}}): <code>{{range .R.Meta.CIDRs}}{{.}} {{end}}</code></p>
{{with .First}}<p class="fail">First broken promise: {{.String}}</p><p>Evidence: <code>{{.Evidence}}</code></p>{{end}}
{{.SVG}}
{{with .R.Result}}
<h2>Checks</h2><table><tr><th>check</th><th>result</th><th>what it checks</th></tr>
{{range $.Checks}}<tr><td>{{.ID}}</td><td>{{result $.R.Result .ID $.R.Input}}</td><td>{{.Title}}</td></tr>{{end}}</table>
{{if .Findings}}<h2>Findings</h2><table><tr><th>severity</th><th>check</th><th>writer</th><th>node</th><th>seq</th><th>start</th><th>after the ack</th><th>detail</th><th>evidence</th></tr>
{{range $i, $f := .Findings}}{{if lt $i 200}}<tr><td class="{{sev $f.Severity}}">{{sev $f.Severity}}</td><td>{{$f.Check}}</td><td>{{$f.Writer}}</td><td>{{$f.Node}}</td><td>{{$f.Seq}}</td><td>{{time $f.StartNs}}</td><td>{{$f.AfterAck}}</td><td>{{$f.Detail}}</td><td><code>{{$f.Evidence}}</code></td></tr>{{end}}{{end}}</table>{{end}}
<h2>Writers</h2><table><tr><th>writer</th><th>node</th><th>before the ack ok/refused/error</th><th>while fenced</th><th>after the unfence</th><th>records read (damaged)</th><th>last ok before the ack (ms)</th><th>first failure after it (ms)</th><th>clock bound (ms)</th></tr>
{{range .Figures}}<tr><td>{{.Writer}}</td><td>{{.Node}}</td><td>{{counts .Before}}</td><td>{{counts .During}}</td><td>{{counts .After}}</td><td>{{.RecordsRead}} ({{.RecordsDamaged}})</td><td>{{opt .LastOKBeforeAckMs}}</td><td>{{opt .FirstFailureAfterAckMs}}</td><td>{{.BoundMs}}</td></tr>{{end}}</table>
{{end}}
<h2>Clocks</h2><p>Each node's clock against fenceproof's, read through the API server; a write within the bound of the acknowledgement is undecidable, never passed.</p>
<table><tr><th>node</th><th>when</th><th>offset (ms)</th><th>± (ms)</th><th>bound (ms)</th><th>samples</th></tr>
{{range .R.Meta.Clocks}}<tr><td>{{.Node}}</td><td>{{.When}}</td><td>{{ms .OffsetNs}}</td><td>{{ms .UncertaintyNs}}</td><td>{{ms .BoundNs}}</td><td>{{.Samples}}</td></tr>{{end}}</table>
<h2>Steps</h2><pre>{{range .R.Steps}}{{rel $.R .AtNs}}  {{.Kind}}  {{.What}}
{{end}}</pre>
{{if .R.Leftovers}}<h2 class="fail">Left behind</h2><ul>{{range .R.Leftovers}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p>Evidence: <code>evidence/</code> (writer logs, read-backs, input.json); <code>fenceproof fencing judge &lt;this directory&gt;</code> decides again from it.</p>
</body></html>
`))

// HTML is report.html, with the timeline inline.
func HTML(r *Run, svg string) ([]byte, error) {
	var first *judge.Finding
	if r.Result != nil {
		first = r.Result.First()
	}
	class := map[string]string{"PASS": "pass", "FAIL": "fail"}[r.Status]
	if class == "" {
		class = "incomplete"
	}
	var b bytes.Buffer
	err := page.Execute(&b, map[string]any{"R": r, "First": first, "SVG": template.HTML(svg), "Checks": judge.Checks, "Class": class})
	return b.Bytes(), err
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
