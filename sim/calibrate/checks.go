package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Check is one comparison of an experiment: a value read the same way
// from the real and the simulated timelines, and how far the simulated one
// may be from what the real runs showed - below their least by Lo, above
// their greatest by Hi, each the larger of an absolute and a relative (to
// that real value) bound - with the reason. An order check (Order) instead
// requires an order of events some real run showed.
type Check struct {
	Name  string
	Value Value
	// Lo and Hi bound the median of the simulated values (checks.go, run):
	// min(real) - Lo.of(min(real)) <= sim <= max(real) + Hi.of(max(real)).
	Lo, Hi Tol
	// Order lists events (what, osd) both runs must show in this order.
	Order []EventRef
	Why   string
}

// Tol is a tolerance: Abs, or Rel of the real value's magnitude when larger.
type Tol struct{ Abs, Rel float64 }

func (t Tol) of(real float64) float64 { return max(t.Abs, t.Rel*math.Abs(real)) }

// within is a symmetric tolerance.
func within(abs, rel float64) (Tol, Tol) { return Tol{abs, rel}, Tol{abs, rel} }

// EventRef names an event of an OSD (-1: any), after the n-th action
// After (empty: t0).
type EventRef struct {
	What  string
	OSD   int
	After string
	N     int
}

func (r EventRef) String() string {
	s := r.What
	if r.OSD >= 0 {
		s = fmt.Sprintf("osd.%d %s", r.OSD, r.What)
	}
	if r.After != "" {
		s += fmt.Sprintf(" after %s", actionName(r.After, r.N))
	}
	return s
}

func actionName(do string, n int) string {
	if n == 0 {
		return do
	}
	return fmt.Sprintf("%s #%d", do, n+1)
}

// Value reads a number from a timeline (ok false: the run does not show it).
type Value struct {
	Desc string
	Unit string
	Of   func(t *Timeline) (float64, bool)
}

// ev is the time of an event.
func ev(what string, osd int, after string, n int) Value {
	r := EventRef{what, osd, after, n}
	return Value{Desc: r.String(), Unit: "s", Of: func(t *Timeline) (float64, bool) { return t.event(r) }}
}

func (t *Timeline) event(r EventRef) (float64, bool) {
	from := 0.0
	if r.After != "" {
		a, ok := t.action(r.After, r.N)
		if !ok {
			return 0, false
		}
		from = a
	}
	return t.first(r.What, r.OSD, from)
}

// since is the time from the n-th action do to an event after it.
func since(do string, n int, what string, osd int) Value {
	r := EventRef{what, osd, do, n}
	return Value{Desc: fmt.Sprintf("%s to %s", actionName(do, n), r), Unit: "s", Of: func(t *Timeline) (float64, bool) {
		a, ok := t.action(do, n)
		if !ok {
			return 0, false
		}
		e, ok := t.event(r)
		return e - a, ok
	}}
}

// between is the time between two events.
func between(a, b EventRef) Value {
	return Value{Desc: fmt.Sprintf("%s to %s", a, b), Unit: "s", Of: func(t *Timeline) (float64, bool) {
		x, ok1 := t.event(a)
		y, ok2 := t.event(b)
		return y - x, ok1 && ok2
	}}
}

// returned is the time from the n-th action do's command return to an event.
func returned(do string, n int, what string) Value {
	return Value{Desc: fmt.Sprintf("%s's return to %s", actionName(do, n), what), Unit: "s", Of: func(t *Timeline) (float64, bool) {
		var a *Action
		k := n
		for i := range t.Actions {
			if t.Actions[i].Do == do {
				if k == 0 {
					a = &t.Actions[i]
					break
				}
				k--
			}
		}
		if a == nil {
			return 0, false
		}
		// the event may come before the command's answer (the OSDs act on
		// the mon's commit): look from a second before the action
		e, ok := t.first(what, -1, a.At-1)
		return e - max(a.At, a.Returned), ok
	}}
}

// count counts events what.
func count(what string) Value {
	return Value{Desc: "events " + what, Unit: "", Of: func(t *Timeline) (float64, bool) {
		n := 0
		for _, e := range t.Events {
			if e.What == what {
				n++
			}
		}
		return float64(n), true
	}}
}

// metric is a curve read from the samples.
type metric struct {
	name string
	f    func(Sample) float64
}

var (
	inactivePGs = metric{"PGs inactive", func(s Sample) float64 { return float64(s.Inactive) }}
	notCleanPGs = metric{"PGs not active+clean", func(s Sample) float64 { return float64(s.Active + s.Inactive) }}
	recovering  = metric{"PGs recovering or backfilling", func(s Sample) float64 { return float64(s.Recovering) }}
	movedMB     = metric{"MB recovered and backfilled", func(s Sample) float64 { return s.MovedMB }}
)

// area is the integral of a curve from the n-th action from to the end.
func area(m metric, from string, n int) Value {
	return Value{Desc: fmt.Sprintf("%s, integral from %s", m.name, actionName(from, n)), Unit: "PG-s", Of: func(t *Timeline) (float64, bool) {
		a, ok := t.action(from, n)
		if !ok {
			return 0, false
		}
		return t.integral(m.f, a, t.end()), true
	}}
}

// areaBetween is the integral of a curve between two actions.
func areaBetween(m metric, from string, n int, to string, k int) Value {
	return Value{Desc: fmt.Sprintf("%s, integral from %s to %s", m.name, actionName(from, n), actionName(to, k)), Unit: "PG-s", Of: func(t *Timeline) (float64, bool) {
		a, ok1 := t.action(from, n)
		b, ok2 := t.action(to, k)
		return t.integral(m.f, a, b), ok1 && ok2
	}}
}

// moved is the data moved from the n-th action from to the k-th action
// to (empty: the end).
func moved(from string, n int, to string, k int) Value {
	d := fmt.Sprintf("MB moved from %s", actionName(from, n))
	if to != "" {
		d += " to " + actionName(to, k)
	}
	return Value{Desc: d, Unit: "MB", Of: func(t *Timeline) (float64, bool) {
		a, ok := t.action(from, n)
		if !ok {
			return 0, false
		}
		b := t.end()
		if to != "" {
			if b, ok = t.action(to, k); !ok {
				return 0, false
			}
		}
		return t.at(b).MovedMB - t.at(a).MovedMB, true
	}}
}

// moveTime is the time, from the first event start after the n-th action
// from, until the data moved since reached share q of what moved up to
// the k-th action to (empty: the end): the shape of the throughput curve.
func moveTime(q float64, from string, n int, start string, to string, k int) Value {
	return Value{Desc: fmt.Sprintf("%s to %.0f %% of the data moved", EventRef{start, -1, from, n}, 100*q), Unit: "s", Of: func(t *Timeline) (float64, bool) {
		a, ok := t.event(EventRef{start, -1, from, n})
		if !ok {
			return 0, false
		}
		b := t.end()
		if to != "" {
			if b, ok = t.action(to, k); !ok {
				return 0, false
			}
		}
		base := t.at(a).MovedMB
		total := t.at(b).MovedMB - base
		if total <= 0 {
			return 0, false
		}
		r, ok := t.reach(movedMB.f, base+q*total, a)
		return r - a, ok
	}}
}

// mean is a curve's mean between two events.
func mean(m metric, a, b EventRef) Value {
	return Value{Desc: fmt.Sprintf("mean %s from %s to %s", m.name, a, b), Unit: "", Of: func(t *Timeline) (float64, bool) {
		x, ok1 := t.event(a)
		y, ok2 := t.event(b)
		if !ok1 || !ok2 || y <= x {
			return 0, false
		}
		return t.integral(m.f, x, y) / (y - x), true
	}}
}

// served is the share of the background writer's writes accepted, sent
// from the n-th action from (plus skip seconds) to the k-th action to.
func served(from string, n int, skip float64, to string, k int) Value {
	return Value{Desc: fmt.Sprintf("share of writes accepted from %s + %.0f s to %s", actionName(from, n), skip, actionName(to, k)), Unit: "", Of: func(t *Timeline) (float64, bool) {
		a, ok1 := t.action(from, n)
		b, ok2 := t.action(to, k)
		if !ok1 || !ok2 {
			return 0, false
		}
		var okN, all float64
		for _, w := range t.Writes {
			if w.At >= a+skip && w.At+1 <= b {
				okN += w.OK
				all += w.OK + w.Failed
			}
		}
		if all == 0 {
			return 0, false
		}
		return okN / all, true
	}}
}

// CheckResult is a check's outcome over an experiment's runs: each real
// run and the simulated runs of its schedule (one per seed).
type CheckResult struct {
	Check *Check
	// Real is the value in each real run; Sim the median of its simulated
	// runs', and SimMin and SimMax their range.
	Real, Sim, SimMin, SimMax []float64
	// RealOK and SimOK: every real (simulated) run shows the value.
	RealOK, SimOK bool
	// Lo and Hi bound the simulated medians: the real runs' range widened
	// by the tolerance below and above.
	Lo, Hi float64
	// RealOrder is each real run's order of events (an order check),
	// SimOrder the most common order of each run's simulated runs.
	RealOrder, SimOrder []string
	Pass                bool
	Problem             string
}

// run judges one check over the runs: reals[i] is a real run and sims[i]
// the simulated runs of its schedule. Ceph differs from itself run to run,
// and so does the model (the order in which PGs peer): a check passes when
// the median of each run's simulated values lies within the tolerance of
// the range the real runs showed, [min - Lo, max + Hi]; an order check,
// when the most common order of each run's simulated runs is one some real
// run showed.
func (c *Check) run(reals []*Timeline, sims [][]*Timeline) CheckResult {
	r := CheckResult{Check: c, RealOK: true, SimOK: true}
	if len(c.Order) > 0 {
		for i := range reals {
			ro, ok := eventOrder(reals[i], c.Order)
			r.RealOrder, r.RealOK = append(r.RealOrder, ro), r.RealOK && ok
			var orders []string
			for _, s := range sims[i] {
				so, ok := eventOrder(s, c.Order)
				orders, r.SimOK = append(orders, so), r.SimOK && ok
			}
			r.SimOrder = append(r.SimOrder, mode(orders))
		}
		r.Pass = r.RealOK && r.SimOK
		for _, so := range r.SimOrder {
			r.Pass = r.Pass && slices.Contains(r.RealOrder, so)
		}
		if !r.Pass {
			r.Problem = fmt.Sprintf("%s: real %s; simulated %s", c.Name, strings.Join(uniq(r.RealOrder), " | "), strings.Join(uniq(r.SimOrder), " | "))
		}
		return r
	}
	for i := range reals {
		rv, ok := c.Value.Of(reals[i])
		r.Real, r.RealOK = append(r.Real, rv), r.RealOK && ok
		var vs []float64
		for _, s := range sims[i] {
			v, ok := c.Value.Of(s)
			vs, r.SimOK = append(vs, v), r.SimOK && ok
		}
		r.Sim = append(r.Sim, median(vs))
		r.SimMin, r.SimMax = append(r.SimMin, slices.Min(vs)), append(r.SimMax, slices.Max(vs))
	}
	switch {
	case !r.RealOK:
		r.Problem = fmt.Sprintf("%s: a real run does not show %s", c.Name, c.Value.Desc)
	case !r.SimOK:
		r.Problem = fmt.Sprintf("%s: the simulator does not show %s", c.Name, c.Value.Desc)
	default:
		lo, hi := slices.Min(r.Real), slices.Max(r.Real)
		r.Lo, r.Hi = lo-c.Lo.of(lo), hi+c.Hi.of(hi)
		r.Pass = true
		for _, v := range r.Sim {
			r.Pass = r.Pass && v >= r.Lo-1e-9 && v <= r.Hi+1e-9
		}
		if !r.Pass {
			r.Problem = fmt.Sprintf("%s: real %s, simulated %s (allowed %s)", c.Name, r.Reals(), r.Sims(), r.Allowed())
		}
	}
	return r
}

// mode is the most common string (of those as common, the first to get
// there).
func mode(ss []string) string {
	count := map[string]int{}
	best := ""
	for _, s := range ss {
		if count[s]++; count[s] > count[best] {
			best = s
		}
	}
	return best
}

// median is the middle value (the mean of the middle two of an even count).
func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Reals renders the real runs' values; Sims the simulated ones.
func (r CheckResult) Reals() string { return nums(r.Real, r.Check.Value.Unit) }

// Sims renders each run's simulated median and, when the seeds differ,
// their range.
func (r CheckResult) Sims() string {
	u := r.Check.Value.Unit
	var out []string
	for i, m := range r.Sim {
		s := num(m, u)
		if lo, hi := num(r.SimMin[i], u), num(r.SimMax[i], u); lo != hi {
			s += fmt.Sprintf(" (%s to %s)", lo, hi)
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// Allowed renders the range the simulated value must lie in.
func (r CheckResult) Allowed() string {
	u := r.Check.Value.Unit
	return fmt.Sprintf("%s to %s", num(r.Lo, u), num(r.Hi, u))
}

func nums(vs []float64, unit string) string {
	var out []string
	for _, v := range vs {
		out = append(out, num(v, unit))
	}
	return strings.Join(out, ", ")
}

func uniq(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// eventOrder is the events' order in a timeline (ok false: one is missing).
func eventOrder(t *Timeline, refs []EventRef) (string, bool) {
	type seenAt struct {
		x float64
		s string
	}
	var seen []seenAt
	ok := true
	for _, r := range refs {
		x, found := t.event(r)
		if !found {
			ok = false
			continue
		}
		seen = append(seen, seenAt{x, r.String()})
	}
	for i := 1; i < len(seen); i++ {
		for j := i; j > 0 && seen[j].x < seen[j-1].x; j-- {
			seen[j], seen[j-1] = seen[j-1], seen[j]
		}
	}
	var names []string
	for _, s := range seen {
		names = append(names, s.s)
	}
	return strings.Join(names, " < "), ok
}

func num(v float64, unit string) string {
	switch unit {
	case "s":
		return fmt.Sprintf("%.1f s", v)
	case "MB":
		return fmt.Sprintf("%.1f MB", v)
	case "PG-s":
		return fmt.Sprintf("%.0f PG-s", v)
	case "":
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.2f %s", v, unit)
}
