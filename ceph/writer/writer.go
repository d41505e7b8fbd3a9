// Package writer is the Ceph counterpart of refstore/writer: a client that
// writes one new RADOS object per interval (name "<id>.<seq>", content
// derived from the sequence) and logs one JSON line (Attempt) per write
// with its send and answer times and its result: ok, -108 (EBLOCKLISTED:
// the OSD refused a fenced client), timeout (-110: no answer within the
// op timeout) or error. ReadBack reads every acknowledged object back, so
// the oracle (audit) can tell an acknowledged write that was lost.
//
// The package is pure Go over Objects; ceph/librados implements Objects
// with go-ceph (build tag ceph), `fenceproof ceph-writer` runs it.
package writer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Results of an attempt.
const (
	ResultOK          = "ok"
	ResultBlocklisted = "-108" // EBLOCKLISTED, from the OSD (or librados, once it knows)
	ResultTimeout     = "timeout"
	ResultError       = "error"
)

// Attempt is one line of the writer's log.
type Attempt struct {
	Client string `json:"client"`
	Seq    uint64 `json:"seq"`
	Object string `json:"object"`
	Source string `json:"source,omitempty"` // the address the writer connects from
	SendNs int64  `json:"send_ns"`          // unix ns just before the write was handed to librados
	TNs    int64  `json:"t_ns"`             // unix ns when its answer came
	Result string `json:"result"`
	Errno  int    `json:"errno,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Objects is what the writer needs of a RADOS pool.
type Objects interface {
	WriteFull(name string, data []byte) error
	Read(name string, max int) ([]byte, error)
}

// Options configures a writer.
type Options struct {
	ID       string        // client id: the objects' name prefix (default "writer")
	Source   string        // the writer's address, recorded in every line
	Interval time.Duration // between writes (default 20ms)
	StartSeq uint64        // first sequence (default: unix µs, never reused by a restart)
	Payload  int           // bytes per object (default 64)
	Log      io.Writer     // attempt lines; nil = discarded
}

// Writer runs the loop; Counts is safe while it runs.
type Writer struct {
	o   Options
	obj Objects
	mu  sync.Mutex
	cnt map[string]int
	enc *json.Encoder
}

// New checks the options.
func New(obj Objects, o Options) (*Writer, error) {
	if o.ID == "" {
		o.ID = "writer"
	}
	for _, r := range o.ID {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return nil, fmt.Errorf("writer id %q: want letters, digits, - and _", o.ID)
		}
	}
	if o.Interval <= 0 {
		o.Interval = 20 * time.Millisecond
	}
	if o.Payload <= 0 {
		o.Payload = 64
	}
	if o.StartSeq == 0 {
		o.StartSeq = uint64(time.Now().UnixMicro())
	}
	w := &Writer{o: o, obj: obj, cnt: map[string]int{}}
	if o.Log != nil {
		w.enc = json.NewEncoder(o.Log)
	}
	return w, nil
}

// Counts returns the attempts per result so far.
func (w *Writer) Counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.cnt))
	for k, v := range w.cnt {
		out[k] = v
	}
	return out
}

// Run writes until ctx ends; it returns ctx's error or a log write error.
// Each write is one blocking librados call: an attempt in flight when ctx
// ends is finished and logged.
func (w *Writer) Run(ctx context.Context) error {
	t := time.NewTicker(w.o.Interval)
	defer t.Stop()
	for seq := w.o.StartSeq; ; seq++ {
		if err := w.record(w.attempt(seq)); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// ObjectName is the object of a writer's sequence.
func ObjectName(id string, seq uint64) string { return fmt.Sprintf("%s.%d", id, seq) }

func (w *Writer) attempt(seq uint64) Attempt {
	a := Attempt{Client: w.o.ID, Seq: seq, Object: ObjectName(w.o.ID, seq), Source: w.o.Source, SendNs: time.Now().UnixNano()}
	err := w.obj.WriteFull(a.Object, Payload(seq, w.o.Payload))
	a.TNs = time.Now().UnixNano()
	a.Result, a.Errno = Classify(err)
	if err != nil {
		a.Reason = err.Error()
	}
	return a
}

// Classify maps a librados error to a result and its errno.
func Classify(err error) (string, int) {
	if err == nil {
		return ResultOK, 0
	}
	var ec interface{ ErrorCode() int }
	if !errors.As(err, &ec) {
		return ResultError, 0
	}
	switch n := ec.ErrorCode(); n {
	case -108:
		return ResultBlocklisted, n
	case -110:
		return ResultTimeout, n
	default:
		return ResultError, n
	}
}

func (w *Writer) record(a Attempt) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cnt[a.Result]++
	if w.enc == nil {
		return nil
	}
	if err := w.enc.Encode(a); err != nil {
		return fmt.Errorf("writer log: %w", err)
	}
	return nil
}

// Payload is n bytes derived from seq, so an object's content is checkable
// without storing it.
func Payload(seq uint64, n int) []byte {
	s := []byte(fmt.Sprintf("%016x", seq))
	out := make([]byte, 0, n)
	for len(out) < n {
		out = append(out, s...)
	}
	return out[:n]
}

// Read-back results.
const (
	ReadOK      = "ok"
	ReadMissing = "missing"
	ReadCorrupt = "corrupt"
	ReadError   = "error"
)

// ReadBack is one acknowledged object read back after the run.
type ReadBack struct {
	Client string `json:"client"`
	Seq    uint64 `json:"seq"`
	Object string `json:"object"`
	Result string `json:"result"` // ok | missing | corrupt | error
	Reason string `json:"reason,omitempty"`
}

// ReadAll reads back the object of every acknowledged attempt (with a
// client that is not fenced) and checks its content; payload is the
// writers' Options.Payload (default 64).
func ReadAll(obj Objects, attempts []Attempt, payload int) []ReadBack {
	if payload <= 0 {
		payload = 64
	}
	var out []ReadBack
	for _, a := range attempts {
		if a.Result != ResultOK {
			continue
		}
		rb := ReadBack{Client: a.Client, Seq: a.Seq, Object: a.Object, Result: ReadOK}
		got, err := obj.Read(a.Object, payload+1)
		switch {
		case err != nil && isNotFound(err):
			rb.Result, rb.Reason = ReadMissing, err.Error()
		case err != nil:
			rb.Result, rb.Reason = ReadError, err.Error()
		case !bytes.Equal(got, Payload(a.Seq, payload)):
			rb.Result, rb.Reason = ReadCorrupt, fmt.Sprintf("%d bytes %q", len(got), clip(got))
		}
		out = append(out, rb)
	}
	return out
}

func isNotFound(err error) bool {
	var ec interface{ ErrorCode() int }
	return errors.As(err, &ec) && ec.ErrorCode() == -2
}

func clip(b []byte) []byte {
	if len(b) > 32 {
		return b[:32]
	}
	return b
}
