package writer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rswriter "github.com/fenceproof/fenceproof/refstore/writer"
)

type errno int

func (e errno) Error() string  { return fmt.Sprintf("ret=%d", int(e)) }
func (e errno) ErrorCode() int { return int(e) }

// pool is an in-memory pool whose appends fail with fail while it is set.
type pool struct {
	mu   sync.Mutex
	objs map[string][]byte
	fail error
}

func (p *pool) Append(name string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	p.objs[name] = append(p.objs[name], data...)
	return nil
}

func (p *pool) ReadAll(name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.objs[name]
	if !ok {
		return nil, errno(-2)
	}
	return slices.Clone(b), nil
}

func (p *pool) List() ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for k := range p.objs {
		out = append(out, k)
	}
	return out, nil
}

// TestWriterLogsEveryAttemptAndAuditHasTheAccepted: each attempt is one
// line in refstore's writer format (-108 refused, -110 a timeout error);
// the audit objects hold exactly the acknowledged writes, by send time;
// a damaged record is a warning.
func TestWriterLogsEveryAttemptAndAuditHasTheAccepted(t *testing.T) {
	p := &pool{objs: map[string][]byte{"unrelated": []byte("x")}}
	var log bytes.Buffer
	w, err := New(p, Options{ID: "w1", Source: "10.0.0.4", Interval: time.Millisecond, StartSeq: 1, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	for _, fail := range []error{nil, errno(-108), errno(-110), nil} {
		p.mu.Lock()
		p.fail = fail
		p.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	var atts []rswriter.Attempt
	for _, l := range bytes.Split(bytes.TrimSpace(log.Bytes()), []byte("\n")) {
		var a rswriter.Attempt
		if err := json.Unmarshal(l, &a); err != nil {
			t.Fatal(err)
		}
		atts = append(atts, a)
	}
	c := w.Counts()
	if c[rswriter.OutcomeOK] == 0 || c[rswriter.OutcomeRefused] == 0 || c[rswriter.OutcomeError] == 0 {
		t.Fatalf("counts %v", c)
	}
	var okSeqs []uint64
	for _, a := range atts {
		if a.Local != "10.0.0.4:0" || a.TNs < a.SendNs {
			t.Fatalf("attempt %+v", a)
		}
		switch a.Outcome {
		case rswriter.OutcomeOK:
			okSeqs = append(okSeqs, a.Seq)
		case rswriter.OutcomeRefused:
			if a.Reason != "EBLOCKLISTED (-108)" {
				t.Errorf("refusal reason %q", a.Reason)
			}
		default:
			if a.Reason != "timeout (-110)" {
				t.Errorf("error reason %q", a.Reason)
			}
		}
	}
	back, rd, err := ReadBack(p, []string{"w1", "w2"})
	if err != nil || !rd.Done || len(rd.Writers) != 2 || len(back) != len(okSeqs) {
		t.Fatalf("ReadBack: %d records of %d acknowledged, %+v, %v", len(back), len(okSeqs), rd, err)
	}
	for i, r := range back {
		if !r.Intact || r.Seq != okSeqs[i] || r.Writer != "w1" {
			t.Fatalf("read back %+v", r)
		}
	}
	p.objs[AuditObject("w1")] = append(p.objs[AuditObject("w1")], []byte("garbage\n")...)
	if back, _, _ := ReadBack(p, []string{"w1"}); len(back) != len(okSeqs)+1 || back[len(okSeqs)].Intact {
		t.Errorf("a damaged line read back as %+v", back[len(back)-1])
	}
	recs, warns, err := Audit(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, r := range recs {
		got = append(got, r.Seq)
		if r.Addr != "10.0.0.4:0" || r.Client != "w1" {
			t.Fatalf("record %+v", r)
		}
	}
	if !slices.Equal(got, okSeqs) {
		t.Errorf("audit %v, acknowledged %v", got, okSeqs)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "garbage") {
		t.Errorf("warnings %v", warns)
	}
}
