package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"

	"github.com/fenceproof/fenceproof/driver"
	"github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// Files names the inputs of a check. Audit and DriverLogs are required.
type Files struct {
	Audit      []string // refstore audit logs (several when a run spans copies)
	DriverLogs []string // the reference driver's JSON logs (several across driver restarts)
	WriterLogs []string // optional writer attempt logs
	EnforceLog string   // optional refstore enforcement log (RPC return → enforcement figure)
}

// Input is everything a check reads, already parsed.
type Input struct {
	Audit    []refstore.AuditRecord
	Driver   []DriverEvent
	Writers  []writer.Attempt
	Enforce  []refstore.EnforceRecord
	Warnings []string // e.g. a torn last audit line, skipped non-JSON driver lines
}

// Kinds of driver events the oracle reads.
const (
	EventFence   = "fence"
	EventUnfence = "unfence"
	EventReady   = "ready" // the driver (re)started and re-applied its stored fences
)

// DriverEvent is one relevant line of a driver log.
type DriverEvent struct {
	Kind    string
	OK      bool   // the RPC returned OK (always true for ready)
	Code    string // gRPC code name
	StartNs int64  // RPC start (ready: = TNs)
	TNs     int64  // RPC return, i.e. the acknowledgement (ready: when ready)
	CIDRs   []string
	Source  string // file:line
}

// InputError is bad input: a missing file, a malformed line. The CLI exits 2.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(format string, a ...any) error { return &InputError{fmt.Errorf(format, a...)} }

// Load reads and parses the files.
func Load(f Files) (Input, error) {
	var in Input
	if len(f.Audit) == 0 || len(f.DriverLogs) == 0 {
		return in, inputErr("an audit log and a driver log are required")
	}
	for _, p := range f.Audit {
		recs, warn, err := ReadAudit(p)
		if err != nil {
			return in, err
		}
		in.Audit = append(in.Audit, recs...)
		in.Warnings = append(in.Warnings, warn...)
	}
	for _, p := range f.DriverLogs {
		evs, warn, err := ReadDriverLog(p)
		if err != nil {
			return in, err
		}
		in.Driver = append(in.Driver, evs...)
		in.Warnings = append(in.Warnings, warn...)
	}
	for _, p := range f.WriterLogs {
		as, warn, err := ReadWriterLog(p)
		if err != nil {
			return in, err
		}
		in.Writers = append(in.Writers, as...)
		in.Warnings = append(in.Warnings, warn...)
	}
	if f.EnforceLog != "" {
		var warn []string
		var err error
		if in.Enforce, warn, err = ReadEnforceLog(f.EnforceLog); err != nil {
			return in, err
		}
		in.Warnings = append(in.Warnings, warn...)
	}
	return in, nil
}

// eachLine calls fn for every line of path with its number. A last line
// without a newline is passed with torn=true (a crash while appending).
func eachLine(path string, fn func(n int, line []byte, torn bool) error) error {
	f, err := os.Open(path)
	if err != nil {
		return &InputError{err}
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			torn := !bytes.HasSuffix(line, []byte("\n"))
			if ferr := fn(n, bytes.TrimRight(line, "\r\n"), torn); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &InputError{fmt.Errorf("%s: %w", path, err)}
		}
	}
}

// strictJSON decodes one line, rejecting unknown fields.
func strictJSON(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ReadAudit parses an audit log. Every line must be a complete record with a
// client, a source ip:port, a sequence and a time; a torn last line (the
// service crashed while appending, so it was never acknowledged) is skipped
// with a warning.
func ReadAudit(path string) ([]refstore.AuditRecord, []string, error) {
	var out []refstore.AuditRecord
	var warn []string
	err := eachLine(path, func(n int, line []byte, torn bool) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var r refstore.AuditRecord
		err := strictJSON(line, &r)
		if err == nil {
			err = checkAudit(r)
		}
		if err != nil {
			if torn {
				warn = append(warn, fmt.Sprintf("%s:%d: torn last line skipped (never acknowledged)", path, n))
				return nil
			}
			return inputErr("%s:%d: not an audit record: %v", path, n, err)
		}
		out = append(out, r)
		return nil
	})
	return out, warn, err
}

func checkAudit(r refstore.AuditRecord) error {
	if r.Client == "" || r.Seq == 0 || r.TNs <= 0 {
		return errors.New(`want "client", "seq" > 0 and "t_ns" > 0`)
	}
	if _, err := netip.ParseAddrPort(r.Addr); err != nil {
		return fmt.Errorf("addr %q: want ip:port", r.Addr)
	}
	return nil
}

// driverLine is the subset of a driver log line the oracle reads.
type driverLine struct {
	Msg       string   `json:"msg"`
	RPC       string   `json:"rpc"`
	Code      string   `json:"code"`
	CIDRs     []string `json:"cidrs"`
	CIDRCount *int     `json:"cidr_count"`
	StartNs   int64    `json:"start_ns"`
	TNs       int64    `json:"t_ns"`
}

// ReadDriverLog parses the Fence/Unfence RPC lines and ready lines of a
// driver log (see driver.MsgRPC and its keys). Lines that are not JSON
// objects (e.g. a Go panic trace) are skipped with a warning; an RPC line
// without times, or whose cidrs were cut (cidr_count larger than the list),
// is an input error, because the oracle could not know what was fenced.
func ReadDriverLog(path string) ([]DriverEvent, []string, error) {
	var out []DriverEvent
	var warn []string
	skipped := 0
	err := eachLine(path, func(n int, line []byte, torn bool) error {
		if len(line) == 0 || line[0] != '{' {
			if len(bytes.TrimSpace(line)) > 0 {
				skipped++
			}
			return nil
		}
		var l driverLine
		if err := json.Unmarshal(line, &l); err != nil {
			if torn {
				warn = append(warn, fmt.Sprintf("%s:%d: torn last line skipped", path, n))
				return nil
			}
			return inputErr("%s:%d: not a JSON log line: %v", path, n, err)
		}
		src := fmt.Sprintf("%s:%d", path, n)
		var ev DriverEvent
		switch {
		case l.Msg == driver.MsgReady:
			ev = DriverEvent{Kind: EventReady, OK: true, Code: "OK", StartNs: l.TNs, TNs: l.TNs}
		case (l.Msg == driver.MsgRPC || l.Msg == driver.MsgRPCFailed) && l.RPC == "FenceClusterNetwork":
			ev = DriverEvent{Kind: EventFence, OK: l.Code == "OK", Code: l.Code, StartNs: l.StartNs, TNs: l.TNs}
		case (l.Msg == driver.MsgRPC || l.Msg == driver.MsgRPCFailed) && l.RPC == "UnfenceClusterNetwork":
			ev = DriverEvent{Kind: EventUnfence, OK: l.Code == "OK", Code: l.Code, StartNs: l.StartNs, TNs: l.TNs}
		default:
			return nil
		}
		if ev.TNs <= 0 || ev.StartNs <= 0 || ev.StartNs > ev.TNs {
			if ev.Kind == EventReady {
				warn = append(warn, src+": ready line without t_ns (driver too old?) ignored")
				return nil
			}
			return inputErr("%s: %s line without valid start_ns/t_ns (a driver older than the oracle?)", src, ev.Kind)
		}
		if l.CIDRCount == nil || *l.CIDRCount != len(l.CIDRs) {
			if ev.Kind == EventReady || ev.OK {
				return inputErr("%s: the %s line lists %d cidrs of %v: the list was cut or is missing, so the fenced set is unknown", src, ev.Kind, len(l.CIDRs), countOf(l.CIDRCount))
			}
		}
		ev.CIDRs, ev.Source = l.CIDRs, src
		out = append(out, ev)
		return nil
	})
	if skipped > 0 {
		warn = append(warn, fmt.Sprintf("%s: %d non-JSON lines skipped", path, skipped))
	}
	if err == nil && len(out) == 0 {
		warn = append(warn, fmt.Sprintf("%s: no Fence, Unfence or ready line: is this the reference driver's JSON log?", path))
	}
	return out, warn, err
}

func countOf(p *int) any {
	if p == nil {
		return "an unknown number"
	}
	return *p
}

// ReadWriterLog parses a writer's attempt log.
func ReadWriterLog(path string) ([]writer.Attempt, []string, error) {
	var out []writer.Attempt
	var warn []string
	skipped := 0
	err := eachLine(path, func(n int, line []byte, torn bool) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		if line[0] != '{' { // e.g. the writer's final counts on stderr, merged by kubectl logs
			skipped++
			return nil
		}
		var a writer.Attempt
		err := strictJSON(line, &a)
		if err == nil && (a.Client == "" || a.Seq == 0 || a.TNs <= 0 ||
			(a.Outcome != writer.OutcomeOK && a.Outcome != writer.OutcomeRefused && a.Outcome != writer.OutcomeError)) {
			err = errors.New(`want "client", "seq", "t_ns" and an outcome ok|refused|error`)
		}
		if err != nil {
			if torn {
				warn = append(warn, fmt.Sprintf("%s:%d: torn last line skipped", path, n))
				return nil
			}
			return inputErr("%s:%d: not a writer attempt: %v", path, n, err)
		}
		out = append(out, a)
		return nil
	})
	if skipped > 0 {
		warn = append(warn, fmt.Sprintf("%s: %d non-JSON lines skipped", path, skipped))
	}
	return out, warn, err
}

// ReadEnforceLog parses refstore's enforcement log.
func ReadEnforceLog(path string) ([]refstore.EnforceRecord, []string, error) {
	var out []refstore.EnforceRecord
	var warn []string
	err := eachLine(path, func(n int, line []byte, torn bool) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		var r refstore.EnforceRecord
		if err := strictJSON(line, &r); err != nil || r.TNs <= 0 {
			if torn {
				warn = append(warn, fmt.Sprintf("%s:%d: torn last line skipped", path, n))
				return nil
			}
			return inputErr("%s:%d: not an enforcement record: %v", path, n, err)
		}
		out = append(out, r)
		return nil
	})
	return out, warn, err
}
