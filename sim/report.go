package sim

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Entry is one line of a run's timeline.
type Entry struct {
	// At is the virtual time.
	At Time
	// Cat is the category (fault, node, ceph, health, FENCE, ...).
	Cat string
	// Text is the message.
	Text string
}

type stateSample struct {
	at    Time
	state string
}

type floatSample struct {
	at Time
	v  float64
}

type fenceMark struct {
	at   Time
	m    int
	kind string
}

// Recorder keeps the timeline and the plot series of a recorded run.
type Recorder struct {
	// Entries is the timeline, in order.
	Entries []Entry
	// Samples are the cluster's states over the run (samples.go).
	Samples []Sample
	names   []string
	nodes   [][]stateSample
	health  []stateSample
	avail   []floatSample
	fences  []fenceMark
}

func (r *Recorder) start(s *Sim) {
	r.nodes = make([][]stateSample, len(s.fleet.m))
	for i := range s.fleet.m {
		r.names = append(r.names, baseName(s.fleet.m[i].Name))
		r.nodes[i] = []stateSample{{0, "Ready"}}
	}
	r.health = []stateSample{{0, "HEALTH_OK"}}
	r.avail = []floatSample{{0, 1}}
}

// nodeState records machine i's state st for the plot.
func (r *Recorder) nodeState(at Time, i int, st string) {
	ns := r.nodes[i]
	if ns[len(ns)-1].state != st {
		r.nodes[i] = append(ns, stateSample{at, st})
	}
}

func (r *Recorder) fence(at Time, i int, kind string) {
	r.fences = append(r.fences, fenceMark{at, i, kind})
}

// Result is the outcome of a run.
type Result struct {
	// Name is the scenario's name.
	Name string
	// Policy is the policy's name.
	Policy string
	// Seed is the RNG seed.
	Seed uint64
	// Violations are the broken invariants of the step that stopped the run.
	Violations []Violation
	// End is the virtual time the run stopped.
	End Time
	// Events is the number of events processed.
	Events uint64
	// Health is `ceph status` at the end.
	Health string
	// Blockers name what keeps Ceph from HEALTH_OK at the end.
	Blockers []string
	// Metrics are the run's figures of merit.
	Metrics Metrics
	// Recovery is the time from the first fault to the final HEALTH_OK (-1: never).
	Recovery Time
	// Rec is the recorded timeline and plot series (nil unless recorded).
	Rec     *Recorder
	params  Params
	cluster Cluster
	faults  []Fault
}

func (s *Sim) result() *Result {
	mt := s.watch.metrics
	mt.finish(&s.watch)
	r := &Result{Name: s.cfg.Name, Policy: s.pol.Name, Seed: s.cfg.Seed, Violations: s.watch.viols, End: s.now,
		Events: s.Events, Health: s.ceph.healthText(), Blockers: s.watch.blockers(), Metrics: mt, Rec: s.rec,
		cluster: s.cfg.Cluster, params: s.P, faults: s.cfg.Faults, Recovery: -1}
	if mt.RecoveredAt >= 0 && mt.FirstFault >= 0 {
		r.Recovery = mt.RecoveredAt - mt.FirstFault
		if r.Recovery < 0 {
			r.Recovery = 0
		}
	}
	return r
}

func (r *Result) cfgParams() Params { return r.params }

// Invariants returns the numbers of the violated invariants, sorted, unique.
func (r *Result) Invariants() []int {
	var n []int
	for _, v := range r.Violations {
		n = append(n, v.Inv)
	}
	return n
}

// Verdict is "pass" or the violated invariants ("inv1,inv4").
func (r *Result) Verdict() string { return verdictString(r.Invariants()) }

// Text renders the timeline and verdict (the golden-file format).
func (r *Result) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# scenario %s, policy %s, seed %d\n", r.Name, r.Policy, r.Seed)
	if r.Rec != nil {
		for _, e := range r.Rec.Entries {
			fmt.Fprintf(&b, "%s  %-9s %s\n", e.At, e.Cat, e.Text)
		}
	}
	b.WriteString(r.Summary())
	return b.String()
}

// Summary renders the verdict, violations, end state and metrics.
func (r *Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# verdict: %s\n", r.Verdict())
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "# violation: %s\n", v)
	}
	rec := "never"
	if r.Recovery >= 0 {
		rec = r.Recovery.Dur()
	}
	fmt.Fprintf(&b, "# end %s: %s; fences %d; data unavailable %.1f min; recovery %s\n",
		r.End, r.Health, r.Metrics.Fences, float64(r.Metrics.Unavailable)/float64(Minute), rec)
	mt := &r.Metrics
	rule := "kept"
	if mt.FencesNotOK > 0 {
		rule = fmt.Sprintf("broken by %d of %d fence actions", mt.FencesNotOK, mt.FenceActions)
	}
	fmt.Fprintf(&b, "# availability: inactive PGs %.1f min, no mon quorum %.1f min, writes refused %.0f, stale writes accepted %.0f; HEALTH_OK before every fence: %s\n",
		float64(mt.InactivePG)/float64(Minute), float64(mt.NoQuorum)/float64(Minute), mt.WritesRefused, mt.StaleWrites, rule)
	if mt.MovedMB > 0 || mt.Markdowns > 0 {
		fmt.Fprintf(&b, "# ceph: recovery and backfill moved %.0f GB, of which %.0f GB backfilled %d PGs back onto returned OSDs; %d OSD markdowns, %d \"wrongly marked me down\", %d daemons stopped by osd_max_markdown_count\n",
			mt.MovedMB/1024, mt.BackfillMB/1024, mt.MappedBack, mt.Markdowns, mt.WronglyDown, mt.SelfStops)
	}
	for _, bl := range r.Blockers {
		fmt.Fprintf(&b, "# blocker: %s\n", bl)
	}
	return b.String()
}

var stateColors = map[string]string{
	"Ready": "#4caf50", "NotReady": "#ff9800", "CutOff": "#9c27b0", "Deleting": "#f44336",
	"Rebooting": "#e91e63", "Provisioning": "#9e9e9e", "Gone": "#000000",
	"HEALTH_OK": "#4caf50", "HEALTH_WARN": "#ffc107", "NO_ANSWER": "#212121",
}

// SVG plots node states, Ceph health, PG availability and fence events.
func (r *Result) SVG() string {
	const w, left, rowH = 1000.0, 90.0, 18.0
	rc := r.Rec
	if rc == nil {
		return ""
	}
	t0, t1 := r.window()
	span := float64(t1 - t0)
	clip := func(t Time) Time { return min(max(t, t0), t1) }
	x := func(t Time) float64 { return left + (w-left-10)*float64(clip(t)-t0)/span }
	nrows := len(rc.nodes) + 1
	chartTop := 30 + float64(nrows)*rowH + 20
	chartH := 90.0
	h := chartTop + chartH + 80
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", w, h)
	zoom := ""
	if t0 > 0 || t1 < r.End {
		zoom = fmt.Sprintf(" — showing %s..%s of %s", shortTime(t0), shortTime(t1), shortTime(r.End))
	}
	fmt.Fprintf(&b, `<text x="4" y="16" font-size="13">%s — policy %s — seed %d — verdict %s%s</text>`+"\n", html.EscapeString(r.Name), r.Policy, r.Seed, r.Verdict(), zoom)
	// even time ticks with grid lines
	step := tickStep(t1 - t0)
	for t := (t0 + step - 1) / step * step; t <= t1; t += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="26" x2="%.1f" y2="%.0f" stroke="#eee"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n",
			x(t), x(t), chartTop+chartH, x(t), chartTop+chartH+16, shortTime(t))
	}
	bar := func(row int, label string, ss []stateSample) {
		y := 30 + float64(row)*rowH
		fmt.Fprintf(&b, `<text x="4" y="%.0f">%s</text>`+"\n", y+12, html.EscapeString(label))
		for i, smp := range ss {
			end := r.End
			if i+1 < len(ss) {
				end = ss[i+1].at
			}
			if end < t0 || smp.at > t1 {
				continue
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s"><title>%s %s from %s</title></rect>`+"\n",
				x(smp.at), y, math.Max(x(end)-x(smp.at), 0.5), rowH-3, stateColors[smp.state], html.EscapeString(label), smp.state, smp.at)
		}
	}
	for i, ns := range rc.nodes {
		bar(i, rc.names[i], ns)
	}
	bar(len(rc.nodes), "ceph health", rc.health)
	for _, f := range rc.fences {
		y := 30 + float64(f.m)*rowH
		fmt.Fprintf(&b, `<path d="M%.1f %.0f l-5 -8 h10 z" fill="#b71c1c"><title>fence %s %s at %s</title></path>`+"\n", x(f.at), y+2, rc.names[f.m], f.kind, f.at)
	}
	// PGs active, with a y axis
	fmt.Fprintf(&b, `<text x="4" y="%.0f">PGs active</text>`+"\n", chartTop+chartH/2)
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#ccc"/>`+"\n", left, chartTop, w-left-10, chartH)
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		y := chartTop + chartH*(1-f)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n",
			left-4, y, w-10, y, left-6, y+4, f*100)
	}
	var pts []string
	prev := 1.0
	for _, a := range rc.avail {
		if a.at > t1 {
			break
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(a.at), chartTop+chartH*(1-prev)), fmt.Sprintf("%.1f,%.1f", x(a.at), chartTop+chartH*(1-a.v)))
		prev = a.v
	}
	pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(t1), chartTop+chartH*(1-prev)))
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#1565c0" stroke-width="1.5" points="%s"/>`+"\n", strings.Join(pts, " "))
	for _, v := range r.Violations {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="24" x2="%.1f" y2="%.0f" stroke="#d50000" stroke-dasharray="4 3"><title>%s</title></line>`+"\n",
			x(v.At), x(v.At), chartTop+chartH, html.EscapeString(v.String()))
	}
	// legend: states, then the marks
	lx, ly := left, h-40
	for _, k := range []string{"Ready", "NotReady", "CutOff", "Deleting", "Rebooting", "Provisioning", "HEALTH_WARN", "NO_ANSWER"} {
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="10" height="10" fill="%s"/><text x="%.0f" y="%.0f">%s</text>`+"\n", lx, ly, stateColors[k], lx+13, ly+9, k)
		lx += 13 + float64(len(k))*6.5 + 12
	}
	lx, ly = left, h-20
	fmt.Fprintf(&b, `<path d="M%.0f %.0f l-5 -8 h10 z" fill="#b71c1c"/><text x="%.0f" y="%.0f">fence (remediation, cut-off or taint)</text>`+"\n", lx+5, ly+10, lx+14, ly+9)
	lx += 230
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#d50000" stroke-dasharray="4 3"/><text x="%.0f" y="%.0f">invariant violation</text>`+"\n", lx, ly, lx, ly+11, lx+6, ly+9)
	lx += 130
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#1565c0" stroke-width="1.5"/><text x="%.0f" y="%.0f">PGs active</text>`+"\n", lx, ly+5, lx+16, ly+5, lx+20, ly+9)
	b.WriteString("</svg>\n")
	return b.String()
}

// window is the part of the run the plot shows: from a little before the
// first timeline entry to a little after the last, so that a long run
// whose events are bunched is not a thin sliver.
func (r *Result) window() (Time, Time) {
	end := max(r.End, 1)
	es := r.Rec.Entries
	if len(es) == 0 {
		return 0, end
	}
	first, last := es[0].At, es[len(es)-1].At
	margin := max((last-first)/10, 5*Minute)
	t0, t1 := max(first-margin, 0), min(last+margin, end)
	if t1-t0 > end*8/10 {
		return 0, end
	}
	return t0, t1
}

// tickStep picks an even tick interval giving at most 10 ticks over span.
func tickStep(span Time) Time {
	for _, s := range []Time{Minute, 2 * Minute, 5 * Minute, 10 * Minute, 15 * Minute, 30 * Minute, Hour, 2 * Hour, 3 * Hour, 6 * Hour, 12 * Hour, Day, 2 * Day, 7 * Day} {
		if span/s <= 10 {
			return s
		}
	}
	return span / 10
}

func shortTime(t Time) string {
	if t >= Day {
		return fmt.Sprintf("%dd%02d:%02d", t/Day, (t%Day)/Hour, (t%Hour)/Minute)
	}
	return fmt.Sprintf("%d:%02d", t/Hour, (t%Hour)/Minute)
}

// HTML wraps the plot and the timeline in one page.
func (r *Result) HTML() string {
	return "<!doctype html><meta charset=utf-8><title>" + html.EscapeString(r.Name+" "+r.Policy) + "</title>\n" +
		r.SVG() + "<pre>" + html.EscapeString(r.Text()) + "</pre>\n"
}
