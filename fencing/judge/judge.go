// Package judge decides from data alone whether a fence held: the
// acknowledgement logs of the writers (fencing/contract), the records a
// reader on another node found on the storage, the times at which the
// NetworkFence was acknowledged and lifted (fenceproof's clock) and a
// bound on how far each node's clock may be from fenceproof's. It needs
// nothing from the storage or the driver.
//
// # Times and the clock bound
//
// A writer stamps its attempts with its node's wall clock; the fence's
// acknowledgement is stamped with fenceproof's (the moment it saw the
// NetworkFence's status turn Succeeded, never earlier than the real
// transition). Node n's clock is within B(n) of fenceproof's: B(n) is the
// measured bound (fencing/clock) plus every step of the wall clock seen in
// n's logs (the difference between wall and monotonic time between two
// attempts). So an attempt stamped s started in [s-B, s+B] on
// fenceproof's clock, and the judge decides only what holds for every
// time in that interval:
//
//   - an acknowledged write of the fenced node that started after the ack
//     (s-B > ack) and was acknowledged before the unfence was requested
//     (end+B < unfence) is a violation (write-after-ack);
//   - one that started before it (s+B <= ack), or after the unfence was
//     requested (s-B >= unfence), is fine;
//   - any other is undecidable: reported as such, and the run is
//     INCOMPLETE unless something else FAILed. Never passed silently.
//
// The same reasoning applies to the records read back, with the record's
// own start time and, when the writer logged the attempt, its end.
package judge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// Verdicts of a run.
type Verdict string

const (
	Pass       Verdict = "PASS"
	Fail       Verdict = "FAIL"
	Incomplete Verdict = "INCOMPLETE"
)

// Severity of a finding.
type Severity string

const (
	SevFail        Severity = "fail"        // a promise broken: the run FAILs
	SevUndecidable Severity = "undecidable" // the data cannot tell within the clock bound
	SevIncomplete  Severity = "incomplete"  // something the verdict needs is missing
	SevNote        Severity = "note"        // worth knowing, changes nothing
)

// Check is one thing the judge checks; Checks is their table, in the order
// reports list them.
type Check struct{ ID, Title string }

// The checks.
var Checks = []Check{
	{"write-after-ack", "no write of the fenced node was acknowledged after the fence's acknowledgement (the writers' logs)"},
	{"record-after-ack", "no record written from the fenced node after the fence's acknowledgement is on the storage (the read-back)"},
	{"refused-stored", "no write the storage refused is on the storage"},
	{"ack-durable", "every acknowledged write is read back, intact, by a reader on another node"},
	{"refused-unfenced", "no writer was refused while its node was not fenced (the fence cut no one else)"},
	{"fence-exercised", "the fenced node's writers had writes acknowledged before the fence and tried to write while it held"},
	{"workload-moved", "the application writer had writes acknowledged on another node while its first node was fenced (DR rehearsal)"},
	{"clock-bound", "every writer node's clock is bounded against fenceproof's, and no wall-clock step was seen"},
	{"read-back", "the read-back covered every writer"},
}

// Fence is the fence under test, on fenceproof's clock (unix ns).
type Fence struct {
	Name  string
	CIDRs []string
	// CreatedNs: the NetworkFence was created; AckNs: fenceproof saw it
	// Succeeded (the acknowledgement); UnfenceNs: its fenceState was set
	// to Unfenced (0: never lifted during the run); UnfenceAckNs: the
	// unfence Succeeded (0: not seen).
	CreatedNs, AckNs, UnfenceNs, UnfenceAckNs int64
}

// Log is one writer's acknowledgement log from one node (a writer that
// moved has a log per node).
type Log struct {
	Writer, Node string
	Source       string // where it was read from
	Attempts     []contract.Attempt
}

// Input is everything a verdict is drawn from.
type Input struct {
	FencedNode string
	Fence      Fence
	Logs       []Log
	Records    []contract.Record
	ReadDone   []contract.ReadDone
	// Writers are every writer id of the run: the read-back must cover each.
	Writers []string
	// Bounds are the measured clock bounds by node name.
	Bounds map[string]time.Duration
	// Moved names the writer that must move off the fenced node (the DR
	// rehearsal's application); "" for a plain fence.
	Moved string
}

// Finding is one result of a check about one write, record or fact.
type Finding struct {
	Check    string
	Severity Severity
	Writer   string `json:",omitempty"`
	Node     string `json:",omitempty"`
	Seq      uint64 `json:",omitempty"`
	StartNs  int64  `json:",omitempty"` // the attempt's (or record's) start, writer's clock
	EndNs    int64  `json:",omitempty"` // the attempt's end, writer's clock; 0 when unknown
	Outcome  string `json:",omitempty"`
	AfterAck string `json:",omitempty"` // start minus the ack, with the bound: "+12.345 ms (±1.200 ms)"
	Detail   string
	Evidence string `json:",omitempty"` // the log line and/or record
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s %s", strings.ToUpper(string(f.Severity)), f.Check)
	if f.Writer != "" {
		s += fmt.Sprintf(": writer %s on %s seq %d", f.Writer, f.Node, f.Seq)
		if f.StartNs != 0 {
			s += " started " + fmtNs(f.StartNs)
		}
		if f.EndNs != 0 {
			s += " ended " + fmtNs(f.EndNs)
		}
		if f.Outcome != "" {
			s += " (" + f.Outcome + ")"
		}
		if f.AfterAck != "" {
			s += ", " + f.AfterAck + " after the ack"
		}
	}
	return s + ": " + f.Detail
}

// WriterFigures counts one writer's attempts on one node around the fence.
type WriterFigures struct {
	Writer, Node                string
	Before, During, After       map[string]int // outcome -> attempts (by start, with the bound: undecidable ones in During)
	RecordsRead, RecordsDamaged int
	// On the fenced node: ms from the start of the last acknowledged
	// attempt before the ack to the ack, and from the ack to the start of
	// the first refused or failed attempt while fenced (nil: none).
	LastOKBeforeAckMs, FirstFailureAfterAckMs *float64
	BoundMs                                   float64 // the clock bound used for the node (0: unknown)
	MonotonicClock                            bool    // the log has monotonic times
}

// Result is a verdict with its reasons.
type Result struct {
	Verdict  Verdict
	Findings []Finding // fail first, then undecidable, incomplete, note; by time within each
	Figures  []WriterFigures
	// Bounds are the clock bounds used, by node: measured plus steps.
	Bounds map[string]time.Duration
	// Checks: per check ID its worst severity ("" = passed).
	Checks map[string]Severity
}

// First is the first broken promise: the earliest write acknowledged after
// the ack if there is one, else the first failing finding; nil if none.
func (r *Result) First() *Finding {
	for i := range r.Findings {
		if r.Findings[i].Severity == SevFail {
			return &r.Findings[i]
		}
	}
	return nil
}

// Count returns how many findings have severity s.
func (r *Result) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// forever stands for "not lifted" and for an unknown clock bound.
const forever = math.MaxInt64 / 4

type key struct {
	writer string
	seq    uint64
}

// judging is one run of Judge.
type judging struct {
	in       Input
	bounds   map[string]time.Duration
	findings []Finding
	attempts map[key]placed
	records  map[key][]contract.Record
	unfence  int64
}

// placed is an attempt with the node it ran on.
type placed struct {
	a    contract.Attempt
	node string
}

// Judge draws the verdict.
func Judge(in Input) *Result {
	j := &judging{in: in, bounds: map[string]time.Duration{}, attempts: map[key]placed{}, records: map[key][]contract.Record{}, unfence: in.Fence.UnfenceNs}
	if j.unfence == 0 {
		j.unfence = forever
	}
	j.clocks()
	for _, l := range in.Logs {
		for _, a := range l.Attempts {
			j.attempts[key{a.Client, a.Seq}] = placed{a, nodeOf(a, l)}
		}
	}
	for _, r := range in.Records {
		k := key{r.Writer, r.Seq}
		j.records[k] = append(j.records[k], r)
	}
	j.readBack()
	j.fencedWrites()
	j.storedRecords()
	j.durability()
	j.refusals()
	j.exercised()
	j.moved()
	r := &Result{Findings: j.findings, Bounds: j.bounds, Checks: map[string]Severity{}}
	rank := map[Severity]int{SevFail: 0, SevUndecidable: 1, SevIncomplete: 2, SevNote: 3}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(rank[a.Severity]-rank[b.Severity], checkRank(a.Check)-checkRank(b.Check), cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.Writer, b.Writer), cmp.Compare(a.Seq, b.Seq))
	})
	r.Verdict = Pass
	for _, f := range r.Findings {
		if w := r.Checks[f.Check]; w == "" || rank[f.Severity] < rank[w] {
			r.Checks[f.Check] = f.Severity
		}
		switch f.Severity {
		case SevFail:
			r.Verdict = Fail
		case SevUndecidable, SevIncomplete:
			if r.Verdict == Pass {
				r.Verdict = Incomplete
			}
		}
	}
	r.Figures = j.figures()
	return r
}
