// Package contract is the writer contract of `fenceproof fencing`: what a
// writer workload does so that a fence can be judged from its data alone.
// fencing/README.md states it for people; this package is the one
// declaration the writers (refstore/writer, ceph/writer, fencing/pathwriter)
// and the judge (fencing/judge) share.
//
//   - Every write carries one numbered record (Record): writer id, sequence
//     number, the node it was written from and the wall time its attempt
//     started, protected by a CRC-32C, so that a reader on another node can
//     tell a record that is present and intact from one that is missing or
//     damaged.
//   - Every attempt is one JSON line (Attempt) in the writer's
//     acknowledgement log, written once its outcome is known: ok (the
//     storage acknowledged it), refused (the storage said no), error
//     (anything else; the write may or may not have landed), with the wall
//     and monotonic clocks at its start and end.
//   - In read mode (EnvMode=read) the writer prints every record of the
//     writers named in EnvRead as one JSON line each (Record), then one
//     ReadDone line, and exits 0.
package contract

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"
)

// The environment a writer container gets from `fenceproof fencing`.
const (
	EnvWriter   = "FENCEPROOF_WRITER"   // the writer id (its StatefulSet's name: the same wherever it runs)
	EnvNode     = "FENCEPROOF_NODE"     // the node it runs on (downward API spec.nodeName)
	EnvMode     = "FENCEPROOF_MODE"     // ModeWrite (default) or ModeRead
	EnvRead     = "FENCEPROOF_READ"     // read mode: the writer ids to read back, comma-separated
	EnvLogDir   = "FENCEPROOF_LOG_DIR"  // a directory on the node (hostPath): append every Attempt line to <dir>/<writer>.log too
	EnvInterval = "FENCEPROOF_INTERVAL" // the pause between two writes (a Go duration, e.g. 20ms)
)

// Modes of a writer container.
const (
	ModeWrite = "write"
	ModeRead  = "read"
)

// Outcomes of an attempt.
const (
	OutcomeOK      = "ok"      // the storage acknowledged the write
	OutcomeRefused = "refused" // the storage refused it (a fence): it is not stored
	OutcomeError   = "error"   // anything else (timeout, I/O error): it may or may not be stored
)

// Attempt is one line of a writer's acknowledgement log. The field names
// are those of fenceproof's first writer (refstore/writer), which the
// write-audit oracle (audit) reads too.
type Attempt struct {
	Client     string `json:"client"`                 // the writer id
	Node       string `json:"node,omitempty"`         // the node the writer ran on
	Seq        uint64 `json:"seq"`                    // the record's number: strictly increasing, never reused by a writer id
	Local      string `json:"local,omitempty"`        // the local ip:port of the connection, when known
	SendNs     int64  `json:"send_ns"`                // wall clock (unix ns) when the attempt started
	TNs        int64  `json:"t_ns"`                   // wall clock (unix ns) when its outcome was known
	SendMonoNs int64  `json:"send_mono_ns,omitempty"` // monotonic clock (ns since the writer started) at the start
	MonoNs     int64  `json:"mono_ns,omitempty"`      // monotonic clock at the end
	Outcome    string `json:"outcome"`                // OutcomeOK, OutcomeRefused or OutcomeError
	Reason     string `json:"reason,omitempty"`       // refusal reason or error text
	Server     int64  `json:"server_ns,omitempty"`    // the storage's own time of the write, when it tells
}

// Clock reads the wall clock and a monotonic clock that counts from the
// writer's start: a wall clock that is stepped while the writer runs shows
// as a difference between the two (fencing/judge checks it).
type Clock struct{ base time.Time }

// NewClock starts a Clock.
func NewClock() Clock { return Clock{base: time.Now()} }

// Now returns the wall clock in unix ns and the monotonic ns since the start.
func (c Clock) Now() (wallNs, monoNs int64) {
	t := time.Now()
	return t.UnixNano(), int64(t.Sub(c.base))
}

// Record is a numbered record as a reader finds it on the storage (one
// JSON line in read mode).
type Record struct {
	Writer  string `json:"writer"`
	Seq     uint64 `json:"seq"`
	Node    string `json:"node,omitempty"`     // the node it was written from
	StartNs int64  `json:"start_ns,omitempty"` // the wall time its attempt started (the writer's clock)
	// Intact: the record's checksum matches. A damaged record keeps what
	// could be read of it (at least the writer and, where the storage's
	// layout tells, the sequence) and says why in Detail.
	Intact bool   `json:"intact"`
	Detail string `json:"detail,omitempty"`
	Where  string `json:"where,omitempty"` // where it was found (object, file and offset)
}

// ReadDone is the last line of a read: which writers were read completely.
type ReadDone struct {
	Done    bool     `json:"read_done"`
	Writers []string `json:"writers"`
	Records int      `json:"records"`
}

// recordTag starts every encoded record.
const recordTag = "fpr1"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC-32C the contract uses.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Encode is the record as a line of text without spaces or newlines,
// "fpr1|writer|seq|node|start_ns|crc" (crc: CRC-32C of everything before
// it, 8 hex digits): what a writer stores.
func (r Record) Encode() string {
	head := fmt.Sprintf("%s|%s|%d|%s|%d|", recordTag, r.Writer, r.Seq, r.Node, r.StartNs)
	return head + fmt.Sprintf("%08x", Checksum([]byte(head)))
}

// ValidName reports whether s can be a writer id or node name in a record:
// 1-253 characters of [A-Za-z0-9._:-].
func ValidName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// Decode reads an encoded record. A record whose checksum does not match,
// or that is not one at all, comes back with Intact false, the fields that
// could be read, and why in Detail; err is set only when not even the
// writer could be read.
func Decode(s string) (Record, error) {
	f := strings.Split(s, "|")
	if len(f) != 6 || f[0] != recordTag {
		return Record{Detail: fmt.Sprintf("not a record: %q", clip(s))}, fmt.Errorf("not a record: %q", clip(s))
	}
	r := Record{Writer: f[1], Node: f[3]}
	var errs []string
	var err error
	if r.Seq, err = strconv.ParseUint(f[2], 10, 64); err != nil {
		errs = append(errs, "bad sequence")
	}
	if r.StartNs, err = strconv.ParseInt(f[4], 10, 64); err != nil {
		errs = append(errs, "bad start time")
	}
	head := s[:len(s)-len(f[5])]
	if sum, err := strconv.ParseUint(f[5], 16, 32); err != nil || len(f[5]) != 8 || uint32(sum) != Checksum([]byte(head)) {
		errs = append(errs, "checksum mismatch")
	}
	if !ValidName(r.Writer) {
		return Record{Detail: fmt.Sprintf("not a record: %q", clip(s))}, fmt.Errorf("record without a writer: %q", clip(s))
	}
	r.Intact = len(errs) == 0
	r.Detail = strings.Join(errs, ", ")
	return r, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// ParseLines decodes every JSON object line of b into T, skipping the lines
// that are not one (a container runtime's own lines, a torn last line).
func ParseLines[T any](b []byte) []T {
	var out []T
	sc := bufio.NewScanner(bytes.NewReader(b))
	// Grows up to 16 MiB for a long line; not allocated up front.
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var v T
		if json.Unmarshal(line, &v) == nil {
			out = append(out, v)
		}
	}
	return out
}
