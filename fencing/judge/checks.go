package judge

// The checks of Checks, each a method of judging over the run's data.

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

func checkRank(id string) int {
	return slices.IndexFunc(Checks, func(c Check) bool { return c.ID == id })
}

func nodeOf(a contract.Attempt, l Log) string {
	if a.Node != "" {
		return a.Node
	}
	return l.Node
}

func (j *judging) add(f Finding) { j.findings = append(j.findings, f) }

// bound is node's clock bound in ns (forever when unknown).
func (j *judging) bound(node string) int64 {
	b, ok := j.bounds[node]
	if !ok {
		return forever
	}
	return int64(b)
}

// clocks sets each writer node's bound: measured plus the wall-clock steps
// seen in its logs.
func (j *judging) clocks() {
	nodes := map[string]bool{}
	for _, l := range j.in.Logs {
		for _, a := range l.Attempts {
			nodes[nodeOf(a, l)] = true
		}
	}
	for _, r := range j.in.Records {
		if r.Node != "" {
			nodes[r.Node] = true
		}
	}
	steps := map[string]int64{}
	for _, l := range j.in.Logs {
		mono := false
		for i := 1; i < len(l.Attempts); i++ {
			p, a := l.Attempts[i-1], l.Attempts[i]
			if p.SendMonoNs == 0 && a.SendMonoNs == 0 || a.SendMonoNs <= p.SendMonoNs {
				continue // no monotonic clock, or the writer restarted
			}
			mono = true
			step := (a.SendNs - p.SendNs) - (a.SendMonoNs - p.SendMonoNs)
			if abs(step) > int64(StepTolerance) {
				n := nodeOf(a, l)
				steps[n] += abs(step)
				j.add(Finding{Check: "clock-bound", Severity: SevNote, Writer: a.Client, Node: n, Seq: a.Seq, StartNs: a.SendNs,
					Detail: fmt.Sprintf("the wall clock of %s stepped by %+.3f ms between seq %d and seq %d (wall and monotonic time disagree); its bound grows by as much", n, ms(step), p.Seq, a.Seq)})
			}
		}
		if !mono && len(l.Attempts) > 1 {
			j.add(Finding{Check: "clock-bound", Severity: SevNote, Writer: l.Writer, Node: l.Node,
				Detail: "the log has no monotonic times (send_mono_ns): a step of the wall clock while it ran could not be seen"})
		}
	}
	for _, n := range slices.Sorted(mapsKeys(nodes)) {
		b, ok := j.in.Bounds[n]
		if !ok {
			j.add(Finding{Check: "clock-bound", Severity: SevIncomplete, Node: n,
				Detail: fmt.Sprintf("no clock bound was measured for node %s: none of its writes can be placed against the fence", n)})
			continue
		}
		j.bounds[n] = b + time.Duration(steps[n])
	}
}

// StepTolerance is the largest disagreement between the wall and the
// monotonic clock between two attempts that is not called a step (both are
// read in one call; what remains is rounding).
const StepTolerance = time.Millisecond

// placement says where an interval [s, e] of node's clock lies against the
// fence: before it, after its lifting, inside it, or undecidable, with why.
type placement int

const (
	placeBefore placement = iota
	placeAfter
	placeInside
	placeUndecidable
)

// place places an attempt that started at s and ended at e (0: unknown,
// then the write may have been accepted at any time after s) on node.
func (j *judging) place(node string, s, e int64) (placement, string) {
	b := j.bound(node)
	ack := j.in.Fence.AckNs
	switch {
	case b == forever:
		return placeUndecidable, "its node's clock is not bounded"
	case s+b <= ack:
		return placeBefore, ""
	case s-b >= j.unfence:
		return placeAfter, ""
	case s-b <= ack:
		return placeUndecidable, fmt.Sprintf("it started within the clock bound (±%.3f ms) of the ack", ms(b))
	case e == 0:
		return placeUndecidable, "it started while the fence held, but when the storage took it is unknown (no acknowledgement line), and the fence was lifted since"
	case e+b < j.unfence:
		return placeInside, ""
	}
	return placeUndecidable, fmt.Sprintf("it started while the fence held and was acknowledged after the unfence was requested (±%.3f ms)", ms(b))
}

func (j *judging) afterAck(node string, s int64) string {
	b := j.bound(node)
	if b == forever {
		return fmt.Sprintf("%+.3f ms (clock unbounded)", ms(s-j.in.Fence.AckNs))
	}
	return fmt.Sprintf("%+.3f ms (±%.3f ms)", ms(s-j.in.Fence.AckNs), ms(b))
}

// fencedWrites: every acknowledged attempt of the fenced node.
func (j *judging) fencedWrites() {
	for _, k := range j.sortedAttempts() {
		p := j.attempts[k]
		if p.node != j.in.FencedNode || p.a.Outcome != contract.OutcomeOK {
			continue
		}
		if j.bound(p.node) == forever {
			continue // the clock-bound finding says why none can be placed
		}
		where, why := j.place(p.node, p.a.SendNs, p.a.TNs)
		f := j.attemptFinding("write-after-ack", p)
		switch where {
		case placeInside:
			f.Severity, f.Detail = SevFail, "acknowledged to the writer although it started after the fence's acknowledgement"+j.readBackNote(k)
		case placeUndecidable:
			f.Severity, f.Detail = SevUndecidable, "acknowledged; "+why+j.readBackNote(k)
		default:
			continue
		}
		j.add(f)
	}
}

func (j *judging) readBackNote(k key) string {
	switch recs := j.records[k]; {
	case len(recs) == 0:
		return "; its record is not on the storage"
	case slices.ContainsFunc(recs, func(r contract.Record) bool { return r.Intact }):
		return "; its record is on the storage"
	}
	return "; its record is on the storage, damaged"
}

func (j *judging) attemptFinding(check string, p placed) Finding {
	return Finding{Check: check, Writer: p.a.Client, Node: p.node, Seq: p.a.Seq, StartNs: p.a.SendNs, EndNs: p.a.TNs,
		Outcome: p.a.Outcome, AfterAck: j.afterAck(p.node, p.a.SendNs), Evidence: attemptLine(p.a)}
}

// storedRecords: every record read back from the fenced node, and every
// refused write, against the storage's contents.
func (j *judging) storedRecords() {
	for _, k := range slices.SortedFunc(mapsKeys(j.records), cmpKey) {
		recs := j.records[k]
		p, logged := j.attempts[k]
		if logged && p.a.Outcome == contract.OutcomeRefused {
			f := j.attemptFinding("refused-stored", p)
			f.Severity, f.Detail, f.Evidence = SevFail, "the storage refused this write, yet its record is on the storage", f.Evidence+" | "+recordLines(recs)
			j.add(f)
			continue
		}
		if logged && p.a.Outcome == contract.OutcomeOK {
			continue // judged with the writes
		}
		r := recs[0]
		node, s, e := r.Node, r.StartNs, int64(0)
		if logged {
			node, s, e = p.node, p.a.SendNs, p.a.TNs
		}
		if node != j.in.FencedNode {
			continue
		}
		if s == 0 {
			j.add(Finding{Check: "record-after-ack", Severity: SevNote, Writer: k.writer, Node: node, Seq: k.seq, Evidence: recordLines(recs),
				Detail: "a damaged record with no acknowledgement line: it cannot be placed in time (a torn write of an attempt the writer never finished?)"})
			continue
		}
		if j.bound(node) == forever {
			continue
		}
		where, why := j.place(node, s, e)
		f := Finding{Check: "record-after-ack", Writer: k.writer, Node: node, Seq: k.seq, StartNs: s, EndNs: e, AfterAck: j.afterAck(node, s), Evidence: recordLines(recs)}
		if logged {
			f.Outcome, f.Evidence = p.a.Outcome, attemptLine(p.a)+" | "+f.Evidence
		}
		switch where {
		case placeInside:
			f.Severity, f.Detail = SevFail, "on the storage although its write started after the fence's acknowledgement and ended before the unfence (the writer saw "+f.Outcome+")"
		case placeUndecidable:
			f.Severity, f.Detail = SevUndecidable, "on the storage; "+why
		default:
			continue
		}
		j.add(f)
	}
}

// durability: every acknowledged write of a writer the read-back covered
// is read back intact.
func (j *judging) durability() {
	covered := j.covered()
	for _, k := range j.sortedAttempts() {
		p := j.attempts[k]
		if p.a.Outcome != contract.OutcomeOK || !covered[k.writer] {
			continue
		}
		recs := j.records[k]
		f := j.attemptFinding("ack-durable", p)
		f.Severity = SevFail
		switch {
		case len(recs) == 0:
			f.Detail = "acknowledged to the writer, but its record is not on the storage: an acknowledged write was lost"
		case !slices.ContainsFunc(recs, func(r contract.Record) bool { return r.Intact }):
			f.Detail = "acknowledged to the writer, but its record is damaged: " + recs[0].Detail
			f.Evidence += " | " + recordLines(recs)
		case !slices.ContainsFunc(recs, func(r contract.Record) bool { return r.Intact && r.StartNs == p.a.SendNs && r.Node == p.node }):
			f.Detail = "acknowledged to the writer, but the record on the storage is another write's (its start time or node differ)"
			f.Evidence += " | " + recordLines(recs)
		default:
			continue
		}
		j.add(f)
	}
}

// covered returns the writers the read-back covered, and reports the
// writers it did not cover.
func (j *judging) covered() map[string]bool {
	c := map[string]bool{}
	for _, d := range j.in.ReadDone {
		if d.Done {
			for _, w := range d.Writers {
				c[w] = true
			}
		}
	}
	return c
}

func (j *judging) readBack() {
	c := j.covered()
	for _, w := range j.in.Writers {
		if !c[w] {
			j.add(Finding{Check: "read-back", Severity: SevIncomplete, Writer: w,
				Detail: "the read-back did not cover this writer (no read_done line naming it): its acknowledged writes cannot be checked"})
		}
	}
	for _, recs := range j.records {
		for _, r := range recs {
			if !r.Intact && r.Detail != "" && !slices.Contains(j.in.Writers, r.Writer) {
				j.add(Finding{Check: "read-back", Severity: SevNote, Writer: r.Writer, Seq: r.Seq, Detail: "a record of a writer this run did not start: " + r.Detail, Evidence: recordLines(recs)})
			}
		}
	}
}

// refusals: a refusal is legitimate only on the fenced node, from the
// fence's creation until its unfence was acknowledged.
func (j *judging) refusals() {
	from, to := j.in.Fence.CreatedNs, j.in.Fence.UnfenceAckNs
	if to == 0 {
		to = forever
	}
	for _, k := range j.sortedAttempts() {
		p := j.attempts[k]
		if p.a.Outcome != contract.OutcomeRefused {
			continue
		}
		b := j.bound(p.node)
		if p.node == j.in.FencedNode && (b == forever || p.a.TNs+b >= from && p.a.SendNs-b <= to) {
			continue
		}
		f := j.attemptFinding("refused-unfenced", p)
		f.Severity = SevFail
		if p.node == j.in.FencedNode {
			f.Detail = "refused while its node was not fenced (before the fence was created or after its unfence was acknowledged)"
		} else {
			f.Detail = fmt.Sprintf("refused although only %s was fenced: the fence cut a writer on another node", j.in.FencedNode)
		}
		j.add(f)
	}
}

// exercised: the fenced node wrote before the ack and tried while fenced.
func (j *judging) exercised() {
	if j.bound(j.in.FencedNode) == forever {
		return // nothing of it can be placed: the clock-bound finding says so
	}
	okBefore, tried := 0, 0
	for _, p := range j.attempts {
		if p.node != j.in.FencedNode {
			continue
		}
		where, _ := j.place(p.node, p.a.SendNs, p.a.TNs)
		switch {
		case where == placeBefore && p.a.Outcome == contract.OutcomeOK:
			okBefore++
		case where == placeInside:
			tried++
		}
	}
	if okBefore == 0 {
		j.add(Finding{Check: "fence-exercised", Severity: SevIncomplete, Node: j.in.FencedNode,
			Detail: "no write of the fenced node was acknowledged before the fence: the storage never worked for it, so its refusal proves nothing"})
	}
	if tried == 0 {
		j.add(Finding{Check: "fence-exercised", Severity: SevIncomplete, Node: j.in.FencedNode,
			Detail: "the fenced node's writers made no attempt that surely started after the ack and ended before the unfence: the fence was not exercised"})
	}
}

// moved: the rehearsal's application wrote from another node while fenced.
func (j *judging) moved() {
	if j.in.Moved == "" {
		return
	}
	for _, p := range j.attempts {
		if p.a.Client == j.in.Moved && p.node != j.in.FencedNode && p.a.Outcome == contract.OutcomeOK {
			if where, _ := j.place(p.node, p.a.SendNs, p.a.TNs); where == placeInside {
				return
			}
		}
	}
	j.add(Finding{Check: "workload-moved", Severity: SevFail, Writer: j.in.Moved,
		Detail: fmt.Sprintf("no write of %s was acknowledged on another node while %s was fenced: the workload did not move", j.in.Moved, j.in.FencedNode)})
}

func (j *judging) sortedAttempts() []key {
	return slices.SortedFunc(mapsKeys(j.attempts), cmpKey)
}

func cmpKey(a, b key) int { return cmp.Or(cmp.Compare(a.writer, b.writer), cmp.Compare(a.seq, b.seq)) }

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func attemptLine(a contract.Attempt) string {
	return fmt.Sprintf("log: seq %d %s, start %s end %s%s", a.Seq, a.Outcome, fmtNs(a.SendNs), fmtNs(a.TNs), reasonOf(a))
}

func reasonOf(a contract.Attempt) string {
	if a.Reason == "" {
		return ""
	}
	return " (" + a.Reason + ")"
}

func recordLines(recs []contract.Record) string {
	var out []string
	for _, r := range recs {
		s := fmt.Sprintf("record: seq %d from %s start %s", r.Seq, r.Node, fmtNs(r.StartNs))
		if !r.Intact {
			s += " DAMAGED (" + r.Detail + ")"
		}
		if r.Where != "" {
			s += " at " + r.Where
		}
		out = append(out, s)
	}
	return strings.Join(out, "; ")
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func fmtNs(ns int64) string {
	if ns == 0 {
		return "unknown"
	}
	return time.Unix(0, ns).UTC().Format("15:04:05.000000")
}

// figures counts every writer's attempts per node around the fence.
func (j *judging) figures() []WriterFigures {
	by := map[[2]string]*WriterFigures{}
	get := func(w, n string) *WriterFigures {
		k := [2]string{w, n}
		if by[k] == nil {
			by[k] = &WriterFigures{Writer: w, Node: n, Before: map[string]int{}, During: map[string]int{}, After: map[string]int{}}
			if b := j.bound(n); b != forever {
				by[k].BoundMs = ms(b)
			}
		}
		return by[k]
	}
	ack := j.in.Fence.AckNs
	for _, p := range j.attempts {
		f := get(p.a.Client, p.node)
		f.MonotonicClock = f.MonotonicClock || p.a.SendMonoNs != 0
		where, _ := j.place(p.node, p.a.SendNs, p.a.TNs)
		switch where {
		case placeBefore:
			f.Before[p.a.Outcome]++
		case placeAfter:
			f.After[p.a.Outcome]++
		default:
			f.During[p.a.Outcome]++
		}
		if p.node != j.in.FencedNode {
			continue
		}
		if d := ms(ack - p.a.SendNs); p.a.Outcome == contract.OutcomeOK && d >= 0 && (f.LastOKBeforeAckMs == nil || d < *f.LastOKBeforeAckMs) {
			f.LastOKBeforeAckMs = &d
		}
		if d := ms(p.a.SendNs - ack); p.a.Outcome != contract.OutcomeOK && d > 0 && p.a.SendNs < j.unfence && (f.FirstFailureAfterAckMs == nil || d < *f.FirstFailureAfterAckMs) {
			f.FirstFailureAfterAckMs = &d
		}
	}
	for _, recs := range j.records {
		for _, r := range recs {
			n := r.Node
			if p, ok := j.attempts[key{r.Writer, r.Seq}]; ok {
				n = p.node
			}
			f := get(r.Writer, n)
			f.RecordsRead++
			if !r.Intact {
				f.RecordsDamaged++
			}
		}
	}
	out := make([]WriterFigures, 0, len(by))
	for _, f := range by {
		out = append(out, *f)
	}
	sort.Slice(out, func(a, b int) bool {
		return cmp.Or(cmp.Compare(out[a].Writer, out[b].Writer), cmp.Compare(out[a].Node, out[b].Node)) < 0
	})
	return out
}
