package sim

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Small SVG building blocks for the comparison's plots: axes with even
// ticks and a legend, so that every plot can be read on its own.

// policyColors gives each policy a color, in PolicyNames order.
var policyColors = []string{"#e53935", "#fb8c00", "#8e24aa", "#6d4c41", "#00897b", "#757575", "#1e88e5"}

func policyColor(name string) string {
	for i, n := range PolicyNames() {
		if n == name {
			return policyColors[i%len(policyColors)]
		}
	}
	return "#000"
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten and returns it
// with a tick step giving 4 or 5 intervals.
func niceMax(v float64) (top, step float64) {
	if v <= 0 {
		return 1, 0.2
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*0.9999 {
			if m == 2 {
				return m * p, m * p / 4
			}
			return m * p, m * p / 5
		}
	}
	return 10 * p, 2 * p
}

// axes draws a frame at (x0, y0) of size w x h with y ticks up to ymax
// and x ticks up to xmax (xmax 0: no x ticks), and the two labels.
type axes struct {
	x0, y0, w, h float64
	xmax, ymax   float64
	xfmt, yfmt   string
}

func (a axes) x(v float64) float64 { return a.x0 + a.w*v/a.xmax }
func (a axes) y(v float64) float64 { return a.y0 + a.h*(1-v/a.ymax) }

func (a axes) draw(b *strings.Builder, xlabel, ylabel string) {
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", a.x0, a.y0, a.w, a.h)
	_, ys := niceMax(a.ymax)
	for v := 0.0; v <= a.ymax+ys/2; v += ys {
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">`+a.yfmt+`</text>`+"\n",
			a.x0, a.y(v), a.x0+a.w, a.y(v), a.x0-4, a.y(v)+4, v)
	}
	if a.xmax > 0 {
		_, xs := niceMax(a.xmax)
		for v := 0.0; v <= a.xmax+xs/2; v += xs {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#eee"/><text x="%.1f" y="%.0f" text-anchor="middle">`+a.xfmt+`</text>`+"\n",
				a.x(v), a.y0, a.x(v), a.y0+a.h, a.x(v), a.y0+a.h+14, v)
		}
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`+"\n", a.x0+a.w/2, a.y0+a.h+30, html.EscapeString(xlabel))
	}
	fmt.Fprintf(b, `<text transform="translate(%.0f,%.0f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", a.x0-42, a.y0+a.h/2, html.EscapeString(ylabel))
}

// legend draws one swatch per policy in a row starting at (x, y).
func legend(b *strings.Builder, x, y float64, names []string) {
	for _, n := range names {
		fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="11" height="11" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n", x, y, policyColor(n), x+15, y+10, html.EscapeString(n))
		x += 30 + 7.5*float64(len(n))
	}
}
