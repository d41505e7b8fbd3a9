package refstore

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	rs "github.com/fenceproof/fenceproof/refstore"
)

func dir(t *testing.T) string {
	d, err := os.MkdirTemp("", "rsb") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func server(t *testing.T, d string) *rs.Server {
	t.Helper()
	s, err := rs.New(rs.Options{Listen: "127.0.0.1:0", Admin: "unix://" + filepath.Join(d, "admin.sock"),
		AuditPath: filepath.Join(d, "audit.log"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func TestApplyHandsTheWholeSetAndReturnsEnforced(t *testing.T) {
	d := dir(t)
	s := server(t, d)
	b, err := New("unix://"+filepath.Join(d, "admin.sock"), "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if err := b.Apply(ctx, prefixes("192.0.2.0/24", "2001:db8::/64", "192.0.2.0/24")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Blocklist().Strings(), " "); got != "192.0.2.0/24 2001:db8::/64" {
		t.Fatalf("refstore enforces %q", got)
	}
	if err := b.Apply(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Blocklist().Strings(); len(got) != 0 {
		t.Fatalf("after Apply(nil) refstore enforces %v", got)
	}
	if _, err := b.Peers(ctx, nil); err == nil {
		t.Fatal("Peers must say the backend has no port view")
	}
}

func TestApplyWaitsForALateRefstoreUntilItsDeadline(t *testing.T) {
	d := dir(t)
	b, err := New("unix://"+filepath.Join(d, "admin.sock"), "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := b.Apply(ctx, prefixes("192.0.2.0/24")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("no refstore: got %v, want the deadline", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	done := make(chan error, 1)
	go func() { done <- b.Apply(ctx2, prefixes("192.0.2.0/24")) }()
	time.Sleep(300 * time.Millisecond)
	s := server(t, d)
	if err := <-done; err != nil {
		t.Fatalf("refstore started late: %v", err)
	}
	if got := s.Blocklist().Strings(); len(got) != 1 {
		t.Fatalf("refstore enforces %v", got)
	}
}

func TestResyncRestoresALostBlocklist(t *testing.T) {
	d := dir(t)
	s := server(t, d)
	b, err := NewWithResync("unix://"+filepath.Join(d, "admin.sock"), "", 50*time.Millisecond, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Apply(context.Background(), prefixes("192.0.2.0/24")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetBlocklist(nil); err != nil { // someone wipes refstore's list
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(s.Blocklist().Prefixes) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the backend never re-applied the lost list")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestClientsAndTokenFile(t *testing.T) {
	d := dir(t)
	server(t, d)
	if _, err := New("unix://"+filepath.Join(d, "admin.sock"), filepath.Join(d, "no-such-token"), slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("a missing token file must be an error")
	}
	if _, err := New("http://x", "", slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("a bad endpoint must be an error")
	}
	b, err := New("unix://"+filepath.Join(d, "admin.sock"), "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := b.Clients(context.Background())
	if err != nil || len(cl) != 0 {
		t.Fatalf("clients %v %v", cl, err)
	}
}

// TestAFailedChangeIsRolledBackAtOnce uses a stand-in admin server (the
// real refstore cannot be made to fail after applying a change): it applies
// every PUT but answers the second one with 500. The backend must put the
// previous list back at once, so an acknowledged fence is not left lifted
// until the next resync.
func TestAFailedChangeIsRolledBackAtOnce(t *testing.T) {
	d := dir(t)
	l, err := net.Listen("unix", filepath.Join(d, "admin.sock"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var puts [][]string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body rs.BlocklistBody
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		puts = append(puts, body.CIDRs)
		n := len(puts)
		mu.Unlock()
		if n == 2 {
			w.WriteHeader(http.StatusInternalServerError)
			json.NewEncoder(w).Encode(rs.ErrorBody{Error: "injected after applying"})
			return
		}
		json.NewEncoder(w).Encode(rs.SetResult{CIDRs: body.CIDRs})
	})}
	go srv.Serve(l)
	defer srv.Close()
	b, err := New("unix://"+filepath.Join(d, "admin.sock"), "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Apply(context.Background(), prefixes("192.0.2.0/24")); err != nil {
		t.Fatal(err)
	}
	if err := b.Apply(context.Background(), nil); err == nil {
		t.Fatal("the injected failure was not returned")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(puts) != 3 || strings.Join(puts[2], ",") != "192.0.2.0/24" {
		t.Fatalf("PUTs %q: want the previous list re-applied after the failed change", puts)
	}
}
