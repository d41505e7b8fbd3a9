package report

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/fencing/judge"
)

// TestReportsShowTheFirstBrokenPromise: a run whose fenced writer had a
// write acknowledged after the ack: every report names it, the timeline
// circles it and labels it in the close-up, JUnit fails its check (and no
// other), and the evidence written reads back to the same verdict.
func TestReportsShowTheFirstBrokenPromise(t *testing.T) {
	const s = int64(1_700_000_000_000_000_000)
	ms := func(v int64) int64 { return s + v*1e6 }
	in := judge.Input{FencedNode: "b", Writers: []string{"w"},
		Fence:    judge.Fence{CreatedNs: ms(900), AckNs: ms(1000), UnfenceNs: ms(3000), UnfenceAckNs: ms(3100)},
		Bounds:   map[string]time.Duration{"b": time.Millisecond},
		ReadDone: []contract.ReadDone{{Done: true, Writers: []string{"w"}}}}
	l := judge.Log{Writer: "w", Node: "b"}
	for i := int64(0); i < 80; i++ {
		a := contract.Attempt{Client: "w", Node: "b", Seq: uint64(100 + i), SendNs: ms(i*50 + 3), TNs: ms(i*50 + 4), SendMonoNs: (i*50 + 3) * 1e6, MonoNs: (i*50 + 4) * 1e6, Outcome: contract.OutcomeOK}
		if a.SendNs > ms(1000) && a.SendNs < ms(3000) && a.Seq != 123 {
			a.Outcome = contract.OutcomeRefused
		}
		l.Attempts = append(l.Attempts, a)
		if a.Outcome == contract.OutcomeOK {
			in.Records = append(in.Records, contract.Record{Writer: "w", Seq: a.Seq, Node: "b", StartNs: a.SendNs, Intact: true})
		}
	}
	in.Logs = []judge.Log{l}
	res := judge.Judge(in)
	r := &Run{Status: string(res.Verdict), Input: in, Result: res,
		Meta:  Meta{Name: "t", Node: "b", StartNs: ms(0), EndNs: ms(4000)},
		Steps: []Step{{AtNs: ms(900), Kind: StepFence, What: "fence"}, {AtNs: ms(1000), Kind: StepAck, What: "ack"}, {AtNs: ms(3000), Kind: StepUnfence, What: "unfence"}}}
	if r.Status != "FAIL" || res.First() == nil || res.First().Seq != 123 {
		t.Fatalf("verdict %s, first %v", r.Status, res.First())
	}
	dir := t.TempDir()
	if _, err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, f := range []string{"report.md", "report.html"} {
		if !strings.Contains(read(f), "seq 123") || !strings.Contains(read(f), "First broken promise") {
			t.Errorf("%s does not name the first broken promise", f)
		}
	}
	svg := read("timeline.svg")
	if strings.Count(svg, "<circle") != 2 || !strings.Contains(svg, "seq 123, +153.000 ms") || xml.Unmarshal([]byte(svg), new(struct{})) != nil {
		t.Errorf("timeline.svg: want the write circled in both panels and labelled in the close-up, well-formed")
	}
	var j junitSuites
	if err := xml.Unmarshal([]byte(read("junit.xml")), &j); err != nil || j.Failures != 1 || j.Errors != 0 {
		t.Fatalf("junit: %+v %v", j, err)
	}
	for _, c := range j.Suites[0].Cases {
		if (c.Failure != nil) != strings.HasPrefix(c.Name, "write-after-ack") {
			t.Errorf("junit case %s: failure %v", c.Name, c.Failure)
		}
	}
	back, err := ReadInput(dir)
	if err != nil || judge.Judge(back).First().Seq != 123 {
		t.Errorf("the evidence does not replay: %v", err)
	}
	if sum := Summary(r); !strings.Contains(sum, "verdict: FAIL") || !strings.Contains(sum, "seq 123") {
		t.Errorf("summary %q", sum)
	}
}
