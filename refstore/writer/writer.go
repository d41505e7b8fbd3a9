// Package writer is the refstore client that writes sequenced records
// continuously: one write per interval, the sequence strictly increasing
// across reconnects (a sequence is never reused, even when its outcome is
// unknown), a fresh connection after every refusal or error (backoff
// doubling from the interval up to MaxBackoff), and one JSON line (Attempt)
// per attempt with its outcome and local unix ns times. From these lines and
// refstore's audit log the oracle (audit) computes the writes lost.
package writer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
	"github.com/fenceproof/fenceproof/refstore"
)

// Outcomes of an attempt and the attempt line: the writer contract's
// (fencing/contract), which every fenceproof writer logs.
const (
	OutcomeOK      = contract.OutcomeOK      // the server acknowledged the write
	OutcomeRefused = contract.OutcomeRefused // the server answered REFUSED
	OutcomeError   = contract.OutcomeError   // connect, send or receive failed; the write may or may not be in the audit
)

// Attempt is one line of the writer's log.
type Attempt = contract.Attempt

// Options configures a writer.
type Options struct {
	Server     string        // host:port
	ID         string        // client id (refstore.ValidID)
	Source     string        // optional local IP to bind (tests use 127.0.0.2 and 127.0.0.3)
	Interval   time.Duration // between writes; default 20ms
	Timeout    time.Duration // per connect and per reply; default 2s
	MaxBackoff time.Duration // cap of the reconnect backoff; default 1s
	StartSeq   uint64        // first sequence; 0 = the current unix time in µs, so a restarted writer never reuses one
	Payload    int           // payload bytes per write; default 16 (0 with Node set: the contract's record, contract.Record.Encode)
	Node       string        // the node the writer runs on: logged in every attempt, and in the record it writes
	Log        io.Writer     // attempt lines; nil = discarded
}

// Writer runs the loop; its counters are safe to read while it runs.
type Writer struct {
	o     Options
	clock contract.Clock
	log   *AttemptLog
	next  uint64
	conn  net.Conn
	rd    *bufio.Reader
}

// New checks the options.
func New(o Options) (*Writer, error) {
	if !refstore.ValidID(o.ID) {
		return nil, fmt.Errorf("client id %q: want 1-%d characters of [A-Za-z0-9._:-]", o.ID, refstore.MaxIDLen)
	}
	if _, _, err := net.SplitHostPort(o.Server); err != nil {
		return nil, fmt.Errorf("server %q: want host:port", o.Server)
	}
	if o.Source != "" {
		if _, err := netip.ParseAddr(o.Source); err != nil {
			return nil, fmt.Errorf("source %q: want an IP address", o.Source)
		}
	}
	if o.Interval <= 0 {
		o.Interval = 20 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Second
	}
	if o.Payload <= 0 && o.Node == "" {
		o.Payload = 16
	}
	if o.Payload > refstore.MaxPayloadLen {
		return nil, fmt.Errorf("payload %d bytes exceeds %d", o.Payload, refstore.MaxPayloadLen)
	}
	if o.StartSeq == 0 {
		o.StartSeq = uint64(time.Now().UnixMicro())
	}
	w := &Writer{o: o, clock: contract.NewClock(), log: NewAttemptLog(o.Log), next: o.StartSeq}
	return w, nil
}

// Counts returns how many attempts ended in each outcome so far.
func (w *Writer) Counts() map[string]int { return w.log.Counts() }

// Run writes until ctx is done; it returns ctx's error or a log write error.
func (w *Writer) Run(ctx context.Context) error {
	defer w.disconnect()
	backoff := time.Duration(0)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		a := w.attempt(ctx)
		if ctx.Err() != nil && a.Outcome == OutcomeError {
			return ctx.Err() // interrupted by the shutdown itself: not an outcome worth logging
		}
		if err := w.log.Record(a); err != nil {
			return err
		}
		wait := w.o.Interval
		if a.Outcome != OutcomeOK {
			w.disconnect()
			backoff = min(max(2*backoff, w.o.Interval), w.o.MaxBackoff)
			wait = backoff
		} else {
			backoff = 0
		}
		t.Reset(wait)
	}
}

// attempt performs one write with the next sequence, connecting first if
// needed.
func (w *Writer) attempt(ctx context.Context) Attempt {
	seq := w.next
	w.next++
	a := Attempt{Client: w.o.ID, Node: w.o.Node, Seq: seq}
	a.SendNs, a.SendMonoNs = w.clock.Now()
	end := func() { a.TNs, a.MonoNs = w.clock.Now() }
	fail := func(outcome, reason string) Attempt {
		a.Outcome, a.Reason = outcome, reason
		end()
		return a
	}
	if w.conn == nil {
		local, err := w.connect(ctx)
		a.Local = local
		if err != nil {
			var re refusedError
			if errors.As(err, &re) {
				return fail(OutcomeRefused, string(re))
			}
			return fail(OutcomeError, err.Error())
		}
		a.SendNs, a.SendMonoNs = w.clock.Now()
	}
	a.Local = w.conn.LocalAddr().String()
	w.conn.SetDeadline(time.Now().Add(w.o.Timeout))
	if _, err := io.WriteString(w.conn, refstore.FormatWrite(w.o.ID, seq, w.payload(a))); err != nil {
		return fail(OutcomeError, "send: "+err.Error())
	}
	r, err := w.readReply()
	if err != nil {
		return fail(OutcomeError, err.Error())
	}
	switch r.Verb {
	case refstore.VerbOK:
		if r.Seq != seq {
			return fail(OutcomeError, fmt.Sprintf("OK for sequence %d, sent %d", r.Seq, seq))
		}
		a.Outcome, a.Server = OutcomeOK, r.TNs
		end()
		return a
	case refstore.VerbRefused:
		return fail(OutcomeRefused, r.Reason)
	}
	return fail(OutcomeError, "server error: "+r.Reason)
}

// connect dials (from Source if set) and says HELLO; a REFUSED answer is a
// refusedError. It returns the local address once the TCP connection is up.
func (w *Writer) connect(ctx context.Context) (string, error) {
	d := net.Dialer{Timeout: w.o.Timeout}
	if w.o.Source != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(w.o.Source)}
	}
	c, err := d.DialContext(ctx, "tcp", w.o.Server)
	if err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	local := c.LocalAddr().String()
	w.conn, w.rd = c, bufio.NewReaderSize(c, 256)
	c.SetDeadline(time.Now().Add(w.o.Timeout))
	if _, err := io.WriteString(c, refstore.FormatHello(w.o.ID)); err != nil {
		w.disconnect()
		return local, fmt.Errorf("hello: %w", err)
	}
	r, err := w.readReply()
	switch {
	case err != nil:
		w.disconnect()
		return local, fmt.Errorf("hello: %w", err)
	case r.Verb == refstore.VerbRefused:
		w.disconnect()
		return local, refusedError(r.Reason)
	case r.Verb != refstore.VerbOK:
		w.disconnect()
		return local, fmt.Errorf("hello: %s %s", strings.ToLower(r.Verb), r.Reason)
	}
	return local, nil
}

// refusedError is a REFUSED answer to HELLO (or on accept).
type refusedError string

func (e refusedError) Error() string { return "refused: " + string(e) }

func (w *Writer) readReply() (refstore.Reply, error) {
	line, err := w.rd.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && line == "" {
			return refstore.Reply{}, errors.New("connection closed by the server")
		}
		return refstore.Reply{}, fmt.Errorf("receive: %w", err)
	}
	return refstore.ParseReply(strings.TrimSuffix(line, "\n"))
}

func (w *Writer) disconnect() {
	if w.conn != nil {
		w.conn.Close()
		w.conn, w.rd = nil, nil
	}
}

// payload is n bytes derived from seq (hex digits), so a write's content is
// checkable without storing it.
// payload is what attempt a writes: the contract's record when the writer
// knows its node and no payload size was asked for, else a filler of the
// asked size.
func (w *Writer) payload(a Attempt) string {
	if w.o.Payload == 0 {
		return contract.Record{Writer: a.Client, Seq: a.Seq, Node: a.Node, StartNs: a.SendNs}.Encode()
	}
	return payload(a.Seq, w.o.Payload)
}

func payload(seq uint64, n int) string {
	s := fmt.Sprintf("%016x", seq)
	for len(s) < n {
		s += s
	}
	return s[:n]
}
