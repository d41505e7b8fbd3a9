package refstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Protocol limits.
const (
	MaxIDLen      = 128  // bytes of a client id
	MaxPayloadLen = 1024 // bytes of a write's payload
	MaxLineLen    = 16 + MaxIDLen + 21 + MaxPayloadLen + 8
)

// Reply verbs.
const (
	VerbOK      = "OK"
	VerbRefused = "REFUSED"
	VerbErr     = "ERR"
)

// Refusal reasons written in REFUSED replies and the refusals log.
const (
	ReasonFenced      = "fenced"       // the source is in the blocklist
	ReasonFencedOpen  = "fenced-open"  // an open session whose source became fenced was closed
	ReasonAuditFailed = "audit-failed" // the audit log could not be written; the server refuses everything
	ReasonBusy        = "busy"         // too many sessions
)

// Request is one parsed client line.
type Request struct {
	Verb    string // "HELLO", "WRITE" or "READ"
	Client  string
	Seq     uint64 // WRITE only, > 0
	Payload string // WRITE only, may be empty
}

// ValidID reports whether id is a valid client id: 1..MaxIDLen bytes of
// [A-Za-z0-9._:-].
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// ParseRequest parses one line (without its newline).
func ParseRequest(line string) (Request, error) {
	f := strings.Split(line, " ")
	switch {
	case len(f) == 2 && (f[0] == "HELLO" || f[0] == "READ"):
		if !ValidID(f[1]) {
			return Request{}, fmt.Errorf("bad client id %q", trunc(f[1]))
		}
		return Request{Verb: f[0], Client: f[1]}, nil
	case (len(f) == 3 || len(f) == 4) && f[0] == "WRITE":
		if !ValidID(f[1]) {
			return Request{}, fmt.Errorf("bad client id %q", trunc(f[1]))
		}
		seq, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil || seq == 0 {
			return Request{}, fmt.Errorf("bad sequence %q: want a decimal integer > 0", trunc(f[2]))
		}
		r := Request{Verb: "WRITE", Client: f[1], Seq: seq}
		if len(f) == 4 {
			if len(f[3]) > MaxPayloadLen {
				return Request{}, fmt.Errorf("payload of %d bytes exceeds %d", len(f[3]), MaxPayloadLen)
			}
			r.Payload = f[3]
		}
		return r, nil
	}
	return Request{}, errors.New(`want "HELLO <id>", "WRITE <id> <seq> [payload]" or "READ <id>"`)
}

// FormatHello and FormatWrite build request lines, newline included.
func FormatHello(id string) string { return "HELLO " + id + "\n" }

// FormatWrite builds a WRITE line; payload may be empty.
func FormatWrite(id string, seq uint64, payload string) string {
	if payload == "" {
		return fmt.Sprintf("WRITE %s %d\n", id, seq)
	}
	return fmt.Sprintf("WRITE %s %d %s\n", id, seq, payload)
}

// Reply is one parsed server line.
type Reply struct {
	Verb   string // VerbOK, VerbRefused or VerbErr
	Seq    uint64 // the sequence answered (0 for HELLO and on-accept refusals)
	TNs    int64  // OK: the server time recorded in the audit log
	Reason string // REFUSED / ERR: why
}

// ParseReply parses one server line (without its newline).
func ParseReply(line string) (Reply, error) {
	f := strings.SplitN(line, " ", 3)
	if len(f) < 2 {
		return Reply{}, fmt.Errorf("malformed reply %q", trunc(line))
	}
	switch f[0] {
	case VerbOK, VerbRefused:
		seq, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || len(f) != 3 {
			return Reply{}, fmt.Errorf("malformed reply %q", trunc(line))
		}
		r := Reply{Verb: f[0], Seq: seq}
		if f[0] == VerbOK {
			if r.TNs, err = strconv.ParseInt(f[2], 10, 64); err != nil {
				return Reply{}, fmt.Errorf("malformed reply %q", trunc(line))
			}
		} else {
			r.Reason = f[2]
		}
		return r, nil
	case VerbErr:
		return Reply{Verb: VerbErr, Reason: strings.Join(f[1:], " ")}, nil
	}
	return Reply{}, fmt.Errorf("malformed reply %q", trunc(line))
}

// FormatRead builds a READ line.
func FormatRead(id string) string { return "READ " + id + "\n" }

// A READ is answered with one REC line per accepted write of the client,
// in the order they were accepted, then END with their count.
func formatRec(r AuditRecord) string {
	return strings.TrimSuffix(fmt.Sprintf("REC %d %d %s", r.Seq, r.TNs, r.Payload), " ") + "\n"
}
func formatEnd(n int) string { return fmt.Sprintf("END %d\n", n) }

func formatOK(seq uint64, tns int64) string { return fmt.Sprintf("OK %d %d\n", seq, tns) }
func formatRefused(seq uint64, reason string) string {
	return fmt.Sprintf("REFUSED %d %s\n", seq, reason)
}
func formatErr(msg string) string { return "ERR " + strings.ReplaceAll(msg, "\n", " ") + "\n" }

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
