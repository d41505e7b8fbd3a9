package sim

import (
	"fmt"
	"html"
	"strings"
)

// Line plots for other packages' reports (sim/calibrate's real and
// simulated curves), drawn with the comparison's axes: stacked panels
// sharing an x axis, even ticks, a legend and labelled vertical marks.

// Series is one line of a panel: points (X[i], Y[i]); Step holds each
// value until the next point; Dash draws it dashed.
type Series struct {
	Name  string
	Color string
	Dash  bool
	Step  bool
	X, Y  []float64
}

// Mark is a labelled vertical line at X.
type Mark struct {
	X     float64
	Label string
}

// Panel is one plot of a PlotsSVG.
type Panel struct {
	YLabel string
	Series []Series
}

// PlotsSVG draws the panels stacked, over one x axis from 0 to the largest
// X, with the marks across all of them.
func PlotsSVG(title, xlabel string, panels []Panel, marks []Mark) string {
	const w, ph, gap, left, top = 760.0, 170.0, 46.0, 64.0, 70.0
	xmax := 0.0
	for _, p := range panels {
		for _, s := range p.Series {
			for _, x := range s.X {
				xmax = max(xmax, x)
			}
		}
	}
	for _, m := range marks {
		xmax = max(xmax, m.X)
	}
	xmax, _ = niceMax(xmax)
	height := top + float64(len(panels))*(ph+gap) + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", w+200, height)
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="14">%s</text>`+"\n", left, html.EscapeString(title))
	for i, p := range panels {
		ymax := 0.0
		for _, s := range p.Series {
			for _, y := range s.Y {
				ymax = max(ymax, y)
			}
		}
		ymax, _ = niceMax(ymax)
		a := axes{x0: left, y0: top + float64(i)*(ph+gap), w: w - left, h: ph, xmax: xmax, ymax: ymax, xfmt: "%.0f", yfmt: "%.0f"}
		if ymax < 5 {
			a.yfmt = "%.1f"
		}
		xl := ""
		if i == len(panels)-1 {
			xl = xlabel
		}
		a.draw(&b, xl, p.YLabel)
		for _, m := range marks {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#bbb" stroke-dasharray="2,3"/>`+"\n", a.x(m.X), a.y0, a.x(m.X), a.y0+a.h)
			if i == 0 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="9" transform="rotate(-30 %.1f %.0f)">%s</text>`+"\n", a.x(m.X)+2, a.y0-3, a.x(m.X)+2, a.y0-3, html.EscapeString(m.Label))
			}
		}
		ly := a.y0 + 4
		for _, s := range p.Series {
			var pts []string
			for k := range s.X {
				if s.Step && k > 0 {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", a.x(s.X[k]), a.y(s.Y[k-1])))
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", a.x(s.X[k]), a.y(s.Y[k])))
			}
			dash := ""
			if s.Dash {
				dash = ` stroke-dasharray="6,3"`
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`+"\n", s.Color, dash, strings.Join(pts, " "))
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/><text x="%.0f" y="%.0f">%s</text>`+"\n",
				w+8, ly+5, w+30, ly+5, s.Color, dash, w+34, ly+9, html.EscapeString(s.Name))
			ly += 15
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}
