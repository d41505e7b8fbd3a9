package writer

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/refstore"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) attempts(t *testing.T) []Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Attempt
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var a Attempt
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, a)
	}
	return out
}

func startRefstore(t *testing.T, dir, listen string) *refstore.Server {
	t.Helper()
	s, err := refstore.New(refstore.Options{Listen: listen, Admin: "unix://" + filepath.Join(dir, "admin.sock"),
		AuditPath: filepath.Join(dir, "audit.log"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	return s
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSequencesIncreaseAcrossRefusalsAndRestarts runs a writer through a
// fence, an unfence and a restart of refstore: every outcome is logged, the
// sequence strictly increases across every reconnect, and each
// acknowledged write is in the audit log.
func TestSequencesIncreaseAcrossRefusalsAndRestarts(t *testing.T) {
	dir, err := os.MkdirTemp("", "wr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s := startRefstore(t, dir, "127.0.0.1:0")
	addr := s.Addr().String()
	log := &syncBuf{}
	w, err := New(Options{Server: addr, ID: "w1", Source: "127.0.0.3", Interval: 2 * time.Millisecond,
		MaxBackoff: 20 * time.Millisecond, StartSeq: 100, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	count := func(o string) func() bool {
		n := w.Counts()[o]
		return func() bool { return w.Counts()[o] >= n+5 }
	}
	waitFor(t, "writes", count(OutcomeOK))
	if _, err := s.SetBlocklist([]string{"127.0.0.3/32"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "refusals", count(OutcomeRefused))
	if _, err := s.SetBlocklist(nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "writes after the unfence", count(OutcomeOK))
	s.Stop()
	waitFor(t, "errors while refstore is down", count(OutcomeError))
	s = startRefstore(t, dir, addr)
	defer s.Stop()
	waitFor(t, "writes after the restart", count(OutcomeOK))
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run: %v", err)
	}
	as := log.attempts(t)
	prev := uint64(99)
	for _, a := range as {
		if a.Seq <= prev {
			t.Fatalf("sequence %d after %d", a.Seq, prev)
		}
		prev = a.Seq
		if a.Client != "w1" || a.TNs < a.SendNs || a.SendNs == 0 {
			t.Fatalf("bad attempt %+v", a)
		}
		if a.Outcome == OutcomeOK && (a.Server == 0 || !strings.HasPrefix(a.Local, "127.0.0.3:")) {
			t.Fatalf("ok attempt without server time or local address: %+v", a)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "audit.log"))
	for _, a := range as {
		if a.Outcome == OutcomeOK && !strings.Contains(string(raw), `"seq":`+jsonInt(a.Seq)+",") {
			t.Fatalf("acknowledged seq %d missing from the audit log", a.Seq)
		}
	}
	c := w.Counts()
	if c[OutcomeOK] == 0 || c[OutcomeRefused] == 0 || c[OutcomeError] == 0 || c[OutcomeOK]+c[OutcomeRefused]+c[OutcomeError] != len(as) {
		t.Fatalf("counts %v for %d logged attempts", c, len(as))
	}
}

func jsonInt(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func TestOptionsAreChecked(t *testing.T) {
	for _, o := range []Options{
		{Server: "127.0.0.1:1", ID: ""},
		{Server: "127.0.0.1:1", ID: "bad id"},
		{Server: "nohostport", ID: "w"},
		{Server: "127.0.0.1:1", ID: "w", Source: "not-an-ip"},
		{Server: "127.0.0.1:1", ID: "w", Payload: refstore.MaxPayloadLen + 1},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	w, err := New(Options{Server: "127.0.0.1:1", ID: "w"})
	if err != nil || w.next < uint64(time.Now().Add(-time.Hour).UnixMicro()) {
		t.Fatalf("default start sequence must be the time in µs: %v %d", err, w.next)
	}
}
