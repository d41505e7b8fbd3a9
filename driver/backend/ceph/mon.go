package ceph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Mon sends commands to Ceph's monitors. ceph/librados implements it with
// go-ceph (cgo, build tag ceph); tests substitute a faulty one to inject
// what a real mon will not do on demand.
type Mon interface {
	// MonCommand sends one JSON command to any mon and returns its output
	// buffer, its status string and an error carrying Ceph's errno
	// (ErrorCode() int, negative).
	MonCommand(cmd []byte) (out []byte, status string, err error)
	// MonCommandTarget sends a command to the named mon.
	MonCommandTarget(mon string, cmd []byte) (out []byte, status string, err error)
	// Self identifies this connection (its global id and its messenger's
	// nonce): its own mon session is not a client to fence.
	Self() (globalID, nonce uint64)
	// Shutdown closes the connection.
	Shutdown()
}

// OSDBarrier is implemented by connections that can wait until every
// placement group enforces an OSD map epoch (ceph/librados: one operation
// per PG sent with the client's newest map). Without it the backend
// acknowledges once the mon committed the epoch, which measured here can
// precede the OSD's enforcement by a few milliseconds.
type OSDBarrier interface {
	Barrier(ctx context.Context, epoch int) error
}

// Errno returns the Ceph errno of err (negative), or 0.
func Errno(err error) int {
	var ec interface{ ErrorCode() int }
	if errors.As(err, &ec) {
		return ec.ErrorCode()
	}
	return 0
}

// Errnos the backend tells apart.
const (
	errnoPerm      = -1
	errnoNoEnt     = -2
	errnoAccess    = -13
	errnoInval     = -22
	errnoTimedOut  = -110
	errnoNotConn   = -107
	errnoBlocklist = -108
)

// MonError is a mon command that failed, with what the mon said.
type MonError struct {
	Cmd    string // the command's prefix and arguments, for messages
	Errno  int
	Status string
	Err    error
}

func (e *MonError) Error() string {
	var hint string
	switch e.Errno {
	case errnoAccess, errnoPerm:
		hint = " (the Ceph user lacks the caps: mon 'allow r, allow command \"osd blocklist\", allow command \"sessions\"')"
	case errnoTimedOut:
		hint = " (no mon answered within rados_mon_op_timeout)"
	}
	s := strings.TrimSpace(e.Status)
	if s != "" {
		s = ": " + s
	}
	return fmt.Sprintf("ceph %s: %v%s%s", e.Cmd, e.Err, s, hint)
}

func (e *MonError) Unwrap() error { return e.Err }

// command is a mon command in Ceph's JSON form.
type command map[string]any

func (c command) String() string {
	var parts []string
	if p, ok := c["prefix"].(string); ok {
		parts = append(parts, p)
	}
	for _, k := range []string{"blocklistop", "range", "addr", "expire"} {
		if v, ok := c[k]; ok {
			parts = append(parts, fmt.Sprint(v))
		}
	}
	return strings.Join(parts, " ")
}

// seconds is a CephFloat argument: the mon's JSON parser wants a number
// with a fraction ("100.0"), an integer literal is refused.
func seconds(d time.Duration) json.Number {
	return json.Number(strconv.FormatFloat(d.Seconds(), 'f', 3, 64))
}

// result is one mon command's answer.
type result struct {
	out    []byte
	status string
	err    error
}

// call runs one mon command, returning when it answers or ctx ends. A
// command cannot be recalled once sent: when ctx ends first, the answer
// still arrives later on the returned channel (done is closed after it is
// sent), and the caller decides what to do about it.
func call(ctx context.Context, mon Mon, target string, c command) (result, <-chan result) {
	raw, err := json.Marshal(c)
	if err != nil {
		return result{err: err}, nil
	}
	late := make(chan result, 1)
	go func() {
		var r result
		if target != "" {
			r.out, r.status, r.err = mon.MonCommandTarget(target, raw)
		} else {
			r.out, r.status, r.err = mon.MonCommand(raw)
		}
		if r.err != nil {
			r.err = &MonError{Cmd: c.String(), Errno: Errno(r.err), Status: r.status, Err: r.err}
		}
		late <- r
	}()
	select {
	case r := <-late:
		return r, nil
	case <-ctx.Done():
		return result{err: fmt.Errorf("ceph %s: %w", c.String(), ctx.Err())}, late
	}
}
