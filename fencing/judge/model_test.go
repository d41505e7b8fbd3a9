package judge

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

var seedFlag = flag.Uint64("judge.seed", 0, "replay one seed of TestJudgeAgainstGroundTruth")

// world is a generated run with its ground truth: true times (fenceproof's
// clock), each node's true clock offset (within the bound the judge is
// given), when the storage really enforced and lifted the fence, and which
// acknowledged writes truly started after the ack.
type world struct {
	in        Input
	offset    map[string]int64
	enforce   int64 // the storage refuses the fenced node from here...
	lift      int64 // ...until here
	truth     map[key]truthWrite
	violation []key // acknowledged writes of the fenced node that truly started after the ack and ended before the unfence request
}

type truthWrite struct {
	start, end int64 // true times
	accepted   bool
	node       string
}

// generate builds a run: writers on "b" (fenced) and "a", each attempt
// taken by the storage at a random point of its span and accepted unless
// the fenced node's source is refused then; a correct storage enforces
// before the ack, a faulty one up to 2 s after it.
func generate(rng *rand.Rand, faulty bool) world {
	ms := int64(time.Millisecond)
	bound := rng.Int64N(20*ms) + 1
	w := world{offset: map[string]int64{}, truth: map[key]truthWrite{}}
	created := t0 + 2000*ms + rng.Int64N(1000*ms)
	ack := created + 10*ms + rng.Int64N(500*ms)
	w.enforce = created + rng.Int64N(ack-created+1) // at the latest at the ack
	if faulty {
		w.enforce = ack + 1 + rng.Int64N(2000*ms)
	}
	unfence := ack + 1000*ms + rng.Int64N(4000*ms)
	w.lift = unfence + rng.Int64N(200*ms)
	w.in = Input{FencedNode: "b", Writers: []string{"w-a", "w-b"},
		Fence:    Fence{CreatedNs: created, AckNs: ack, UnfenceNs: unfence, UnfenceAckNs: w.lift + rng.Int64N(100*ms)},
		Bounds:   map[string]time.Duration{},
		ReadDone: []contract.ReadDone{{Done: true, Writers: []string{"w-a", "w-b"}}}}
	interval := 5*ms + rng.Int64N(40*ms)
	for _, n := range []string{"a", "b"} {
		w.offset[n] = rng.Int64N(2*bound+1) - bound
		w.in.Bounds[n] = time.Duration(bound)
		l := Log{Writer: "w-" + n, Node: n}
		base := t0 + rng.Int64N(ms)
		for seq, t := uint64(1), t0+rng.Int64N(interval); t < unfence+3000*ms; seq, t = seq+1, t+interval+rng.Int64N(ms) {
			end := t + 100_000 + rng.Int64N(10*ms)
			took := t + rng.Int64N(end-t+1)
			accepted := n != "b" || took < w.enforce || took >= w.lift
			a := contract.Attempt{Client: l.Writer, Node: n, Seq: seq, SendNs: t + w.offset[n], TNs: end + w.offset[n],
				SendMonoNs: t - base, MonoNs: end - base, Outcome: contract.OutcomeOK}
			if !accepted {
				a.Outcome = contract.OutcomeRefused
			}
			l.Attempts = append(l.Attempts, a)
			k := key{l.Writer, seq}
			w.truth[k] = truthWrite{t, end, accepted, n}
			if accepted {
				w.in.Records = append(w.in.Records, contract.Record{Writer: l.Writer, Seq: seq, Node: n, StartNs: a.SendNs, Intact: true})
				if n == "b" && t > ack && end < unfence {
					w.violation = append(w.violation, k)
				}
			}
		}
		w.in.Logs = append(w.in.Logs, l)
	}
	return w
}

// TestJudgeAgainstGroundTruth judges generated runs, correct and faulty,
// against what truly happened: a correct storage is never FAILed; every
// write the judge calls a violation truly started after the ack; every
// undecidable write truly lies within twice the bound of the ack or
// straddles the unfence; every true violation clear of the bound is
// found, and First names the earliest of them. Seeded: the seed of a
// failure is printed; -judge.seed=N replays it.
func TestJudgeAgainstGroundTruth(t *testing.T) {
	seeds := make([]uint64, 200)
	for i := range seeds {
		seeds[i] = uint64(i) + 1
	}
	if *seedFlag != 0 {
		seeds = []uint64{*seedFlag}
	}
	verdicts := map[string]int{}
	for _, seed := range seeds {
		faulty := seed%2 == 0
		w := generate(rand.New(rand.NewPCG(seed, 42)), faulty)
		r := Judge(w.in)
		verdicts[fmt.Sprintf("faulty=%v %s", faulty, r.Verdict)]++
		if err := w.check(r); err != nil {
			t.Fatalf("seed %d (faulty %v, -judge.seed=%d replays it): %v\nfindings:\n%s", seed, faulty, seed, err, dump(r))
		}
	}
	t.Logf("verdicts over %d runs: %v", len(seeds), verdicts)
	if *seedFlag == 0 && (verdicts["faulty=false PASS"] == 0 || verdicts["faulty=true FAIL"] == 0) {
		t.Errorf("the generator made no passing correct run or no failing faulty one: %v", verdicts)
	}
}

func (w world) check(r *Result) error {
	b := int64(w.in.Bounds["b"])
	ack, unf := w.in.Fence.AckNs, w.in.Fence.UnfenceNs
	if len(w.violation) == 0 && r.Verdict == Fail {
		return fmt.Errorf("FAIL without a true violation")
	}
	found := map[key]bool{}
	for _, f := range r.Findings {
		k := key{f.Writer, f.Seq}
		tw := w.truth[k]
		switch {
		case f.Check == "write-after-ack" && f.Severity == SevFail:
			if !(tw.start > ack && tw.accepted) {
				return fmt.Errorf("blamed seq %d, which truly started %+.3f ms from the ack (accepted %v)", f.Seq, ms(tw.start-ack), tw.accepted)
			}
			found[k] = true
		case f.Check == "write-after-ack" && f.Severity == SevUndecidable:
			near := abs(tw.start-ack) <= 2*b || tw.end >= unf-2*b
			if !near {
				return fmt.Errorf("undecidable seq %d truly started %+.3f ms from the ack and ended %+.3f ms from the unfence, bound %.3f ms", f.Seq, ms(tw.start-ack), ms(tw.end-unf), ms(b))
			}
		case f.Severity == SevFail || f.Severity == SevIncomplete:
			return fmt.Errorf("unexpected finding %s", f)
		}
	}
	var earliest *key
	for _, k := range w.violation {
		tw := w.truth[k]
		clear := tw.start-ack > 2*b && unf-tw.end > 2*b
		if clear && !found[k] {
			return fmt.Errorf("missed the violation seq %d (true start %+.3f ms after the ack, bound %.3f ms)", k.seq, ms(tw.start-ack), ms(b))
		}
		if found[k] && (earliest == nil || tw.start < w.truth[*earliest].start) {
			earliest = &k
		}
	}
	if earliest != nil && (r.First() == nil || r.First().Seq != earliest.seq) {
		return fmt.Errorf("First() = %v, want seq %d", r.First(), earliest.seq)
	}
	return nil
}
