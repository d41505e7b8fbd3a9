package audit

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// Episode is one Fence (or a restart that restored fences) and what
// happened to every writer around it.
type Episode struct {
	CIDRs          []string     // prefixes it fenced
	Fence          *DriverEvent // the Fence RPC or ready line
	AckNs          int64        // when it was acknowledged
	LiftNs         int64        // start of the Unfence that lifted its last prefix (Never if not lifted)
	Unfence        *DriverEvent // that Unfence, or nil
	EnforceNs      int64        // when refstore enforced a list covering it (0: unknown, no enforcement log)
	EnforceDeltaMs float64      // EnforceNs - AckNs in ms: negative means enforced before the ack, as it must be
	Sources        []SourceFigures
}

// SourceFigures are one writer source's accepted writes around an episode.
// A source is a client id at one address ("client@ip"), so a writer that
// moves to another node shows up twice.
type SourceFigures struct {
	Source                     string
	Fenced                     bool // its address is inside the episode's prefixes
	Before, During, After      int  // accepted writes in each segment
	BeforeRate, DuringRate     float64
	AfterRate                  float64 // writes per second in each segment
	LastBeforeNs, FirstAfterNs int64   // last accepted write before the ack, first after the unfence's ack (0: none)
	GapS                       float64 // FirstAfter - LastBefore, s (0: no resumption)
	ResumeMs                   float64 // FirstAfter - unfence ack, ms (0: no resumption)
	// FirstRefusedNs is when the source's writer saw its first refusal at
	// or after the Fence RPC's start (0: none, or no writer logs);
	// RefusalMs is that minus the ack, ms (negative: refused before the
	// ack, as a fence enforced before its ack allows).
	FirstRefusedNs int64
	RefusalMs      float64
}

// ClientFigures are one client's totals.
type ClientFigures struct {
	Client         string
	Addresses      []string // source IPs seen in the audit log
	Accepted       int      // audited writes
	OK, Refused    int      // writer outcomes (when writer logs were given)
	Errors         int
	Lost           int  // acknowledged but missing from the audit log
	FailedUnfenced int  // refused or failed attempts while no fence covered the source
	Fenced         bool // some fence covered one of its addresses
}

// TimelineEvent is one line of the timeline.
type TimelineEvent struct {
	TNs   int64
	Event string
}

func sourceKey(client string, addr netip.Addr) string { return client + "@" + addr.String() }

func (r *Result) figures(audit []refstore.AuditRecord, in Input) {
	r.Start, r.End = Never, 0
	span := func(t int64) {
		if t > 0 {
			r.Start, r.End = min(r.Start, t), max(r.End, t)
		}
	}
	for _, rec := range audit {
		span(rec.TNs)
	}
	for _, a := range in.Writers {
		span(a.SendNs)
		span(a.TNs)
	}
	for _, ev := range in.Driver {
		span(ev.StartNs)
		span(ev.TNs)
	}
	for _, rec := range in.Enforce {
		span(rec.TNs)
	}
	if r.Start == Never {
		r.Start = 0
	}
	r.episodes(audit, in.Enforce, in.Writers)
	r.clients(audit, in)
	r.timeline(audit, in)
}

func (r *Result) episodes(audit []refstore.AuditRecord, enforce []refstore.EnforceRecord, attempts []writer.Attempt) {
	byFence := map[*DriverEvent]*Episode{}
	var order []*Episode
	for _, w := range r.Windows {
		e := byFence[w.Fence]
		if e == nil {
			e = &Episode{Fence: w.Fence, AckNs: w.From, LiftNs: 0}
			byFence[w.Fence] = e
			order = append(order, e)
		}
		e.CIDRs = append(e.CIDRs, w.Key)
		if w.To > e.LiftNs {
			e.LiftNs, e.Unfence = w.To, w.Unfence
		}
	}
	for i, e := range order {
		slices.Sort(e.CIDRs)
		e.enforcement(enforce)
		segStart, segEnd := r.Start, r.End
		if i > 0 && order[i-1].LiftNs != Never {
			segStart = order[i-1].LiftNs
		}
		if i+1 < len(order) {
			segEnd = order[i+1].AckNs
		}
		e.sources(audit, r.Windows, segStart, segEnd)
		e.refusals(audit, attempts)
		r.Episodes = append(r.Episodes, *e)
	}
}

// enforcement finds the first refstore list change at or after the Fence
// RPC's start that covers every prefix of the episode.
func (e *Episode) enforcement(enforce []refstore.EnforceRecord) {
	for _, rec := range enforce {
		if rec.Restored || rec.TNs < e.Fence.StartNs {
			continue
		}
		var bl refstore.Blocklist
		bl.Prefixes, _ = refstore.ParseCIDRs(rec.CIDRs)
		if covers(bl.Prefixes, e.CIDRs) {
			e.EnforceNs = rec.TNs
			e.EnforceDeltaMs = float64(rec.TNs-e.AckNs) / 1e6
			return
		}
	}
}

func covers(list []netip.Prefix, keys []string) bool {
	for _, k := range keys {
		p, ok := matchPrefix(k)
		if !ok {
			continue
		}
		if !slices.ContainsFunc(list, func(q netip.Prefix) bool { return q.Bits() <= p.Bits() && q.Contains(p.Addr()) }) {
			return false
		}
	}
	return true
}

func (e *Episode) sources(audit []refstore.AuditRecord, windows []Window, segStart, segEnd int64) {
	var prefixes []netip.Prefix
	for _, k := range e.CIDRs {
		if p, ok := matchPrefix(k); ok {
			prefixes = append(prefixes, p)
		}
	}
	unfenceAck := int64(0)
	if e.Unfence != nil {
		unfenceAck = e.Unfence.TNs
	}
	m := map[string]*SourceFigures{}
	var keys []string
	for _, rec := range audit {
		ap, _ := netip.ParseAddrPort(rec.Addr)
		addr := ap.Addr().Unmap()
		k := sourceKey(rec.Client, addr)
		s := m[k]
		if s == nil {
			s = &SourceFigures{Source: k, Fenced: slices.ContainsFunc(prefixes, func(p netip.Prefix) bool { return p.Contains(addr) })}
			m[k] = s
			keys = append(keys, k)
		}
		t := rec.TNs
		switch {
		case t < segStart || t > segEnd:
		case t <= e.AckNs:
			s.Before++
			s.LastBeforeNs = t
		case t < e.LiftNs:
			s.During++
		default:
			s.After++
		}
		if unfenceAck > 0 && t > unfenceAck && s.FirstAfterNs == 0 {
			s.FirstAfterNs = t
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		s := m[k]
		s.BeforeRate = rate(s.Before, segStart, e.AckNs)
		if e.LiftNs != Never {
			s.DuringRate = rate(s.During, e.AckNs, e.LiftNs)
			s.AfterRate = rate(s.After, e.LiftNs, segEnd)
		} else {
			s.DuringRate = rate(s.During, e.AckNs, segEnd)
		}
		if !s.Fenced {
			s.FirstAfterNs = 0 // gap and resumption are the fenced sources' figures
		}
		if s.FirstAfterNs > 0 {
			s.ResumeMs = float64(s.FirstAfterNs-unfenceAck) / 1e6
			if s.LastBeforeNs > 0 {
				s.GapS = float64(s.FirstAfterNs-s.LastBeforeNs) / 1e9
			}
		}
		e.Sources = append(e.Sources, *s)
	}
}

// refusals sets each fenced source's first refusal after the Fence RPC's
// start (and before its lifting is acknowledged).
func (e *Episode) refusals(audit []refstore.AuditRecord, attempts []writer.Attempt) {
	byClient := map[string][]refstore.AuditRecord{}
	for _, rec := range audit {
		byClient[rec.Client] = append(byClient[rec.Client], rec)
	}
	end := int64(Never)
	if e.Unfence != nil {
		end = e.Unfence.TNs
	}
	for _, a := range attempts {
		if a.Outcome != writer.OutcomeRefused || a.TNs < e.Fence.StartNs || a.TNs > end {
			continue
		}
		addr, ok := attemptAddr(a, byClient)
		if !ok {
			continue
		}
		k := sourceKey(a.Client, addr)
		i := slices.IndexFunc(e.Sources, func(s SourceFigures) bool { return s.Source == k })
		if i < 0 || !e.Sources[i].Fenced {
			continue
		}
		if s := &e.Sources[i]; s.FirstRefusedNs == 0 || a.TNs < s.FirstRefusedNs {
			s.FirstRefusedNs = a.TNs
			s.RefusalMs = float64(a.TNs-e.AckNs) / 1e6
		}
	}
}

func rate(n int, from, to int64) float64 {
	if to <= from {
		return 0
	}
	return float64(n) / (float64(to-from) / 1e9)
}

func (r *Result) clients(audit []refstore.AuditRecord, in Input) {
	m := map[string]*ClientFigures{}
	get := func(c string) *ClientFigures {
		if m[c] == nil {
			m[c] = &ClientFigures{Client: c}
		}
		return m[c]
	}
	byClient := map[string][]refstore.AuditRecord{}
	for _, rec := range audit {
		c := get(rec.Client)
		c.Accepted++
		ap, _ := netip.ParseAddrPort(rec.Addr)
		a := ap.Addr().Unmap().String()
		if !slices.Contains(c.Addresses, a) {
			c.Addresses = append(c.Addresses, a)
		}
		byClient[rec.Client] = append(byClient[rec.Client], rec)
	}
	for _, v := range r.Violations {
		if v.Kind == KindLostAck {
			get(v.Client).Lost++
		}
	}
	// Failures before a client's first acknowledged write (the service was
	// not up yet) and after the last audited write (it was shut down first)
	// are outside the run and not counted as failures of an unfenced client.
	firstOK := map[string]int64{}
	var lastAudit int64
	for _, rec := range audit {
		lastAudit = max(lastAudit, rec.TNs)
	}
	for _, a := range in.Writers {
		if a.Outcome == writer.OutcomeOK && (firstOK[a.Client] == 0 || a.SendNs < firstOK[a.Client]) {
			firstOK[a.Client] = a.SendNs
		}
	}
	outside := 0
	for _, a := range in.Writers {
		c := get(a.Client)
		if a.Outcome != writer.OutcomeOK && (firstOK[a.Client] == 0 || a.SendNs < firstOK[a.Client] || a.SendNs > lastAudit) {
			outside++
			switch a.Outcome {
			case writer.OutcomeRefused:
				c.Refused++
			default:
				c.Errors++
			}
			continue
		}
		switch a.Outcome {
		case writer.OutcomeOK:
			c.OK++
			continue
		case writer.OutcomeRefused:
			c.Refused++
		default:
			c.Errors++
		}
		if addr, ok := attemptAddr(a, byClient); ok && !r.mayRefuse(addr, a.SendNs, a.TNs, in.Driver, 0) {
			c.FailedUnfenced++
		}
	}
	if outside > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d failed attempts before their writer's first acknowledged write or after the last audited write were not counted as lost", outside))
	}
	for _, c := range m {
		for _, a := range c.Addresses {
			addr := netip.MustParseAddr(a)
			if slices.ContainsFunc(r.Windows, func(w Window) bool { return w.Prefix.Contains(addr) }) {
				c.Fenced = true
			}
		}
		r.Clients = append(r.Clients, *c)
	}
	slices.SortFunc(r.Clients, func(a, b ClientFigures) int { return strings.Compare(a.Client, b.Client) })
}

func (r *Result) timeline(audit []refstore.AuditRecord, in Input) {
	add := func(t int64, f string, a ...any) {
		r.Timeline = append(r.Timeline, TimelineEvent{t, fmt.Sprintf(f, a...)})
	}
	for _, ev := range in.Driver {
		switch ev.Kind {
		case EventReady:
			add(ev.TNs, "driver ready, re-applied [%s]", strings.Join(ev.CIDRs, " "))
		default:
			add(ev.StartNs, "%s RPC starts [%s]", ev.Kind, strings.Join(ev.CIDRs, " "))
			add(ev.TNs, "%s RPC returns %s", ev.Kind, ev.Code)
		}
	}
	for _, rec := range in.Enforce {
		if rec.Restored {
			add(rec.TNs, "refstore starts with blocklist generation %d [%s]", rec.Generation, strings.Join(rec.CIDRs, " "))
		} else {
			add(rec.TNs, "refstore enforces generation %d [%s], closed %d sessions", rec.Generation, strings.Join(rec.CIDRs, " "), rec.Closed)
		}
	}
	for _, e := range r.Episodes {
		for _, s := range e.Sources {
			if !s.Fenced {
				continue
			}
			if s.LastBeforeNs > 0 {
				add(s.LastBeforeNs, "last write of %s before the fence", s.Source)
			}
			if s.FirstAfterNs > 0 {
				add(s.FirstAfterNs, "first write of %s after the unfence (%.1f ms after its ack)", s.Source, s.ResumeMs)
			}
		}
	}
	seen := map[string]bool{}
	for _, a := range in.Writers {
		if a.Outcome == writer.OutcomeRefused && !seen[a.Client] {
			seen[a.Client] = true
			add(a.TNs, "first refusal seen by writer %s (%s)", a.Client, a.Reason)
		}
	}
	for _, v := range r.Violations {
		if !seen["violation "+v.Kind] {
			seen["violation "+v.Kind] = true
			add(v.TNs, "FIRST VIOLATION %s: %s seq %d from %s", v.Kind, v.Client, v.Seq, v.Addr)
		}
	}
	slices.SortStableFunc(r.Timeline, func(a, b TimelineEvent) int { return cmpInt(a.TNs, b.TNs) })
}
