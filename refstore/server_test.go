package refstore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests use real TCP on loopback; clients bind 127.0.0.2 (A) and
// 127.0.0.3 (B) as their local address so the service sees distinct sources.
const srcA, srcB = "127.0.0.2", "127.0.0.3"

func startServer(t *testing.T, dir string, mod ...func(*Options)) *Server {
	t.Helper()
	o := Options{Listen: "127.0.0.1:0", Admin: "unix://" + filepath.Join(dir, "admin.sock"),
		AuditPath: filepath.Join(dir, "audit.log"), Logger: slog.New(slog.NewTextHandler(&tlog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	for _, m := range mod {
		m(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

type tlog struct{ t *testing.T }

func (w *tlog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// sockDir returns a short temporary directory (unix socket paths are limited
// to 108 bytes).
func sockDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "rs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

type conn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, s *Server, src string) *conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &conn{t: t, c: c, r: bufio.NewReader(c)}
}

// send writes a line and returns the reply line, or "" with the error when
// the connection is closed.
func (c *conn) send(line string) (string, error) {
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.c.Write([]byte(line)); err != nil {
		return "", err
	}
	return c.read()
}

func (c *conn) read() (string, error) {
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := c.r.ReadString('\n')
	return strings.TrimSuffix(l, "\n"), err
}

func (c *conn) mustOK(line string) Reply {
	c.t.Helper()
	got, err := c.send(line)
	if err != nil {
		c.t.Fatalf("%q: %v", line, err)
	}
	r, err := ParseReply(got)
	if err != nil || r.Verb != VerbOK {
		c.t.Fatalf("%q: got %q (%v), want OK", line, got, err)
	}
	return r
}

func readAudit(t *testing.T, path string) []AuditRecord {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []AuditRecord
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if l == "" {
			continue
		}
		var r AuditRecord
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

func TestAuditHasEveryAcknowledgedWriteWhenTheOKArrives(t *testing.T) {
	dir := sockDir(t)
	s := startServer(t, dir)
	a := dial(t, s, srcA)
	a.mustOK("HELLO writer-a\n")
	for seq := uint64(1); seq <= 5; seq++ {
		r := a.mustOK(FormatWrite("writer-a", seq, "abc"))
		// The record is in the file when the OK arrives, with the OK's time.
		recs := readAudit(t, filepath.Join(dir, "audit.log"))
		last := recs[len(recs)-1]
		if len(recs) != int(seq) || last.Seq != seq || last.Client != "writer-a" || last.TNs != r.TNs ||
			!strings.HasPrefix(last.Addr, srcA+":") || last.Addr != a.c.LocalAddr().String() {
			t.Fatalf("after OK %+v the audit log is %+v", r, recs)
		}
	}
	if st := s.Stats(); st.Accepted != 5 || st.Refused != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestAuditFailureAcknowledgesNothing points the audit log at /dev/full:
// every append fails, so no write may be acknowledged, and the service
// refuses from then on rather than acknowledge without a record.
func TestAuditFailureAcknowledgesNothing(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	dir := sockDir(t)
	s := startServer(t, dir, func(o *Options) {
		o.AuditPath = "/dev/full"
		o.StatePath, o.RefusalsPath, o.EnforcePath = filepath.Join(dir, "bl.json"), filepath.Join(dir, "ref.log"), filepath.Join(dir, "enf.log")
	})
	for i := range 2 {
		a := dial(t, s, srcA)
		a.mustOK("HELLO writer-a\n")
		got, _ := a.send(FormatWrite("writer-a", uint64(i+1), ""))
		if got != "REFUSED "+string(rune('1'+i))+" "+ReasonAuditFailed {
			t.Fatalf("write %d with a failing audit log: got %q, want REFUSED audit-failed", i+1, got)
		}
	}
	if st := s.Stats(); st.Accepted != 0 {
		t.Fatalf("accepted %d writes without an audit record", st.Accepted)
	}
}

func TestFenceRefusesNewAndOpenSessionsAndUnfenceRestores(t *testing.T) {
	dir := sockDir(t)
	s := startServer(t, dir)
	a, b := dial(t, s, srcA), dial(t, s, srcB)
	a.mustOK("HELLO a\n")
	b.mustOK("HELLO b\n")
	b.mustOK(FormatWrite("b", 1, ""))
	res, err := s.SetBlocklist([]string{srcB + "/32"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Closed != 1 || res.Generation != 1 {
		t.Fatalf("SetBlocklist: %+v, want generation 1 and B's session closed", res)
	}
	// B's open session was told and closed before SetBlocklist returned.
	if got, _ := b.read(); got != "REFUSED 0 "+ReasonFencedOpen {
		t.Fatalf("open session of B: got %q", got)
	}
	if _, err := b.read(); err == nil {
		t.Fatal("B's session is still open")
	}
	// A new session from B is refused on accept.
	if got, _ := dial(t, s, srcB).read(); got != "REFUSED 0 "+ReasonFenced {
		t.Fatalf("new session of B: got %q", got)
	}
	// A is undisturbed.
	a.mustOK(FormatWrite("a", 1, ""))
	// A fenced source is refused even on a session that slipped in: a /24
	// covering A fences A's open session too.
	if _, err := s.SetBlocklist([]string{"127.0.0.0/24"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.read(); got != "REFUSED 0 "+ReasonFencedOpen {
		t.Fatalf("A under 127.0.0.0/24: got %q", got)
	}
	if _, err := s.SetBlocklist([]string{}); err != nil {
		t.Fatal(err)
	}
	b2 := dial(t, s, srcB)
	b2.mustOK("HELLO b\n")
	b2.mustOK(FormatWrite("b", 2, ""))
	for _, r := range readAudit(t, filepath.Join(dir, "audit.log")) {
		if r.Client == "b" && r.Seq != 1 && r.Seq != 2 {
			t.Fatalf("unexpected audit record %+v", r)
		}
	}
	if n := len(readAudit(t, filepath.Join(dir, "audit.log"))); n != 3 {
		t.Fatalf("audit has %d records, want 3", n)
	}
}

// TestNoWriteAuditedAfterEnforcement hammers the service from B with eight
// sessions while the fence on B is toggled; after every SetBlocklist that
// fences B returns, no record of B may carry a later time until the next
// unfence began.
func TestNoWriteAuditedAfterEnforcement(t *testing.T) {
	dir := sockDir(t)
	s := startServer(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seq := uint64(i) << 32
			for ctx.Err() == nil {
				d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(srcB)}}
				c, err := d.DialContext(ctx, "tcp", s.Addr().String())
				if err != nil {
					continue
				}
				r := bufio.NewReader(c)
				for ctx.Err() == nil {
					seq++
					c.SetDeadline(time.Now().Add(5 * time.Second))
					if _, err := c.Write([]byte(FormatWrite("b", seq, ""))); err != nil {
						break
					}
					if l, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(l, "OK") {
						break
					}
				}
				c.Close()
			}
		}()
	}
	type span struct{ from, to int64 }
	var fenced []span
	for range 20 {
		time.Sleep(10 * time.Millisecond)
		res, err := s.SetBlocklist([]string{srcB + "/32"})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		unfenceStart := time.Now().UnixNano()
		if _, err := s.SetBlocklist(nil); err != nil {
			t.Fatal(err)
		}
		fenced = append(fenced, span{res.TNs, unfenceStart})
	}
	cancel()
	wg.Wait()
	recs := readAudit(t, filepath.Join(dir, "audit.log"))
	if len(recs) < 20 {
		t.Fatalf("only %d writes accepted: the load did not run", len(recs))
	}
	for _, r := range recs {
		for _, f := range fenced {
			if r.TNs > f.from && r.TNs < f.to {
				t.Fatalf("write %+v accepted %d ns after the fence took effect", r, r.TNs-f.from)
			}
		}
	}
	t.Logf("%d writes audited across 20 fence/unfence cycles", len(recs))
}

func TestBlocklistSurvivesRestart(t *testing.T) {
	dir := sockDir(t)
	s := startServer(t, dir)
	if _, err := s.SetBlocklist([]string{srcB + "/32", "2001:db8::/64"}); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	s2 := startServer(t, dir)
	if got := s2.Blocklist(); got.Generation != 1 || strings.Join(got.Strings(), " ") != "127.0.0.3/32 2001:db8::/64" {
		t.Fatalf("after restart: %+v", got)
	}
	if got, _ := dial(t, s2, srcB).read(); got != "REFUSED 0 "+ReasonFenced {
		t.Fatalf("B after restart: got %q, want refused", got)
	}
	dial(t, s2, srcA).mustOK("HELLO a\n")
	s2.Stop()
	// A corrupt state file stops the start instead of un-fencing.
	if err := os.WriteFile(filepath.Join(dir, "blocklist.json"), []byte(`{"generation":1,"cidrs":["127.0.0.3/3`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Listen: "127.0.0.1:0", Admin: "unix://" + filepath.Join(dir, "admin.sock"), AuditPath: filepath.Join(dir, "audit.log")})
	if err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("New with a corrupt state file: %v, want a 'corrupt' error", err)
	}
}

func TestAdminBadInputKeepsTheBlocklist(t *testing.T) {
	dir := sockDir(t)
	s := startServer(t, dir)
	c, err := NewAdminClient("unix://"+filepath.Join(dir, "admin.sock"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.SetBlocklist(ctx, []string{"192.0.2.5/24", "::ffff:127.0.0.3/128"}); err != nil {
		t.Fatal(err)
	}
	want := "127.0.0.3/32 192.0.2.0/24" // host bits cleared, the IPv4-mapped block unmapped
	for name, body := range map[string][]string{
		"bare IP":       {"10.0.0.0/8", "198.51.100.7"},
		"ip:port":       {"100.64.0.7:0"},
		"garbage":       {"not-a-cidr"},
		"zone":          {"fe80::1%eth0/128"},
		"prefix length": {"10.0.0.0/33"},
	} {
		_, err := c.SetBlocklist(ctx, body)
		var se *StatusError
		if !errors.As(err, &se) || se.Code != 400 || !strings.Contains(se.Message, "unchanged") {
			t.Errorf("%s %v: got %v, want 400 saying the list is unchanged", name, body, err)
		}
	}
	for name, raw := range map[string]string{
		"not JSON":      `cidrs=10.0.0.0/8`,
		"missing cidrs": `{}`,
		"unknown field": `{"cidrs":[],"force":true}`,
		"wrong type":    `{"cidrs":"10.0.0.0/8"}`,
	} {
		code, msg := rawPut(t, filepath.Join(dir, "admin.sock"), raw)
		if code != 400 || !strings.Contains(msg, "unchanged") {
			t.Errorf("%s: got %d %q, want 400", name, code, msg)
		}
	}
	got, err := c.Blocklist(ctx)
	if err != nil || strings.Join(got.CIDRs, " ") != want || got.Generation != 1 {
		t.Fatalf("after bad input the list is %+v (%v), want %s at generation 1", got, err, want)
	}
	if got, _ := dial(t, s, srcB).read(); got != "REFUSED 0 "+ReasonFenced {
		t.Fatalf("B must still be fenced: %q", got)
	}
	if cl, err := c.Clients(ctx); err != nil || len(cl) != 0 {
		t.Fatalf("clients: %v %v", cl, err)
	}
}

func rawPut(t *testing.T, sock, body string) (int, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := "PUT " + PathBlocklist + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
		itoa(len(body)) + "\r\n\r\n" + body
	c.Write([]byte(req))
	r := bufio.NewReader(c)
	status, _ := r.ReadString('\n')
	var code int
	if f := strings.Fields(status); len(f) > 1 {
		for _, ch := range f[1] {
			code = code*10 + int(ch-'0')
		}
	}
	rest := new(strings.Builder)
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		rest.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return code, rest.String()
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestClientsListsNamedSessions(t *testing.T) {
	dir := sockDir(t)
	s := startServer(t, dir)
	a, b := dial(t, s, srcA), dial(t, s, srcB)
	a.mustOK("HELLO node-a\n")
	b.mustOK(FormatWrite("node-b", 7, ""))
	cl := s.Clients()
	if len(cl) != 2 || cl[0].ID != "node-a" || cl[0].Addr != a.c.LocalAddr().String() ||
		cl[1].ID != "node-b" || cl[1].Addr != b.c.LocalAddr().String() {
		t.Fatalf("clients %+v", cl)
	}
}

func TestTCPAdminNeedsItsToken(t *testing.T) {
	dir := sockDir(t)
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("0123456789abcdef-token\n"), 0o600)
	s := startServer(t, dir, func(o *Options) { o.AdminTCP, o.AdminTokenFile = "127.0.0.1:0", tok })
	ep := "tcp://" + s.AdminTCPAddr().String()
	for _, bad := range []string{"wrong-token-0123456789"} {
		c, _ := NewAdminClient(ep, bad)
		_, err := c.SetBlocklist(context.Background(), []string{"192.0.2.0/24"})
		var se *StatusError
		if !errors.As(err, &se) || se.Code != 401 {
			t.Fatalf("wrong token: %v, want 401", err)
		}
	}
	if _, err := NewAdminClient(ep, ""); err == nil {
		t.Fatal("a tcp:// endpoint without a token must be refused by the client")
	}
	c, _ := NewAdminClient(ep, "0123456789abcdef-token")
	if _, err := c.SetBlocklist(context.Background(), []string{"192.0.2.0/24"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Blocklist().Strings(); len(got) != 1 || got[0] != "192.0.2.0/24" {
		t.Fatalf("blocklist %v", got)
	}
	os.WriteFile(tok, []byte("short"), 0o600)
	if _, err := New(Options{Listen: "127.0.0.1:0", Admin: "unix://" + filepath.Join(dir, "a2.sock"), AuditPath: filepath.Join(dir, "a2.log"),
		AdminTCP: "127.0.0.1:0", AdminTokenFile: tok}); err == nil {
		t.Fatal("a token shorter than 16 characters must be refused")
	}
}

func TestMalformedRequestsGetERRAndAClose(t *testing.T) {
	dir := sockDir(t)
	s := startServer(t, dir)
	for _, line := range []string{
		"HELLO\n", "HELLO a b\n", "HELLO bad/id\n", "WRITE a 0\n", "WRITE a -1\n", "WRITE a x\n",
		"WRITE a 1 two words\n", "READ a 1\n", "WRITE a 1 " + strings.Repeat("x", MaxPayloadLen+1) + "\n",
		"WRITE " + strings.Repeat("a", MaxIDLen+1) + " 1\n", strings.Repeat("x", MaxLineLen+10) + "\n",
	} {
		c := dial(t, s, srcA)
		got, _ := c.send(line)
		if !strings.HasPrefix(got, "ERR ") {
			t.Errorf("%.40q: got %q, want ERR", line, got)
		}
		if _, err := c.read(); err == nil {
			t.Errorf("%.40q: the session stays open", line)
		}
	}
	if n := len(readAudit(t, filepath.Join(dir, "audit.log"))); n != 0 {
		t.Fatalf("%d records audited from malformed requests", n)
	}
}

// TestTornAuditTailIsCutOnStart: a crash while appending leaves a partial
// last line (never acknowledged); the next start cuts it so the log stays
// one JSON record per line.
func TestTornAuditTailIsCutOnStart(t *testing.T) {
	dir := sockDir(t)
	good := `{"client":"a","addr":"127.0.0.2:1","seq":1,"t_ns":1}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "audit.log"), []byte(good+`{"client":"a","addr":"127.0.0.2:1","se`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir)
	a := dial(t, s, srcA)
	a.mustOK(FormatWrite("a", 2, ""))
	recs := readAudit(t, filepath.Join(dir, "audit.log"))
	if len(recs) != 2 || recs[0].Seq != 1 || recs[1].Seq != 2 {
		t.Fatalf("audit after a torn tail: %+v", recs)
	}
}

func TestLogsCanBeCopiedThroughTheAdminAPI(t *testing.T) {
	dir := sockDir(t)
	s := startServer(t, dir)
	a := dial(t, s, srcA)
	a.mustOK(FormatWrite("a", 1, ""))
	a.mustOK(FormatWrite("a", 2, ""))
	c, err := NewAdminClient("unix://"+filepath.Join(dir, "admin.sock"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var buf strings.Builder
	if err := c.CopyLog(context.Background(), "audit", &buf); err != nil {
		t.Fatal(err)
	}
	disk, _ := os.ReadFile(filepath.Join(dir, "audit.log"))
	if buf.String() != string(disk) || strings.Count(buf.String(), "\n") != 2 {
		t.Fatalf("copied %q, on disk %q", buf.String(), disk)
	}
	var se *StatusError
	if err := c.CopyLog(context.Background(), "../etc/passwd", &buf); !errors.As(err, &se) || se.Code != 404 {
		t.Fatalf("unknown log: %v, want 404", err)
	}
}
