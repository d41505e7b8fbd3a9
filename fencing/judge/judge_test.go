package judge

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// A hand-made history: fenced node "b" (writer "w-b"), peer node "a"
// (writer "w-a"), times in ms from an origin, fence acked at 1000, lifted
// at 3000, clock bound 2 ms on both nodes.
const (
	t0      = int64(1_700_000_000_000_000_000)
	ackMs   = 1000
	unfMs   = 3000
	boundMs = 2
)

func at(ms float64) int64 { return t0 + int64(ms*1e6) }

// history builds an Input: writes every 50 ms from 0 to 4000 ms on both
// nodes, lasting 1 ms; b's writes from the ack until the unfence are
// refused; every accepted write is read back intact.
func history() Input {
	in := Input{FencedNode: "b", Writers: []string{"w-a", "w-b"},
		Fence:    Fence{Name: "f", CreatedNs: at(ackMs - 100), AckNs: at(ackMs), UnfenceNs: at(unfMs), UnfenceAckNs: at(unfMs + 50)},
		Bounds:   map[string]time.Duration{"a": boundMs * time.Millisecond, "b": boundMs * time.Millisecond},
		ReadDone: []contract.ReadDone{{Done: true, Writers: []string{"w-a", "w-b"}}}}
	for _, n := range []string{"a", "b"} {
		l := Log{Writer: "w-" + n, Node: n}
		for i := 0; i <= 80; i++ {
			s := float64(i*50) + 3 // never on a boundary
			a := contract.Attempt{Client: l.Writer, Node: n, Seq: uint64(1000 + i), SendNs: at(s), TNs: at(s + 1),
				SendMonoNs: int64(s * 1e6), MonoNs: int64((s + 1) * 1e6), Outcome: contract.OutcomeOK}
			if n == "b" && s > ackMs-10 && s < unfMs+20 {
				a.Outcome, a.Reason = contract.OutcomeRefused, "fenced"
			}
			l.Attempts = append(l.Attempts, a)
			if a.Outcome == contract.OutcomeOK {
				in.Records = append(in.Records, contract.Record{Writer: a.Client, Seq: a.Seq, Node: n, StartNs: a.SendNs, Intact: true})
			}
		}
		in.Logs = append(in.Logs, l)
	}
	return in
}

// attempt returns a pointer to writer w's attempt seq, and its record index (-1).
func attempt(in *Input, w string, seq uint64) (*contract.Attempt, int) {
	var a *contract.Attempt
	for i := range in.Logs {
		for j := range in.Logs[i].Attempts {
			if x := &in.Logs[i].Attempts[j]; x.Client == w && x.Seq == seq {
				a = x
			}
		}
	}
	return a, slices.IndexFunc(in.Records, func(r contract.Record) bool { return r.Writer == w && r.Seq == seq })
}

// accept turns b's attempt seq into an acknowledged write with its record.
func accept(in *Input, seq uint64) {
	a, _ := attempt(in, "w-b", seq)
	a.Outcome, a.Reason = contract.OutcomeOK, ""
	in.Records = append(in.Records, contract.Record{Writer: "w-b", Seq: seq, Node: "b", StartNs: a.SendNs, Intact: true})
}

func seqAt(ms int) uint64 { return uint64(1000 + ms/50) }

// move makes attempt a start at ms (wall and monotonic clock alike) and
// last 1 ms.
func move(a *contract.Attempt, ms float64) {
	a.SendNs, a.TNs, a.SendMonoNs, a.MonoNs = at(ms), at(ms+1), int64(ms*1e6), int64((ms+1)*1e6)
}

type expect struct {
	verdict Verdict
	check   string   // the check of the first non-note finding
	sev     Severity // its severity
	seq     uint64   // its seq (0: any)
}

func TestJudgeVerdicts(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Input)
		want   expect
	}{
		{"a fence that holds", func(*Input) {}, expect{verdict: Pass}},
		{"acknowledged writes after the ack: the first is named", func(in *Input) {
			accept(in, seqAt(1200))
			accept(in, seqAt(1100))
		}, expect{Fail, "write-after-ack", SevFail, seqAt(1100)}},
		{"an acknowledged write within the clock bound of the ack is undecidable", func(in *Input) {
			a, _ := attempt(in, "w-b", seqAt(1000))
			move(a, ackMs+1.5)
			accept(in, seqAt(1000))
		}, expect{Incomplete, "write-after-ack", SevUndecidable, seqAt(1000)}},
		{"the same write with a tighter bound fails", func(in *Input) {
			a, _ := attempt(in, "w-b", seqAt(1000))
			move(a, ackMs+1.5)
			accept(in, seqAt(1000))
			in.Bounds["b"] = time.Millisecond
		}, expect{Fail, "write-after-ack", SevFail, seqAt(1000)}},
		{"an acknowledged write started while fenced, acknowledged after the unfence, is undecidable", func(in *Input) {
			a, _ := attempt(in, "w-b", seqAt(2950))
			a.TNs, a.MonoNs = at(unfMs+10), int64((unfMs+10)*1e6)
			accept(in, seqAt(2950))
		}, expect{Incomplete, "write-after-ack", SevUndecidable, seqAt(2950)}},
		{"an acknowledged write started after the unfence request is fine", func(in *Input) {
			accept(in, seqAt(3000))
		}, expect{verdict: Pass}},
		{"an acknowledged write that is not on the storage is lost", func(in *Input) {
			_, i := attempt(in, "w-a", seqAt(2000))
			in.Records = slices.Delete(in.Records, i, i+1)
		}, expect{Fail, "ack-durable", SevFail, seqAt(2000)}},
		{"an acknowledged write whose record is damaged", func(in *Input) {
			_, i := attempt(in, "w-a", seqAt(500))
			in.Records[i].Intact, in.Records[i].Detail = false, "checksum mismatch"
		}, expect{Fail, "ack-durable", SevFail, seqAt(500)}},
		{"an acknowledged write whose slot holds another write's record", func(in *Input) {
			_, i := attempt(in, "w-a", seqAt(500))
			in.Records[i].StartNs += 7
		}, expect{Fail, "ack-durable", SevFail, seqAt(500)}},
		{"a damaged copy beside an intact one is not a loss", func(in *Input) {
			_, i := attempt(in, "w-a", seqAt(500))
			in.Records = append(in.Records, contract.Record{Writer: "w-a", Seq: seqAt(500), Detail: "torn"})
			_ = i
		}, expect{verdict: Pass}},
		{"a write the storage refused is on the storage", func(in *Input) {
			in.Records = append(in.Records, contract.Record{Writer: "w-b", Seq: seqAt(1500), Node: "b", StartNs: at(1503), Intact: true})
		}, expect{Fail, "refused-stored", SevFail, seqAt(1500)}},
		{"a write that failed with an error while fenced is on the storage", func(in *Input) {
			a, _ := attempt(in, "w-b", seqAt(1500))
			a.Outcome, a.Reason = contract.OutcomeError, "timeout"
			in.Records = append(in.Records, contract.Record{Writer: "w-b", Seq: seqAt(1500), Node: "b", StartNs: a.SendNs, Intact: true})
		}, expect{Fail, "record-after-ack", SevFail, seqAt(1500)}},
		{"a record from the fenced node without a log line, started while fenced, is undecidable", func(in *Input) {
			in.Records = append(in.Records, contract.Record{Writer: "w-b", Seq: 9999, Node: "b", StartNs: at(1777), Intact: true})
		}, expect{Incomplete, "record-after-ack", SevUndecidable, 9999}},
		{"a writer on the unfenced node refused", func(in *Input) {
			a, i := attempt(in, "w-a", seqAt(1500))
			a.Outcome = contract.OutcomeRefused
			in.Records = slices.Delete(in.Records, i, i+1)
		}, expect{Fail, "refused-unfenced", SevFail, seqAt(1500)}},
		{"the fenced node refused before its fence was created", func(in *Input) {
			a, i := attempt(in, "w-b", seqAt(300))
			a.Outcome = contract.OutcomeRefused
			in.Records = slices.Delete(in.Records, i, i+1)
		}, expect{Fail, "refused-unfenced", SevFail, seqAt(300)}},
		{"no attempt of the fenced node while fenced: not exercised", func(in *Input) {
			l := &in.Logs[slices.IndexFunc(in.Logs, func(l Log) bool { return l.Node == "b" })]
			l.Attempts = slices.DeleteFunc(l.Attempts, func(a contract.Attempt) bool { return a.SendNs > at(ackMs-10) })
		}, expect{Incomplete, "fence-exercised", SevIncomplete, 0}},
		{"no acknowledged write of the fenced node before the fence: not exercised", func(in *Input) {
			l := &in.Logs[slices.IndexFunc(in.Logs, func(l Log) bool { return l.Node == "b" })]
			l.Attempts = slices.DeleteFunc(l.Attempts, func(a contract.Attempt) bool { return a.SendNs < at(ackMs) })
		}, expect{Incomplete, "fence-exercised", SevIncomplete, 0}},
		{"a node without a clock bound: its writes cannot be placed", func(in *Input) {
			delete(in.Bounds, "b")
		}, expect{Incomplete, "clock-bound", SevIncomplete, 0}},
		{"a wall-clock step widens the bound: a write that looks before the ack becomes undecidable", func(in *Input) {
			// The write truly starts 3 ms after the ack, but b's wall clock
			// was stepped 5 ms back at 600 ms: stamped 2 ms before the ack,
			// it would pass with the measured 2 ms bound alone.
			accept(in, seqAt(1000))
			l := &in.Logs[slices.IndexFunc(in.Logs, func(l Log) bool { return l.Node == "b" })]
			for i := range l.Attempts {
				if l.Attempts[i].SendNs > at(600) {
					l.Attempts[i].SendNs -= 5e6
					l.Attempts[i].TNs -= 5e6
				}
			}
			for i := range in.Records {
				if in.Records[i].Writer == "w-b" && in.Records[i].StartNs > at(600) {
					in.Records[i].StartNs -= 5e6
				}
			}
		}, expect{Incomplete, "write-after-ack", SevUndecidable, seqAt(1000)}},
		{"the read-back did not cover a writer", func(in *Input) {
			in.ReadDone = []contract.ReadDone{{Done: true, Writers: []string{"w-a"}}}
		}, expect{Incomplete, "read-back", SevIncomplete, 0}},
		{"rehearsal: the application never wrote from another node", func(in *Input) {
			in.Moved = "w-b"
		}, expect{Fail, "workload-moved", SevFail, 0}},
		{"rehearsal: the application moved", func(in *Input) {
			in.Moved = "w-b"
			l := Log{Writer: "w-b", Node: "a", Attempts: []contract.Attempt{{Client: "w-b", Node: "a", Seq: 5000, SendNs: at(2000), TNs: at(2001), Outcome: contract.OutcomeOK}}}
			in.Logs = append(in.Logs, l)
			in.Records = append(in.Records, contract.Record{Writer: "w-b", Seq: 5000, Node: "a", StartNs: at(2000), Intact: true})
		}, expect{verdict: Pass}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := history()
			c.mutate(&in)
			r := Judge(in)
			var first *Finding
			for i := range r.Findings {
				if r.Findings[i].Severity != SevNote {
					first = &r.Findings[i]
					break
				}
			}
			if r.Verdict != c.want.verdict {
				t.Fatalf("verdict %s, want %s; findings:\n%s", r.Verdict, c.want.verdict, dump(r))
			}
			if c.want.check == "" {
				if first != nil {
					t.Fatalf("unexpected finding %s", first)
				}
				return
			}
			if first == nil || first.Check != c.want.check || first.Severity != c.want.sev || c.want.seq != 0 && first.Seq != c.want.seq {
				t.Fatalf("first finding %v, want %s %s seq %d; all:\n%s", first, c.want.sev, c.want.check, c.want.seq, dump(r))
			}
			if c.want.sev == SevFail && (r.First() == nil || r.First().Seq != first.Seq) {
				t.Errorf("First() = %v, want the first failing finding %v", r.First(), first)
			}
		})
	}
}

func dump(r *Result) string {
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}

// TestFiguresCountAroundTheFence: the counts the reports show.
func TestFiguresCountAroundTheFence(t *testing.T) {
	r := Judge(history())
	var b *WriterFigures
	for i := range r.Figures {
		if r.Figures[i].Writer == "w-b" {
			b = &r.Figures[i]
		}
	}
	if b == nil || b.Before[contract.OutcomeOK] == 0 || b.During[contract.OutcomeRefused] == 0 || b.After[contract.OutcomeOK] == 0 {
		t.Fatalf("figures of w-b: %+v", b)
	}
	if b.LastOKBeforeAckMs == nil || *b.LastOKBeforeAckMs != 47 || b.FirstFailureAfterAckMs == nil || *b.FirstFailureAfterAckMs != 3 {
		t.Errorf("last ok before the ack / first failure after it: %v / %v ms, want 47 / 3", b.LastOKBeforeAckMs, b.FirstFailureAfterAckMs)
	}
	if b.RecordsRead != b.Before[contract.OutcomeOK]+b.After[contract.OutcomeOK] || b.BoundMs != boundMs || !b.MonotonicClock {
		t.Errorf("figures %+v", *b)
	}
}
