package sim

import (
	"fmt"
	"strings"
)

// The comparison's tables, declared once as columns and rendered as
// Markdown, plain text and HTML (compare_html.go). Three narrow tables
// instead of one wide one, so that each fits a 1,400 px page: the
// frontier, the invariants each policy broke, and availability.

// column is one column of a policy table: its header, and its cell for a
// policy's stats and frontier point.
type column struct {
	head string
	cell func(s *PolicyStats, f *FrontierPoint) string
}

type policyTable struct {
	title, intro string
	cols         []column
}

func pct(v float64) string { return fmt.Sprintf("%.1f", 100*v) }

var policyTables = []policyTable{
	{"Safety and availability: the frontier",
		"Per policy, the share of runs that broke an invariant (safety: invariants 1-5, 7, 8; liveness: 6) against the minutes per run with PGs that could not serve I/O and the client writes refused per run. A policy is dominated when another is no worse on all three and better on one.",
		[]column{
			{"policy", func(s *PolicyStats, _ *FrontierPoint) string { return s.Policy }},
			{"runs", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprint(s.Runs) }},
			{"broke an invariant (%)", func(_ *PolicyStats, f *FrontierPoint) string { return pct(f.ViolationRate) }},
			{"safety (%)", func(_ *PolicyStats, f *FrontierPoint) string { return pct(f.SafetyRate) }},
			{"liveness (%)", func(_ *PolicyStats, f *FrontierPoint) string { return pct(f.LivenessRate) }},
			{"unable to serve (min/run)", func(_ *PolicyStats, f *FrontierPoint) string { return fmt.Sprintf("%.1f", f.UnavailMin) }},
			{"writes refused (k/run)", func(_ *PolicyStats, f *FrontierPoint) string { return fmt.Sprintf("%.1f", f.RefusedK) }},
			{"dominated by", func(_ *PolicyStats, f *FrontierPoint) string {
				if len(f.DominatedBy) == 0 {
					return "- (frontier)"
				}
				return strings.Join(f.DominatedBy, ", ")
			}},
		}},
	{"Invariants broken (runs, going on after the first violation)", "", invariantColumns()},
	{"Availability and cost (summed over the runs)",
		"*HEALTH_OK before fence* is the seed design's rule: runs where every fence action came on HEALTH_OK, of the runs that fenced.",
		[]column{
			{"policy", func(s *PolicyStats, _ *FrontierPoint) string { return s.Policy }},
			{"unable to serve (min)", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprintf("%.0f", s.InactiveMin) }},
			{"no quorum (min)", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprintf("%.0f", s.NoQuorumMin) }},
			{"writes refused (k)", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprintf("%.0f", s.WritesRefused/1000) }},
			{"stale writes (k)", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprintf("%.0f", s.StaleWrites/1000) }},
			{"HEALTH_OK before fence", func(s *PolicyStats, _ *FrontierPoint) string {
				return fmt.Sprintf("%d/%d", s.HealthOKKept, s.FencingRuns)
			}},
			{"mean time to recovery (min)", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprintf("%.1f", s.MeanRecoveryMin()) }},
			{"fences", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprint(s.Fences) }},
			{"data moved (GB)", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprintf("%.0f", s.MovedGB) }},
			{"OSD markdowns", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprint(s.Markdowns) }},
		}},
}

func invariantColumns() []column {
	cols := []column{
		{"policy", func(s *PolicyStats, _ *FrontierPoint) string { return s.Policy }},
		{"any", func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprint(s.ViolatingRuns) }},
	}
	for n := 1; n < numInvariants; n++ {
		cols = append(cols, column{fmt.Sprintf("inv%d", n), func(s *PolicyStats, _ *FrontierPoint) string { return fmt.Sprint(s.ByInvariant[n]) }})
	}
	return cols
}

// rows returns the stats and frontier point of each policy, frontier order.
func (c *Comparison) rows() ([]*PolicyStats, []FrontierPoint) {
	pts := c.Frontier()
	st := make([]*PolicyStats, len(pts))
	for i, p := range pts {
		for _, s := range c.Stats {
			if s.Policy == p.Policy {
				st[i] = s
			}
		}
	}
	return st, pts
}

func (c *Comparison) intro() string {
	return fmt.Sprintf("%d scripted scenarios + %d random schedules (seeds %d..%d) per policy. Availability figures come from runs that go on after a violation.",
		len(c.Scenarios), c.RandomRuns, c.Seed, c.Seed+uint64(max(c.RandomRuns, 1))-1)
}

// Markdown renders the comparison as Markdown tables.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	st, pts := c.rows()
	fmt.Fprintf(&b, "# fenceproof sim compare\n\n%s\n\n", c.intro())
	for ti, t := range policyTables {
		fmt.Fprintf(&b, "## %s\n\n", t.title)
		if t.intro != "" {
			fmt.Fprintf(&b, "%s\n\n", t.intro)
		}
		b.WriteString("|")
		for _, col := range t.cols {
			fmt.Fprintf(&b, " %s |", col.head)
		}
		b.WriteString("\n|")
		for range t.cols {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for i := range st {
			b.WriteString("|")
			for _, col := range t.cols {
				fmt.Fprintf(&b, " %s |", col.cell(st[i], &pts[i]))
			}
			b.WriteString("\n")
		}
		if ti == 0 {
			fmt.Fprintf(&b, "\n%s\n\n![frontier](sim-compare-frontier.svg)\n", FrontierText(pts))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Scripted scenarios (verdict; `!` marks a verdict that differs from the scenario's expectation)\n\n")
	b.WriteString(verdictTable(c.Scenarios, func(sc, p string) string {
		v := c.Verdicts[sc][p]
		if e, ok := c.Expected[sc][p]; ok && e != v {
			v += " !"
		}
		return v
	}))
	b.WriteString("\n## Where each policy breaks (scripted scenarios; full traces in sim-compare-traces/)\n\n| scenario | policy | first violation | trace |\n|---|---|---|---|\n")
	for _, sc := range c.Scenarios {
		for _, p := range PolicyNames() {
			key := sc + "." + p
			if v, ok := c.FirstViolation[key]; ok {
				fmt.Fprintf(&b, "| %s | %s | %s | [%s.txt](sim-compare-traces/%s.txt) |\n", sc, p, strings.ReplaceAll(v, "|", "/"), key, key)
			}
		}
	}
	b.WriteString("\n## Random schedules that broke an invariant (first 5 per policy)\n\n")
	for _, p := range PolicyNames() {
		for _, s := range c.Breaks[p] {
			fmt.Fprintf(&b, "- %s %s\n", p, s)
		}
	}
	return b.String()
}

// Text renders the comparison as plain-text tables: the frontier first
// (what `sim compare --quiet` prints), then the invariants, availability
// and the scripted verdicts.
func (c *Comparison) Text() string {
	var b strings.Builder
	st, pts := c.rows()
	for ti, t := range policyTables {
		cells := make([][]string, len(st)+1)
		for _, col := range t.cols {
			cells[0] = append(cells[0], col.head)
		}
		for i := range st {
			for _, col := range t.cols {
				cells[i+1] = append(cells[i+1], col.cell(st[i], &pts[i]))
			}
		}
		widths := make([]int, len(t.cols))
		for _, row := range cells {
			for j, v := range row {
				widths[j] = max(widths[j], len(v))
			}
		}
		for _, row := range cells {
			for j, v := range row {
				if j == 0 {
					fmt.Fprintf(&b, "%-*s", widths[j], v)
				} else {
					fmt.Fprintf(&b, "  %*s", widths[j], v)
				}
			}
			b.WriteString("\n")
		}
		if ti == 0 {
			fmt.Fprintf(&b, "%s\n", FrontierText(pts))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%-36s", "scenario")
	for _, p := range PolicyNames() {
		fmt.Fprintf(&b, " %-12s", p)
	}
	b.WriteString("\n")
	for _, sc := range c.Scenarios {
		fmt.Fprintf(&b, "%-36s", sc)
		for _, p := range PolicyNames() {
			v := c.Verdicts[sc][p]
			if e, ok := c.Expected[sc][p]; ok && e != v {
				v += "!"
			}
			fmt.Fprintf(&b, " %-12s", v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// verdictTable is a Markdown table of a verdict per scenario and policy.
func verdictTable(scenarios []string, verdict func(scenario, policy string) string) string {
	var b strings.Builder
	b.WriteString("| scenario |")
	for _, p := range PolicyNames() {
		fmt.Fprintf(&b, " %s |", p)
	}
	b.WriteString("\n|---|")
	for range PolicyNames() {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, sc := range scenarios {
		fmt.Fprintf(&b, "| %s |", sc)
		for _, p := range PolicyNames() {
			fmt.Fprintf(&b, " %s |", verdict(sc, p))
		}
		b.WriteString("\n")
	}
	return b.String()
}
