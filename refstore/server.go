package refstore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Server.
type Options struct {
	Listen         string        // data listener, e.g. ":7070"
	Admin          string        // admin endpoint: unix:///path.sock (required)
	AdminTCP       string        // optional second admin listener host:port; needs AdminTokenFile
	AdminTokenFile string        // bearer token guarding AdminTCP (the unix socket needs none)
	AuditPath      string        // audit log of accepted writes (required)
	StatePath      string        // persisted blocklist; default: blocklist.json next to the audit log
	RefusalsPath   string        // refusals log; default: refused.log next to the audit log
	EnforcePath    string        // enforcement log; default: enforce.log next to the audit log
	IdleTimeout    time.Duration // a session silent this long is closed; default 5 min
	MaxSessions    int           // default 4096
	Logger         *slog.Logger
}

func (o *Options) defaults() error {
	if o.AuditPath == "" {
		return errors.New("an audit log path is required")
	}
	if o.Admin == "" {
		return errors.New("an admin endpoint (unix:///path.sock) is required")
	}
	if (o.AdminTCP == "") != (o.AdminTokenFile == "") {
		return errors.New("the TCP admin listener and its token file go together")
	}
	dir := filepath.Dir(o.AuditPath)
	if o.StatePath == "" {
		o.StatePath = filepath.Join(dir, "blocklist.json")
	}
	if o.RefusalsPath == "" {
		o.RefusalsPath = filepath.Join(dir, "refused.log")
	}
	if o.EnforcePath == "" {
		o.EnforcePath = filepath.Join(dir, "enforce.log")
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 5 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 4096
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// Server is the reference storage service.
type Server struct {
	o   Options
	log *slog.Logger

	// gate orders writes against blocklist changes: a write holds it shared
	// from the blocklist check until its audit record is on disk; a change
	// holds it exclusively while it swaps the list. So every write stamped
	// after a change took effect was checked against the new list.
	gate  sync.RWMutex
	block *Blocklist

	adminMu sync.Mutex // serialises blocklist changes

	audit, refusals, enforce *jsonLog

	mu       sync.Mutex
	sessions map[*session]struct{}
	closing  bool

	accepted, refused atomic.Uint64

	lis       net.Listener
	admins    []*http.Server
	adminTCP  net.Addr
	sockPath  string // the admin socket, once listening
	adminSock string // the admin socket's path, from Options.Admin
	token     string
	wg        sync.WaitGroup
	stopOnce  sync.Once
}

type session struct {
	conn   net.Conn
	src    netip.AddrPort
	since  time.Time
	client atomic.Pointer[string]
}

// New opens the logs and loads the persisted blocklist. It does not listen.
func New(o Options) (*Server, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	sock, err := adminSocket(o.Admin)
	if err != nil {
		return nil, err
	}
	s := &Server{o: o, log: o.Logger, sessions: map[*session]struct{}{}, adminSock: sock}
	for _, p := range []string{o.AuditPath, o.StatePath, o.RefusalsPath, o.EnforcePath, s.adminSock} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
	}
	if o.AdminTokenFile != "" {
		raw, err := os.ReadFile(o.AdminTokenFile)
		if err != nil {
			return nil, fmt.Errorf("admin token file: %w", err)
		}
		if s.token = strings.TrimSpace(string(raw)); len(s.token) < 16 {
			return nil, fmt.Errorf("admin token file %s: the token must be at least 16 characters", o.AdminTokenFile)
		}
	}
	if s.block, err = loadState(o.StatePath); err != nil {
		return nil, err
	}
	if s.audit, err = openJSONLog(o.AuditPath, true); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	if s.refusals, err = openJSONLog(o.RefusalsPath, false); err != nil {
		s.audit.close()
		return nil, fmt.Errorf("refusals log: %w", err)
	}
	if s.enforce, err = openJSONLog(o.EnforcePath, true); err != nil {
		s.audit.close()
		s.refusals.close()
		return nil, fmt.Errorf("enforcement log: %w", err)
	}
	if err := s.enforce.append(EnforceRecord{TNs: time.Now().UnixNano(), Generation: s.block.Generation,
		CIDRs: s.block.Strings(), Restored: true}); err != nil {
		s.closeLogs()
		return nil, err
	}
	return s, nil
}

// Start opens the data and admin listeners and serves in the background.
func (s *Server) Start() error {
	lis, err := net.Listen("tcp", s.o.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.o.Listen, err)
	}
	if err := s.startAdmin(); err != nil {
		lis.Close()
		return err
	}
	s.lis = lis
	s.wg.Add(1)
	go s.acceptLoop()
	b := s.current()
	s.log.Info("refstore listening", "addr", lis.Addr().String(), "admin", s.o.Admin, "admin_tcp", s.o.AdminTCP,
		"audit", s.o.AuditPath, "state", s.o.StatePath, "generation", b.Generation, "blocklist", boundList(b.Strings()))
	return nil
}

// Addr is the data listener's address (after Start).
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// AdminTCPAddr is the TCP admin listener's address, or nil without one.
func (s *Server) AdminTCPAddr() net.Addr { return s.adminTCP }

// Stop closes the listeners and every session and waits for the session
// goroutines. The blocklist stays persisted. Safe to call more than once.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, a := range s.admins {
			a.Shutdown(ctx)
		}
		if s.lis != nil {
			s.lis.Close()
		}
		s.mu.Lock()
		s.closing = true
		for ss := range s.sessions {
			ss.conn.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
		if s.sockPath != "" {
			os.Remove(s.sockPath)
		}
		s.closeLogs()
		s.log.Info("refstore stopped", "accepted", s.accepted.Load(), "refused", s.refused.Load())
	})
}

func (s *Server) closeLogs() {
	s.audit.close()
	s.refusals.close()
	s.enforce.close()
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.lis.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("accept", "err", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		src := remoteAddrPort(c)
		ss := &session{conn: c, src: src, since: time.Now()}
		s.gate.RLock()
		fenced := s.block.Contains(src.Addr())
		s.gate.RUnlock()
		if fenced {
			s.refuseOnAccept(ss, ReasonFenced)
			continue
		}
		s.mu.Lock()
		if s.closing || len(s.sessions) >= s.o.MaxSessions {
			s.mu.Unlock()
			s.refuseOnAccept(ss, ReasonBusy)
			continue
		}
		s.sessions[ss] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(ss)
	}
}

func remoteAddrPort(c net.Conn) netip.AddrPort {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(c.RemoteAddr().String())
	return ap
}

// refuseOnAccept refuses a new connection in the background: REFUSED, then
// a half-close and a short drain of what the client already sent (its
// HELLO), so the client reads the refusal instead of a reset.
func (s *Server) refuseOnAccept(ss *session, reason string) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer ss.conn.Close()
		s.refuse(ss, "", 0, reason)
		if tc, ok := ss.conn.(*net.TCPConn); ok {
			tc.CloseWrite()
			ss.conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			io.Copy(io.Discard, io.LimitReader(ss.conn, 64<<10))
		}
	}()
}

// refuse counts and logs a refusal and tells the client, best effort.
func (s *Server) refuse(ss *session, client string, seq uint64, reason string) {
	s.refused.Add(1)
	if err := s.refusals.append(RefusalRecord{Client: client, Addr: ss.src.String(), Seq: seq,
		TNs: time.Now().UnixNano(), Reason: reason}); err != nil {
		s.log.Warn("refusals log", "err", err)
	}
	ss.conn.SetWriteDeadline(time.Now().Add(time.Second))
	io.WriteString(ss.conn, formatRefused(seq, reason))
}

func (s *Server) serve(ss *session) {
	defer s.wg.Done()
	defer func() {
		ss.conn.Close()
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
	}()
	r := bufio.NewReaderSize(ss.conn, MaxLineLen+1)
	for {
		ss.conn.SetReadDeadline(time.Now().Add(s.o.IdleTimeout))
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			io.WriteString(ss.conn, formatErr(fmt.Sprintf("line longer than %d bytes", MaxLineLen)))
			return
		}
		if err != nil {
			return
		}
		req, perr := ParseRequest(strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r"))
		if perr != nil {
			ss.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(ss.conn, formatErr(perr.Error()))
			return
		}
		if cur := ss.client.Load(); cur == nil || *cur != req.Client {
			id := req.Client
			ss.client.Store(&id)
		}
		if !s.handle(ss, req) {
			return
		}
	}
}

// handle answers one request; false closes the session.
func (s *Server) handle(ss *session, req Request) bool {
	s.gate.RLock()
	if s.block.Contains(ss.src.Addr()) {
		s.gate.RUnlock()
		s.refuse(ss, req.Client, req.Seq, ReasonFenced)
		return false
	}
	switch req.Verb {
	case "HELLO":
		s.gate.RUnlock()
		return s.reply(ss, formatOK(0, time.Now().UnixNano()))
	case "READ":
		s.gate.RUnlock()
		return s.read(ss, req.Client)
	}
	rec := AuditRecord{Client: req.Client, Addr: ss.src.String(), Seq: req.Seq, TNs: time.Now().UnixNano(), Payload: req.Payload}
	err := s.audit.append(rec)
	s.gate.RUnlock()
	if err != nil {
		s.log.Error("audit log failed; refusing every write from now on", "err", err)
		s.refuse(ss, req.Client, req.Seq, ReasonAuditFailed)
		return false
	}
	s.accepted.Add(1)
	return s.reply(ss, formatOK(req.Seq, rec.TNs))
}

// read answers READ: every accepted write of client, from the audit log
// (what the service stores), then END. A torn last line (a write being
// appended) is skipped: its client has not had its OK yet.
func (s *Server) read(ss *session, client string) bool {
	f, err := os.Open(s.o.AuditPath)
	if err != nil {
		return s.reply(ss, formatErr("read: "+err.Error()))
	}
	defer f.Close()
	w := bufio.NewWriter(ss.conn)
	ss.conn.SetWriteDeadline(time.Now().Add(time.Minute))
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var r AuditRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Client == client {
			w.WriteString(formatRec(r))
			n++
		}
	}
	if err := sc.Err(); err != nil {
		w.WriteString(formatErr("read: " + err.Error()))
		w.Flush()
		return false
	}
	w.WriteString(formatEnd(n))
	return w.Flush() == nil
}

func (s *Server) reply(ss *session, line string) bool {
	ss.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := io.WriteString(ss.conn, line)
	return err == nil
}

// SetResult is the answer to a blocklist change.
type SetResult struct {
	Generation uint64   `json:"generation"`
	CIDRs      []string `json:"cidrs"`
	Closed     int      `json:"closed"`      // open sessions from newly fenced sources that were closed
	TNs        int64    `json:"enforced_ns"` // when the new list took effect (unix ns)
}

// SetBlocklist replaces the whole blocklist. It validates every element
// first (an error changes nothing), persists the new list (fsync), swaps it
// in, closes the open sessions of fenced sources and only then returns.
func (s *Server) SetBlocklist(cidrs []string) (SetResult, error) {
	ps, err := ParseCIDRs(cidrs)
	if err != nil {
		return SetResult{}, &InputError{err}
	}
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	cur := s.current()
	if slices.Equal(cur.Prefixes, ps) {
		return SetResult{Generation: cur.Generation, CIDRs: cur.Strings()}, nil
	}
	next := &Blocklist{Generation: cur.Generation + 1, Prefixes: ps}
	if err := saveState(s.o.StatePath, next); err != nil {
		return SetResult{}, fmt.Errorf("persist blocklist (nothing changed): %w", err)
	}
	s.gate.Lock()
	s.block = next
	tns := time.Now().UnixNano()
	s.gate.Unlock()
	closed := s.closeFenced(next)
	res := SetResult{Generation: next.Generation, CIDRs: next.Strings(), Closed: closed, TNs: tns}
	if err := s.enforce.append(EnforceRecord{TNs: tns, Generation: next.Generation, CIDRs: res.CIDRs, Closed: closed}); err != nil {
		s.log.Warn("enforcement log", "err", err)
	}
	s.log.Info("blocklist set", "generation", next.Generation, "count", len(ps), "cidrs", boundList(res.CIDRs), "closed", closed)
	return res, nil
}

// closeFenced closes every open session whose source b fences.
func (s *Server) closeFenced(b *Blocklist) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for ss := range s.sessions {
		if b.Contains(ss.src.Addr()) {
			client := ""
			if p := ss.client.Load(); p != nil {
				client = *p
			}
			s.refuse(ss, client, 0, ReasonFencedOpen)
			ss.conn.Close()
			n++
		}
	}
	return n
}

func (s *Server) current() *Blocklist {
	s.gate.RLock()
	defer s.gate.RUnlock()
	return s.block
}

// Blocklist returns the list in force.
func (s *Server) Blocklist() Blocklist { return *s.current() }

// Client is one open session.
type Client struct {
	ID    string `json:"id"` // empty until the session's first request
	Addr  string `json:"addr"`
	Since int64  `json:"since_ns"`
}

// Clients lists the open sessions, sorted by id then address.
func (s *Server) Clients() []Client {
	s.mu.Lock()
	out := make([]Client, 0, len(s.sessions))
	for ss := range s.sessions {
		c := Client{Addr: ss.src.String(), Since: ss.since.UnixNano()}
		if p := ss.client.Load(); p != nil {
			c.ID = *p
		}
		out = append(out, c)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Client) int {
		if c := strings.Compare(a.ID, b.ID); c != 0 {
			return c
		}
		return strings.Compare(a.Addr, b.Addr)
	})
	return out
}

// Stats are the service's counters.
type Stats struct {
	Accepted   uint64 `json:"accepted"`
	Refused    uint64 `json:"refused"`
	Sessions   int    `json:"sessions"`
	Generation uint64 `json:"generation"`
}

// Stats returns the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	n := len(s.sessions)
	s.mu.Unlock()
	return Stats{Accepted: s.accepted.Load(), Refused: s.refused.Load(), Sessions: n, Generation: s.current().Generation}
}

// InputError is a blocklist change rejected for its content.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func boundList(l []string) []string {
	if len(l) > 32 {
		return append(slices.Clone(l[:32]), fmt.Sprintf("... %d more", len(l)-32))
	}
	return l
}
