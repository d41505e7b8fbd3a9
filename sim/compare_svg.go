package sim

import (
	"fmt"
	"html"
	"strings"
)

// FrontierSVG plots the frontier: violation rate against unavailable
// minutes per run, and against writes refused per run, one colored point
// per policy (legend), the frontier's points outlined and joined.
func (c *Comparison) FrontierSVG() string {
	pts := c.Frontier()
	var b strings.Builder
	const w, h = 1000.0, 400.0
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="14">Safety against availability, per policy (%d runs each; lower left is better; outlined and joined: each panel's frontier)</text>`+"\n", c.Stats[0].Runs)
	ymax := 0.0
	for _, p := range pts {
		ymax = max(ymax, p.ViolationRate*100)
	}
	ytop, _ := niceMax(ymax)
	panel := func(x0 float64, xlabel string, xv func(*FrontierPoint) float64) {
		xmax := 0.0
		for i := range pts {
			xmax = max(xmax, xv(&pts[i]))
		}
		xtop, _ := niceMax(xmax)
		a := axes{x0: x0, y0: 50, w: 380, h: 260, xmax: xtop, ymax: ytop, xfmt: "%g", yfmt: "%g"}
		a.draw(&b, xlabel, "runs that broke an invariant (%)")
		// the 2-D frontier of this panel: not dominated in (x, rate)
		var front []*FrontierPoint
		for i := range pts {
			p, dom := &pts[i], false
			for j := range pts {
				q := &pts[j]
				if i != j && xv(q) <= xv(p) && q.ViolationRate <= p.ViolationRate && (xv(q) < xv(p) || q.ViolationRate < p.ViolationRate) {
					dom = true
				}
			}
			if !dom {
				front = append(front, p)
			}
		}
		sortByX(front, xv)
		var line []string
		for _, p := range front {
			line = append(line, fmt.Sprintf("%.1f,%.1f", a.x(xv(p)), a.y(p.ViolationRate*100)))
		}
		if len(line) > 1 {
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#333" stroke-dasharray="5 3"/>`+"\n", strings.Join(line, " "))
		}
		// labels beside the points, nudged apart where points crowd
		type lbl struct {
			x, y float64
			name string
		}
		var ls []lbl
		for i := range pts {
			ls = append(ls, lbl{a.x(xv(&pts[i])) + 10, a.y(pts[i].ViolationRate*100) + 4, pts[i].Policy})
		}
		for i := 1; i < len(ls); i++ {
			for j := i; j > 0 && ls[j].y < ls[j-1].y; j-- {
				ls[j], ls[j-1] = ls[j-1], ls[j]
			}
		}
		for i := 1; i < len(ls); i++ {
			if d := ls[i].y - ls[i-1].y; d < 13 && abs(ls[i].x-ls[i-1].x) < 80 {
				ls[i].y = ls[i-1].y + 13
			}
		}
		for _, l := range ls {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11">%s</text>`+"\n", l.x, l.y, html.EscapeString(l.name))
		}
		for i := range pts {
			p := &pts[i]
			stroke := ""
			for _, f := range front {
				if f == p {
					stroke = ` stroke="#000" stroke-width="2"`
				}
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="7" fill="%s"%s><title>%s: %.1f %% of runs broke an invariant, %.1f</title></circle>`+"\n",
				a.x(xv(p)), a.y(p.ViolationRate*100), policyColor(p.Policy), stroke, html.EscapeString(p.Policy), p.ViolationRate*100, xv(p))
		}
	}
	panel(70, "minutes per run with PGs that cannot serve", func(p *FrontierPoint) float64 { return p.UnavailMin })
	panel(570, "client writes refused per run (thousands)", func(p *FrontierPoint) float64 { return p.RefusedK })
	var names []string
	for _, p := range pts {
		names = append(names, p.Policy)
	}
	legend(&b, 70, 368, names)
	b.WriteString("</svg>\n")
	return b.String()
}

func abs(v float64) float64 { return max(v, -v) }

func sortByX(ps []*FrontierPoint, xv func(*FrontierPoint) float64) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && xv(ps[j]) < xv(ps[j-1]); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// SVG renders six bar charts - violating runs, unavailable minutes, writes
// refused, stale writes, time to recovery and fences per policy - each
// with a y axis, the bars colored by policy and one legend.
func (c *Comparison) SVG() string {
	type metric struct {
		title string
		val   func(*PolicyStats) float64
	}
	ms := []metric{
		{"runs that broke an invariant", func(s *PolicyStats) float64 { return float64(s.ViolatingRuns) }},
		{"PGs unable to serve (min, all runs)", func(s *PolicyStats) float64 { return s.InactiveMin }},
		{"writes refused (millions)", func(s *PolicyStats) float64 { return s.WritesRefused / 1e6 }},
		{"stale writes accepted (millions)", func(s *PolicyStats) float64 { return s.StaleWrites / 1e6 }},
		{"mean time to recovery (min)", func(s *PolicyStats) float64 { return s.MeanRecoveryMin() }},
		{"fences", func(s *PolicyStats) float64 { return float64(s.Fences) }},
	}
	const pw, ph, cols = 330.0, 230.0, 3
	rows := (len(ms) + cols - 1) / cols
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", pw*cols+20, ph*float64(rows)+50)
	for mi, m := range ms {
		x0, y0 := 70+pw*float64(mi%cols), 30+ph*float64(mi/cols)
		top := 0.0
		for _, s := range c.Stats {
			top = max(top, m.val(s))
		}
		ytop, _ := niceMax(top)
		a := axes{x0: x0, y0: y0, w: pw - 90, h: ph - 70, ymax: ytop, yfmt: "%g"}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="13">%s</text>`+"\n", x0, y0-8, html.EscapeString(m.title))
		a.draw(&b, "", "")
		bw := a.w / float64(len(c.Stats))
		for i, s := range c.Stats {
			v := m.val(s)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %.1f</title></rect>`+"\n",
				x0+float64(i)*bw+2, a.y(v), bw-4, a.y0+a.h-a.y(v), policyColor(s.Policy), html.EscapeString(s.Policy), v)
		}
	}
	var names []string
	for _, s := range c.Stats {
		names = append(names, s.Policy)
	}
	legend(&b, 70, ph*float64(rows)+22, names)
	b.WriteString("</svg>\n")
	return b.String()
}
