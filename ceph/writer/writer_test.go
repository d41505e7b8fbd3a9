package writer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

type errno int

func (e errno) Error() string  { return fmt.Sprintf("ret=%d", int(e)) }
func (e errno) ErrorCode() int { return int(e) }

// pool is an in-memory pool that fails writes with fail while it is set.
type pool struct {
	mu   sync.Mutex
	objs map[string][]byte
	fail error
}

func (p *pool) WriteFull(name string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail != nil {
		return p.fail
	}
	p.objs[name] = append([]byte(nil), data...)
	return nil
}

func (p *pool) Read(name string, max int) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.objs[name]
	if !ok {
		return nil, errno(-2)
	}
	return b[:min(len(b), max)], nil
}

// TestWriterLogsEveryAttemptAndReadBackFindsLosses: every attempt is one
// JSON line with its result (-108, timeout); ReadAll finds an object that
// was acknowledged and then lost or changed.
func TestWriterLogsEveryAttemptAndReadBackFindsLosses(t *testing.T) {
	p := &pool{objs: map[string][]byte{}}
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
	var atts []Attempt
	for _, l := range bytes.Split(bytes.TrimSpace(log.Bytes()), []byte("\n")) {
		var a Attempt
		if err := json.Unmarshal(l, &a); err != nil {
			t.Fatal(err)
		}
		atts = append(atts, a)
	}
	c := w.Counts()
	if c[ResultOK] == 0 || c[ResultBlocklisted] == 0 || c[ResultTimeout] == 0 || len(atts) != c[ResultOK]+c[ResultBlocklisted]+c[ResultTimeout] {
		t.Fatalf("counts %v, %d lines", c, len(atts))
	}
	var ok []Attempt
	for _, a := range atts {
		if a.Source != "10.0.0.4" || a.TNs < a.SendNs || a.Object != ObjectName("w1", a.Seq) {
			t.Fatalf("attempt %+v", a)
		}
		if a.Result == ResultOK {
			ok = append(ok, a)
		}
	}
	delete(p.objs, ok[0].Object)
	p.objs[ok[1].Object] = []byte("changed")
	got := map[string]int{}
	for _, rb := range ReadAll(p, atts, 0) {
		got[rb.Result]++
	}
	if got[ReadMissing] != 1 || got[ReadCorrupt] != 1 || got[ReadOK] != len(ok)-2 {
		t.Fatalf("read-back %v of %d acknowledged", got, len(ok))
	}
}
