package report

import (
	"fmt"
	"strings"

	"github.com/fenceproof/fenceproof/fencing/judge"
)

// Markdown is report.md.
func Markdown(r *Run) string {
	var b strings.Builder
	m := r.Meta
	fmt.Fprintf(&b, "# fenceproof fencing: %s\n\n", r.Status)
	if r.Reason != "" {
		fmt.Fprintf(&b, "%s\n\n", r.Reason)
	}
	fmt.Fprintf(&b, "Run `%s` (%s) against %s: node `%s` fenced through %s (driver `%s`), peer node `%s`, %s writers in namespace `%s`; %.1f s.\n\n",
		m.Name, m.Mode, m.Cluster, m.Node, via(m), m.Driver, m.PeerNode, m.Storage, m.Namespace, float64(m.EndNs-m.StartNs)/1e9)
	if len(m.CIDRs) > 0 {
		fmt.Fprintf(&b, "Fenced CIDRs (from %s): `%s`\n\n", m.CIDRsFrom, strings.Join(m.CIDRs, "`, `"))
	}
	b.WriteString("![timeline](timeline.svg)\n\n")
	if res := r.Result; res != nil {
		if f := res.First(); f != nil {
			fmt.Fprintf(&b, "**First broken promise:** %s\n\nEvidence: `%s`\n\n", md(f.String()), md(f.Evidence))
		}
		b.WriteString("## Checks\n\n| check | result | what it checks |\n| --- | --- | --- |\n")
		for _, c := range judge.Checks {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", c.ID, checkResult(res, c.ID, r.Input), md(c.Title))
		}
		if len(res.Findings) > 0 {
			b.WriteString("\n## Findings\n\n| severity | check | writer | node | seq | start (writer's clock) | after the ack | detail |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
			for i, f := range res.Findings {
				if i == 200 {
					fmt.Fprintf(&b, "\n%d more findings in result.json.\n", len(res.Findings)-200)
					break
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %s | %s |\n", f.Severity, f.Check, f.Writer, f.Node, f.Seq, fmtTime(f.StartNs), f.AfterAck, md(f.Detail))
			}
		}
		b.WriteString("\n## Writers\n\n| writer | node | before the ack (ok/refused/error) | while fenced | after the unfence | records read (damaged) | last ok before the ack (ms) | first failure after it (ms) | clock bound (ms) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
		for _, w := range res.Figures {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d (%d) | %s | %s | %.3f |\n", w.Writer, w.Node, counts(w.Before), counts(w.During), counts(w.After),
				w.RecordsRead, w.RecordsDamaged, optMs(w.LastOKBeforeAckMs), optMs(w.FirstFailureAfterAckMs), w.BoundMs)
		}
	}
	b.WriteString("\n## Clocks\n\nEach node's clock against fenceproof's, read through the API server (the sample with the shortest round trip): a write stamped t on a node happened within ±bound of t on fenceproof's clock; the bound used is the largest measured, plus any step of the wall clock seen in the writers' logs. A write within the bound of the acknowledgement is reported undecidable, never passed.\n\n| node | when | offset (ms) | ± (ms) | bound (ms) | samples |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, c := range m.Clocks {
		fmt.Fprintf(&b, "| %s | %s | %+.3f | %.3f | %.3f | %d |\n", c.Node, c.When, ms(c.OffsetNs), ms(c.UncertaintyNs), ms(c.BoundNs), c.Samples)
	}
	b.WriteString("\n## Steps\n\n```\n")
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "%8.3f  %-10s %s\n", r.rel(s.AtNs), s.Kind, s.What)
	}
	b.WriteString("```\n")
	if len(r.Leftovers) > 0 {
		b.WriteString("\n## Left behind\n\n")
		for _, l := range r.Leftovers {
			fmt.Fprintf(&b, "- %s\n", md(l))
		}
	}
	b.WriteString("\nEvidence: `evidence/` holds every writer log and read-back as collected and `input.json`; `fenceproof fencing judge <this directory>` decides again from it.\n")
	return b.String()
}

func via(m Meta) string {
	if m.Class != "" {
		return "NetworkFenceClass `" + m.Class + "`"
	}
	return "the driver's name and secret"
}

// checkResult is PASS, or the worst severity and how many findings.
func checkResult(res *judge.Result, id string, in judge.Input) string {
	sev := res.Checks[id]
	if id == "workload-moved" && in.Moved == "" {
		return "—"
	}
	if sev == "" || sev == judge.SevNote {
		return "PASS"
	}
	n := 0
	for _, f := range res.Findings {
		if f.Check == id && f.Severity == sev {
			n++
		}
	}
	return fmt.Sprintf("%s (%d)", strings.ToUpper(string(sev)), n)
}

func counts(m map[string]int) string {
	return fmt.Sprintf("%d/%d/%d", m["ok"], m["refused"], m["error"])
}

func optMs(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f", *v)
}

func md(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "\\|"), "\n", " ") }
