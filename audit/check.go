package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// Violation kinds, most serious first.
const (
	KindWriteAfterFence = "write-after-fence"  // an audited write from a fenced source after the fence's ack
	KindLostAck         = "lost-ack"           // a writer saw OK but the write is not in the audit log
	KindEnforcedLate    = "enforced-after-ack" // refstore enforced a fence only after the driver acknowledged it
	KindRefusedUnfenced = "refused-unfenced"   // a writer was refused while its source was not fenced
)

var kindRank = map[string]int{KindWriteAfterFence: 0, KindLostAck: 1, KindEnforcedLate: 2, KindRefusedUnfenced: 3}

// Never is the end of a window that was never lifted.
const Never = math.MaxInt64

// Options tunes a check.
type Options struct {
	// Skew tolerates clock skew between the driver and the storage
	// service: a write counts as after an ack only when it is later than
	// ack+Skew. Zero (the default) is right when both share one clock, as
	// the nodes of a kind cluster do.
	Skew time.Duration
	// Since (unix ns) judges only what happened from then on: fences
	// acknowledged earlier still open their windows, but a violation timed
	// before Since, or a late enforcement of a fence acknowledged before it,
	// belongs to an earlier test and is not reported. Zero judges everything.
	Since int64
}

// Window is the time during which one fenced prefix must stop every write:
// from the ack of the Fence that added it (exclusive) until the start of the
// Unfence that removed it (exclusive), since a correct driver lifts
// enforcement before acknowledging an Unfence.
type Window struct {
	Key       string       // the prefix as the driver stores it
	Prefix    netip.Prefix // the prefix matched against sources (IPv4-mapped blocks unmapped)
	From      int64        // ack of the fence (or the ready time of a driver restart that restored it)
	To        int64        // start of the lifting Unfence; Never if never lifted
	Fence     *DriverEvent // the Fence RPC (or ready line) that opened it
	Unfence   *DriverEvent // the Unfence RPC that closed it, or nil
	AllowFrom int64        // refusals are legitimate from the Fence RPC's start...
	AllowTo   int64        // ...until the Unfence's ack (Never if never lifted)
}

// Violation is one broken promise, with the record that shows it.
type Violation struct {
	Kind    string
	Client  string
	Addr    string // the source as recorded
	Seq     uint64
	TNs     int64   // audit time (write-after-fence) or the writer's time
	Record  string  // the full record, as JSON
	Window  *Window // write-after-fence: the fence it violates
	DeltaMs float64 // write-after-fence: ms after the ack
	Detail  string
}

func (v Violation) String() string {
	switch v.Kind {
	case KindWriteAfterFence:
		return fmt.Sprintf("%s: write %s seq %d from %s accepted at %s, %.3f ms after the ack of the fence of %s (acknowledged at %s, %s); record %s",
			v.Kind, v.Client, v.Seq, v.Addr, fmtNs(v.TNs), v.DeltaMs, v.Window.Key, fmtNs(v.Window.From), v.Window.Fence.Source, v.Record)
	case KindEnforcedLate:
		return fmt.Sprintf("%s: %s; enforcement record %s", v.Kind, v.Detail, v.Record)
	default:
		return fmt.Sprintf("%s: %s seq %d from %s at %s: %s; record %s", v.Kind, v.Client, v.Seq, v.Addr, fmtNs(v.TNs), v.Detail, v.Record)
	}
}

// Restart is a driver (re)start seen in the log.
type Restart struct {
	TNs      int64
	Source   string
	Restored []string // what the driver re-applied
	Missing  []string // acknowledged fences it did not re-apply (a forgotten fence)
}

// Result is the outcome of a check.
type Result struct {
	Violations []Violation // sorted by kind (safety first), then time
	Windows    []Window
	Restarts   []Restart
	Episodes   []Episode
	Clients    []ClientFigures
	Timeline   []TimelineEvent
	Warnings   []string
	Audited    int // audit records read
	Attempts   int // writer attempts read
	Start, End int64
}

// OK reports whether no promise was broken.
func (r *Result) OK() bool { return len(r.Violations) == 0 }

// First is the first violation: the earliest write after a fence if there
// is one, else the earliest violation of the next kind. Nil when OK.
func (r *Result) First() *Violation {
	if len(r.Violations) == 0 {
		return nil
	}
	return &r.Violations[0]
}

// Check runs the oracle over parsed input.
func Check(in Input, o Options) *Result {
	r := &Result{Warnings: slices.Clone(in.Warnings), Audited: len(in.Audit), Attempts: len(in.Writers)}
	audit := slices.Clone(in.Audit)
	slices.SortStableFunc(audit, func(a, b refstore.AuditRecord) int { return cmpInt(a.TNs, b.TNs) })
	r.buildWindows(in.Driver)
	r.checkWrites(audit, o.Skew)
	r.checkWriters(audit, in.Writers, in.Driver, o.Skew)
	r.checkEnforcement(in.Enforce, o.Skew, o.Since)
	r.Violations = slices.DeleteFunc(r.Violations, func(v Violation) bool { return v.TNs < o.Since })
	slices.SortStableFunc(r.Violations, func(a, b Violation) int {
		if c := kindRank[a.Kind] - kindRank[b.Kind]; c != 0 {
			return c
		}
		return cmpInt(a.TNs, b.TNs)
	})
	r.figures(audit, in)
	return r
}

// matchPrefix parses a stored key into the prefix matched against sources.
func matchPrefix(key string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(key)
	if err != nil {
		return netip.Prefix{}, false
	}
	ps, err := refstore.ParseCIDRs([]string{p.Masked().String()})
	if err != nil || len(ps) != 1 {
		return netip.Prefix{}, false
	}
	return ps[0], true
}

// buildWindows replays the driver's acknowledged changes in time order:
// a Fence takes effect at its ack, an Unfence at its start, a ready line
// at its time.
func (r *Result) buildWindows(evs []DriverEvent) {
	type change struct {
		at int64
		ev *DriverEvent
	}
	var cs []change
	for i := range evs {
		ev := &evs[i]
		switch {
		case !ev.OK:
		case ev.Kind == EventUnfence:
			cs = append(cs, change{ev.StartNs, ev})
		default:
			cs = append(cs, change{ev.TNs, ev})
		}
	}
	slices.SortStableFunc(cs, func(a, b change) int { return cmpInt(a.at, b.at) })
	open := map[string]*Window{}
	var all []*Window
	for _, c := range cs {
		ev := c.ev
		keys := map[string]netip.Prefix{}
		for _, s := range ev.CIDRs {
			p, ok := matchPrefix(s)
			if !ok {
				r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %s of %q, which is not a CIDR block, ignored", ev.Source, ev.Kind, s))
				continue
			}
			keys[mustPrefix(s).Masked().String()] = p
		}
		switch ev.Kind {
		case EventFence, EventReady:
			for k, p := range keys {
				if open[k] == nil {
					w := &Window{Key: k, Prefix: p, From: ev.TNs, To: Never, Fence: ev, AllowFrom: ev.StartNs, AllowTo: Never}
					open[k] = w
					all = append(all, w)
				}
			}
			if ev.Kind == EventReady {
				rs := Restart{TNs: ev.TNs, Source: ev.Source, Restored: sortedKeys(keys)}
				for k := range open {
					if _, ok := keys[k]; !ok {
						rs.Missing = append(rs.Missing, k)
					}
				}
				slices.Sort(rs.Missing)
				r.Restarts = append(r.Restarts, rs)
			}
		case EventUnfence:
			for k := range keys {
				if w := open[k]; w != nil {
					w.To, w.Unfence, w.AllowTo = ev.StartNs, ev, ev.TNs
					delete(open, k)
				}
			}
		}
	}
	for _, w := range all {
		r.Windows = append(r.Windows, *w)
	}
	slices.SortStableFunc(r.Windows, func(a, b Window) int { return cmpInt(a.From, b.From) })
}

func mustPrefix(s string) netip.Prefix { p, _ := netip.ParsePrefix(s); return p }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// fencedAt returns the earliest-acknowledged window that fences addr at
// time t (strictly after its ack + skew, strictly before its lifting), or nil.
func (r *Result) fencedAt(addr netip.Addr, t int64, skew time.Duration) *Window {
	for i := range r.Windows {
		w := &r.Windows[i]
		if w.Prefix.Contains(addr) && t > w.From+int64(skew) && t < w.To {
			return w
		}
	}
	return nil
}

func (r *Result) checkWrites(audit []refstore.AuditRecord, skew time.Duration) {
	for _, rec := range audit {
		ap, _ := netip.ParseAddrPort(rec.Addr)
		w := r.fencedAt(ap.Addr().Unmap(), rec.TNs, skew)
		if w == nil {
			continue
		}
		raw, _ := json.Marshal(rec)
		r.Violations = append(r.Violations, Violation{Kind: KindWriteAfterFence, Client: rec.Client, Addr: rec.Addr,
			Seq: rec.Seq, TNs: rec.TNs, Record: string(raw), Window: w, DeltaMs: float64(rec.TNs-w.From) / 1e6})
	}
}

// mayRefuse reports whether addr may legitimately be refused at some time
// in [from, to]: it overlaps a window's span from its Fence's start to its
// Unfence's ack, or a failed Fence RPC covering addr.
func (r *Result) mayRefuse(addr netip.Addr, from, to int64, evs []DriverEvent, skew time.Duration) bool {
	s := int64(skew)
	for _, w := range r.Windows {
		if w.Prefix.Contains(addr) && from <= w.AllowTo+s && to >= w.AllowFrom-s {
			return true
		}
	}
	for _, ev := range evs {
		if ev.Kind != EventFence || ev.OK || from > ev.TNs+s || to < ev.StartNs-s {
			continue
		}
		for _, c := range ev.CIDRs {
			if p, ok := matchPrefix(c); ok && p.Contains(addr) {
				return true
			}
		}
	}
	return false
}

// attemptAddr is the source of an attempt: its local address, else the
// latest audited address of its client before it, else the earliest.
func attemptAddr(a writer.Attempt, byClient map[string][]refstore.AuditRecord) (netip.Addr, bool) {
	if ap, err := netip.ParseAddrPort(a.Local); err == nil {
		return ap.Addr().Unmap(), true
	}
	recs := byClient[a.Client]
	if len(recs) == 0 {
		return netip.Addr{}, false
	}
	best := recs[0]
	for _, rec := range recs {
		if rec.TNs <= a.SendNs {
			best = rec
		}
	}
	ap, _ := netip.ParseAddrPort(best.Addr)
	return ap.Addr().Unmap(), true
}

type clientSeq struct {
	client string
	seq    uint64
}

func (r *Result) checkWriters(audit []refstore.AuditRecord, attempts []writer.Attempt, evs []DriverEvent, skew time.Duration) {
	if len(attempts) == 0 {
		return
	}
	audited := map[clientSeq]bool{}
	byClient := map[string][]refstore.AuditRecord{}
	var last int64
	for _, rec := range audit {
		audited[clientSeq{rec.Client, rec.Seq}] = true
		byClient[rec.Client] = append(byClient[rec.Client], rec)
		last = max(last, rec.TNs)
	}
	late := 0
	for _, a := range attempts {
		raw, _ := json.Marshal(a)
		switch a.Outcome {
		case writer.OutcomeOK:
			if audited[clientSeq{a.Client, a.Seq}] {
				continue
			}
			if a.Server > last {
				late++ // acknowledged after the audit copy was taken
				continue
			}
			r.Violations = append(r.Violations, Violation{Kind: KindLostAck, Client: a.Client, Addr: a.Local, Seq: a.Seq,
				TNs: a.TNs, Record: string(raw), Detail: "acknowledged to the writer but missing from the audit log"})
		case writer.OutcomeRefused:
			addr, ok := attemptAddr(a, byClient)
			if !ok {
				r.Warnings = append(r.Warnings, fmt.Sprintf("refusal of %s seq %d: source unknown, not judged", a.Client, a.Seq))
				continue
			}
			if !r.mayRefuse(addr, a.SendNs, a.TNs, evs, skew) {
				r.Violations = append(r.Violations, Violation{Kind: KindRefusedUnfenced, Client: a.Client, Addr: addr.String(), Seq: a.Seq,
					TNs: a.TNs, Record: string(raw), Detail: "refused (" + a.Reason + ") while no acknowledged or pending fence covered its source"})
			}
		}
	}
	if late > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d acknowledged writes are later than the last audit record (audit copied before the writers stopped?); not judged", late))
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func fmtNs(ns int64) string {
	if ns == Never {
		return "never"
	}
	return time.Unix(0, ns).UTC().Format("15:04:05.000000000")
}

func joinOr(s []string, none string) string {
	if len(s) == 0 {
		return none
	}
	return strings.Join(s, ", ")
}

// checkEnforcement compares each acknowledged Fence with refstore's
// enforcement log (when given): the first list change at or after the RPC's
// start that covers the fence must not come after the ack. This catches an
// early ack even when no fenced writer happened to write in between.
func (r *Result) checkEnforcement(enforce []refstore.EnforceRecord, skew time.Duration, since int64) {
	if len(enforce) == 0 {
		return
	}
	byFence := map[*DriverEvent][]string{}
	var order []*DriverEvent
	for _, w := range r.Windows {
		if w.Fence.Kind != EventFence {
			continue
		}
		if byFence[w.Fence] == nil {
			order = append(order, w.Fence)
		}
		byFence[w.Fence] = append(byFence[w.Fence], w.Key)
	}
	for _, ev := range order {
		e := Episode{Fence: ev, AckNs: ev.TNs, CIDRs: byFence[ev]}
		e.enforcement(enforce)
		if e.AckNs < since || e.EnforceNs == 0 || e.EnforceNs <= e.AckNs+int64(skew) {
			continue
		}
		rec := enforce[slices.IndexFunc(enforce, func(x refstore.EnforceRecord) bool { return x.TNs == e.EnforceNs })]
		raw, _ := json.Marshal(rec)
		r.Violations = append(r.Violations, Violation{Kind: KindEnforcedLate, TNs: e.EnforceNs, Record: string(raw),
			Detail: fmt.Sprintf("the fence of %s (%s) was acknowledged at %s and enforced %.3f ms later",
				strings.Join(e.CIDRs, " "), ev.Source, fmtNs(ev.TNs), e.EnforceDeltaMs)})
	}
}
