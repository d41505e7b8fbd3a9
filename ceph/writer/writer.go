// Package writer is the Ceph counterpart of refstore/writer: a librados
// client that writes in a loop and logs one JSON line per attempt, in the
// same format as refstore's writer (writer.Attempt: send and answer times,
// outcome ok, refused or error), so the write-audit oracle (audit) and the
// kind suite read both alike:
//
//   - ok: the OSD acknowledged the write;
//   - refused: EBLOCKLISTED (-108), the OSD refused a fenced client;
//   - error: timeout (-110, no answer within rados_osd_op_timeout) or any
//     other error; the write may or may not have been applied.
//
// Every write appends one record to the writer's own object
// (AuditObject(id)) in a single atomic RADOS append: the record is
// refstore's audit record (client, source address, sequence) with the time
// the write was sent. Ceph keeps no log of the writes it accepted; these
// objects are that log, written by the writes themselves: Audit reads them
// back, and an acknowledged write missing from them was lost. A write sent
// after a fence's acknowledgement that is in the log is a write the fence
// let through (one sent before is never blamed on it, whenever its answer
// came).
//
// Each record line also carries the writer contract's record (rec:
// fencing/contract, with the node and a CRC-32C), which ReadBack checks:
// `fenceproof ceph-writer read` is the contract's read mode.
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
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/refstore"
	rswriter "github.com/fenceproof/fenceproof/refstore/writer"
)

// Objects is what the writer and Audit need of a RADOS pool.
type Objects interface {
	// Append appends data to an object in one atomic operation.
	Append(name string, data []byte) error
	// ReadAll reads a whole object.
	ReadAll(name string) ([]byte, error)
	// List lists the pool's objects.
	List() ([]string, error)
}

// auditPrefix starts the name of every writer's audit object.
const auditPrefix = "fenceproof-writer."

// AuditObject is the object writer id appends its records to.
func AuditObject(id string) string { return auditPrefix + id }

// Options configures a writer.
type Options struct {
	ID       string        // client id (refstore.ValidID)
	Source   string        // the writer's address (its records' and log lines' source)
	Node     string        // the node the writer runs on (logged and recorded)
	Interval time.Duration // between writes (default 20ms)
	StartSeq uint64        // first sequence (default: unix µs, never reused by a restart)
	Log      io.Writer     // attempt lines; nil = discarded
}

// Writer runs the loop; Counts is safe while it runs.
type Writer struct {
	o     Options
	obj   Objects
	local string // Source as ip:0
	clock contract.Clock
	log   *rswriter.AttemptLog
}

// New checks the options.
func New(obj Objects, o Options) (*Writer, error) {
	if !refstore.ValidID(o.ID) {
		return nil, fmt.Errorf("writer id %q: want 1-%d characters of [A-Za-z0-9._:-]", o.ID, refstore.MaxIDLen)
	}
	a, err := netip.ParseAddr(o.Source)
	if err != nil {
		return nil, fmt.Errorf("source %q: want the writer's address", o.Source)
	}
	if o.Interval <= 0 {
		o.Interval = 20 * time.Millisecond
	}
	if o.StartSeq == 0 {
		o.StartSeq = uint64(time.Now().UnixMicro())
	}
	w := &Writer{o: o, obj: obj, local: netip.AddrPortFrom(a.Unmap(), 0).String(), clock: contract.NewClock(), log: rswriter.NewAttemptLog(o.Log)}
	return w, nil
}

// Counts returns the attempts per outcome so far.
func (w *Writer) Counts() map[string]int { return w.log.Counts() }

// Run writes until ctx ends; it returns ctx's error or a log write error.
// Each write is one blocking librados call: an attempt in flight when ctx
// ends is finished and logged.
func (w *Writer) Run(ctx context.Context) error {
	t := time.NewTicker(w.o.Interval)
	defer t.Stop()
	for seq := w.o.StartSeq; ; seq++ {
		if err := w.log.Record(w.attempt(seq)); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (w *Writer) attempt(seq uint64) rswriter.Attempt {
	a := rswriter.Attempt{Client: w.o.ID, Node: w.o.Node, Seq: seq, Local: w.local}
	a.SendNs, a.SendMonoNs = w.clock.Now()
	line, _ := json.Marshal(recordLine{
		AuditRecord: refstore.AuditRecord{Client: w.o.ID, Addr: w.local, Seq: seq, TNs: a.SendNs},
		Rec:         contract.Record{Writer: w.o.ID, Seq: seq, Node: w.o.Node, StartNs: a.SendNs}.Encode(),
	})
	err := w.obj.Append(AuditObject(w.o.ID), append(line, '\n'))
	a.TNs, a.MonoNs = w.clock.Now()
	a.Outcome, a.Reason = Classify(err)
	return a
}

// recordLine is one line of a writer's object: refstore's audit record
// (what Audit reads) and the contract's record (what ReadBack checks).
type recordLine struct {
	refstore.AuditRecord
	Rec string `json:"rec,omitempty"`
}

// Classify maps a librados error to the writer's outcome and reason.
func Classify(err error) (outcome, reason string) {
	if err == nil {
		return rswriter.OutcomeOK, ""
	}
	var ec interface{ ErrorCode() int }
	if errors.As(err, &ec) {
		switch ec.ErrorCode() {
		case -108:
			return rswriter.OutcomeRefused, "EBLOCKLISTED (-108)"
		case -110:
			return rswriter.OutcomeError, "timeout (-110)"
		}
	}
	return rswriter.OutcomeError, err.Error()
}

// Audit reads every writer's audit object of the pool: the records of all
// the writes Ceph accepted, by send time. A line that is not a record is
// reported in the warnings (a write Ceph accepted but that came back
// changed); a record twice (an append the client resent) counts once.
func Audit(obj Objects) ([]refstore.AuditRecord, []string, error) {
	names, err := obj.List()
	if err != nil {
		return nil, nil, fmt.Errorf("listing the pool: %w", err)
	}
	var out []refstore.AuditRecord
	var warns []string
	seen := map[string]bool{}
	for _, n := range names {
		if !strings.HasPrefix(n, auditPrefix) {
			continue
		}
		raw, err := obj.ReadAll(n)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", n, err)
		}
		for i, line := range bytes.Split(raw, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var r refstore.AuditRecord
			if err := json.Unmarshal(line, &r); err != nil || r.Client == "" || r.Seq == 0 || r.TNs <= 0 {
				warns = append(warns, fmt.Sprintf("%s line %d is not a record: %q", n, i+1, clip(line)))
				continue
			}
			k := fmt.Sprintf("%s/%d", r.Client, r.Seq)
			if !seen[k] {
				seen[k] = true
				out = append(out, r)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b refstore.AuditRecord) int {
		switch {
		case a.TNs < b.TNs:
			return -1
		case a.TNs > b.TNs:
			return 1
		}
		return 0
	})
	return out, warns, nil
}

func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// ReadBack reads the objects of the writers ids (the contract's read
// mode): every line as a contract.Record, checked. A line that is not
// JSON, has no contract record, or whose record disagrees with the line
// it is in, is a damaged record of that writer. A writer without an
// object has no records (not an error: it may never have written).
func ReadBack(obj Objects, ids []string) ([]contract.Record, contract.ReadDone, error) {
	var out []contract.Record
	done := contract.ReadDone{Done: true}
	for _, id := range ids {
		raw, err := obj.ReadAll(AuditObject(id))
		var ec interface{ ErrorCode() int }
		if errors.As(err, &ec) && ec.ErrorCode() == -2 {
			done.Writers = append(done.Writers, id)
			continue
		}
		if err != nil {
			return out, done, fmt.Errorf("reading %s: %w", AuditObject(id), err)
		}
		for i, line := range bytes.Split(raw, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			out = append(out, readLine(id, line, fmt.Sprintf("%s line %d", AuditObject(id), i+1)))
		}
		done.Writers = append(done.Writers, id)
	}
	done.Records = len(out)
	return out, done, nil
}

// readLine checks one line of writer id's object.
func readLine(id string, line []byte, where string) contract.Record {
	var l recordLine
	if err := json.Unmarshal(line, &l); err != nil || l.Rec == "" {
		return contract.Record{Writer: id, Seq: l.Seq, Where: where, Detail: fmt.Sprintf("not a record line: %q", clip(line))}
	}
	r, _ := contract.Decode(l.Rec)
	r.Where = where
	if r.Writer != id || r.Seq != l.Seq || r.StartNs != l.TNs {
		r.Writer, r.Seq, r.Intact = id, l.Seq, false
		r.Detail = strings.TrimPrefix(r.Detail+", the record disagrees with its line", ", ")
	}
	return r
}
