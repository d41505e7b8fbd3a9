package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/fencing/judge"
)

// Geometry of timeline.svg.
const (
	svgWidth  = 1100
	svgRight  = 30
	rowHeight = 24
	axisSpace = 34
	markSpace = 16 // per line of step labels
)

// Colours of the outcomes and markers.
var outcomeColour = map[string]string{contract.OutcomeOK: "#2e9d4a", contract.OutcomeRefused: "#d62728", contract.OutcomeError: "#ff9f1c"}

var markColour = map[string]string{
	StepFence: "#1f77b4", StepAck: "#1f3fb4", StepUnfence: "#8e44ad", StepUnfenceOK: "#8e44ad", StepCut: "#222",
	StepNotReady: "#777", StepTaint: "#8c564b", StepMoved: "#2e9d4a", StepRestore: "#222", StepUntaint: "#8c564b",
}

// Timeline is timeline.svg: every writer's attempts over the run (one row
// per writer and node; ok above the middle, refused and failed below),
// the fence window shaded on the fenced node's rows, the steps as
// vertical lines, the findings circled; then a close-up around the
// acknowledgement with its clock bound, where each attempt is a tick.
func Timeline(r *Run) string {
	rows := rowsOf(r)
	// The time axis starts right of the writers' names (about 6.5 px a
	// character).
	left := 120
	for _, rw := range rows {
		left = min(max(left, 12+len(rw.label)*13/2), svgWidth/2)
	}
	var b strings.Builder
	panelH := func(n int) int { return markSpace*3 + n*rowHeight + axisSpace }
	h := panelH(len(rows))*2 + 60
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", svgWidth, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="10" y="16" font-size="13" font-weight="bold">%s</text>`+"\n",
		html.EscapeString(fmt.Sprintf("fenceproof fencing %s: %s (%s)", r.Meta.Name, r.Status, r.Meta.Mode)))
	t0, t1 := span(r)
	panel(&b, r, rows, left, 24, t0, t1, false, "the whole run (s since its start)")
	ack := r.Input.Fence.AckNs
	if ack != 0 {
		z := int64(300e6)
		if bnd, ok := r.Input.Bounds[r.Input.FencedNode]; ok {
			z = max(z, 10*int64(bnd))
		}
		if r.Result != nil {
			if f := r.Result.First(); f != nil && f.StartNs != 0 {
				z = max(z, min(int64(5e9), (abs(f.StartNs-ack)*13)/10))
			}
		}
		panel(&b, r, rows, left, 24+panelH(len(rows))+20, ack-z, ack+z, true, "close-up around the fence's acknowledgement (ms from it)")
	}
	legend(&b, h-14)
	b.WriteString("</svg>\n")
	return b.String()
}

type row struct {
	label string
	log   judge.Log
}

func rowsOf(r *Run) []row {
	var rows []row
	for _, l := range r.Input.Logs {
		label := fmt.Sprintf("%s @ %s", l.Writer, l.Node)
		if l.Node == r.Input.FencedNode {
			label += " (fenced)"
		}
		rows = append(rows, row{label, l})
	}
	slices.SortStableFunc(rows, func(a, b row) int { return strings.Compare(a.label, b.label) })
	return rows
}

// span is the time range the writers wrote in, and the steps the
// timeline marks, with a margin; the whole run without either.
func span(r *Run) (int64, int64) {
	t0, t1 := int64(math.MaxInt64), int64(math.MinInt64)
	for _, l := range r.Input.Logs {
		for _, a := range l.Attempts {
			t0, t1 = min(t0, a.SendNs), max(t1, a.TNs)
		}
	}
	for _, s := range r.Steps {
		if _, marked := markColour[s.Kind]; marked {
			t0, t1 = min(t0, s.AtNs), max(t1, s.AtNs)
		}
	}
	if t1 <= t0 {
		return r.Meta.StartNs, max(r.Meta.EndNs, r.Meta.StartNs+1e9)
	}
	margin := (t1 - t0) / 50
	return t0 - margin, t1 + margin
}

// panel draws one time axis from t0 to t1 at vertical offset top, from
// left to the right margin.
func panel(b *strings.Builder, r *Run, rows []row, left, top int, t0, t1 int64, closeUp bool, title string) {
	pw := float64(svgWidth - left - svgRight)
	x := func(t int64) float64 { return float64(left) + float64(t-t0)/float64(t1-t0)*pw }
	in := func(t int64) bool { return t >= t0 && t <= t1 }
	rowsTop := top + markSpace*3
	bottom := rowsTop + len(rows)*rowHeight
	fmt.Fprintf(b, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", top+10, html.EscapeString(title))
	f := r.Input.Fence
	// The fence window on the fenced node's rows, and the ack's bound.
	if f.AckNs != 0 {
		end := f.UnfenceNs
		if end == 0 {
			end = t1
		}
		for i, rw := range rows {
			if rw.log.Node == r.Input.FencedNode && end > t0 && f.AckNs < t1 {
				a, e := max(f.AckNs, t0), min(end, t1)
				fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#d62728" opacity="0.08"/>`+"\n", x(a), rowsTop+i*rowHeight, x(e)-x(a), rowHeight)
			}
		}
		if bnd, ok := r.Input.Bounds[r.Input.FencedNode]; ok && in(f.AckNs) {
			l, u := max(f.AckNs-int64(bnd), t0), min(f.AckNs+int64(bnd), t1)
			fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#1f3fb4" opacity="0.18"><title>the clock bound around the ack: ±%.3f ms</title></rect>`+"\n",
				x(l), rowsTop, max(x(u)-x(l), 1), bottom-rowsTop, ms(int64(bnd)))
		}
	}
	// Rows.
	for i, rw := range rows {
		y := rowsTop + i*rowHeight
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y+rowHeight/2+4, html.EscapeString(rw.label))
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#ddd"/>`+"\n", left, svgWidth-svgRight, y+rowHeight, y+rowHeight)
		paths := map[string]*strings.Builder{}
		seen := map[[2]int]bool{}
		for _, a := range rw.log.Attempts {
			if !in(a.SendNs) {
				continue
			}
			px := int(math.Round(x(a.SendNs) * 2)) // half-pixel resolution
			lane := 0
			if a.Outcome != contract.OutcomeOK {
				lane = 1
			}
			if !closeUp && seen[[2]int{px, lane + 2*outcomeIndex(a.Outcome)}] {
				continue
			}
			seen[[2]int{px, lane + 2*outcomeIndex(a.Outcome)}] = true
			p := paths[a.Outcome]
			if p == nil {
				p = &strings.Builder{}
				paths[a.Outcome] = p
			}
			y0 := y + 3 + lane*(rowHeight/2-2)
			fmt.Fprintf(p, "M%.1f %dv%d", float64(px)/2, y0, rowHeight/2-3)
		}
		for _, o := range []string{contract.OutcomeOK, contract.OutcomeError, contract.OutcomeRefused} {
			if p := paths[o]; p != nil {
				fmt.Fprintf(b, `<path d="%s" stroke="%s" stroke-width="1"/>`+"\n", p.String(), outcomeColour[o])
			}
		}
	}
	// Findings.
	if r.Result != nil {
		first := r.Result.First()
		for _, fd := range r.Result.Findings {
			if fd.StartNs == 0 || !in(fd.StartNs) || (fd.Severity != judge.SevFail && fd.Severity != judge.SevUndecidable) {
				continue
			}
			i := slices.IndexFunc(rows, func(rw row) bool { return rw.log.Writer == fd.Writer && rw.log.Node == fd.Node })
			if i < 0 {
				continue
			}
			colour := "#000"
			if fd.Severity == judge.SevUndecidable {
				colour = "#ff9f1c"
			}
			cy := rowsTop + i*rowHeight + rowHeight/2
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%d" r="6" fill="none" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`+"\n", x(fd.StartNs), cy, colour, html.EscapeString(fd.String()))
			if closeUp && first != nil && fd.Check == first.Check && fd.Writer == first.Writer && fd.Seq == first.Seq {
				lx, anchor := x(fd.StartNs)+8, "start"
				if lx > svgWidth/2 {
					lx, anchor = x(fd.StartNs)-8, "end"
				}
				fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="%s" font-weight="bold">%s</text>`+"\n", lx, cy-6, anchor,
					html.EscapeString(fmt.Sprintf("seq %d, %s after the ack", fd.Seq, fd.AfterAck)))
			}
		}
	}
	// Steps.
	lane := 0
	for _, s := range r.Steps {
		c, ok := markColour[s.Kind]
		if !ok || !in(s.AtNs) {
			continue
		}
		width, dash := 1.0, ` stroke-dasharray="4 3"`
		if s.Kind == StepAck {
			width, dash = 2, ""
		}
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-width="%.0f"%s><title>%s</title></line>`+"\n",
			x(s.AtNs), x(s.AtNs), top+markSpace*(lane+1), bottom, c, width, dash, html.EscapeString(s.What))
		fmt.Fprintf(b, `<text x="%.1f" y="%d" fill="%s">%s</text>`+"\n", x(s.AtNs)+2, top+markSpace*(lane+1)+10, c, s.Kind)
		lane = (lane + 1) % 3
	}
	// Axis.
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#000"/>`+"\n", left, svgWidth-svgRight, bottom, bottom)
	origin, unit, name := r.Meta.StartNs, 1e9, "s"
	if closeUp {
		origin, unit, name = r.Input.Fence.AckNs, 1e6, "ms"
	}
	lo, hi := float64(t0-origin)/unit, float64(t1-origin)/unit
	step := niceStep((hi - lo) / 10)
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		t := origin + int64(v*unit)
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#000"/><text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n",
			x(t), x(t), bottom, bottom+4, x(t), bottom+16, strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")+name)
	}
}

func outcomeIndex(o string) int {
	switch o {
	case contract.OutcomeOK:
		return 0
	case contract.OutcomeRefused:
		return 1
	}
	return 2
}

// niceStep rounds a raw axis step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func legend(b *strings.Builder, y int) {
	x := 10
	for _, it := range []struct{ colour, what string }{
		{outcomeColour[contract.OutcomeOK], "write acknowledged (upper half)"}, {outcomeColour[contract.OutcomeRefused], "refused"},
		{outcomeColour[contract.OutcomeError], "error"}, {"#000", "○ broken promise"}, {"#ff9f1c", "○ undecidable"},
		{markColour[StepAck], "fence ack (±clock bound)"}, {"#d62728", "fence window (fenced node)"},
	} {
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, y-9, it.colour, x+14, y, html.EscapeString(it.what))
		x += 30 + 6*len(it.what)
	}
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
