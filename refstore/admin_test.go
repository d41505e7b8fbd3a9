package refstore

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminEndpointGrammar: the server's --admin is a unix socket and the
// client's endpoint a unix socket or tcp host:port, both in the grammar of
// package endpoint; anything else is refused before a directory is made or a
// request is sent.
func TestAdminEndpointGrammar(t *testing.T) {
	dir := sockDir(t)
	quiet := slog.New(slog.DiscardHandler)
	sock := "unix://" + filepath.Join(dir, "admin.sock")
	for _, admin := range []string{
		"tcp://127.0.0.1:9000",                   // the TCP admin listener is AdminTCP
		"unix://relative/admin.sock",             // not absolute
		"unix:///",                               // no socket name
		filepath.Join(dir, "bare", "admin.sock"), // no scheme
		"http://127.0.0.1:9000",
	} {
		_, err := New(Options{Listen: "127.0.0.1:0", Admin: admin, AuditPath: filepath.Join(dir, "audit.log"), Logger: quiet})
		if err == nil || !strings.Contains(err.Error(), "want unix:///path.sock") {
			t.Errorf("New with --admin %q: %v, want an error naming unix:///path.sock", admin, err)
		}
	}
	// Refused before New makes the socket's directory (this once made
	// directories named "tcp:" and "http:" in the working directory).
	for _, d := range []string{"relative", "tcp:", "http:", filepath.Join(dir, "bare")} {
		if _, err := os.Stat(d); err == nil {
			os.Remove(d)
			t.Errorf("a refused --admin made the directory %s", d)
		}
	}
	s, err := New(Options{Listen: "127.0.0.1:0", Admin: sock, AuditPath: filepath.Join(dir, "audit.log"), Logger: quiet})
	if err != nil {
		t.Fatalf("New with --admin %q: %v", sock, err)
	}
	s.Stop()

	for _, ep := range []string{sock, "tcp://127.0.0.1:9000", "tcp://[::1]:9000", "tcp://refstore.example:9000"} {
		if _, err := NewAdminClient(ep, "0123456789abcdef-token"); err != nil {
			t.Errorf("NewAdminClient(%q): %v", ep, err)
		}
	}
	for ep, want := range map[string]string{
		"":                          "must start with unix:// or tcp://",
		"127.0.0.1:9000":            "must start with unix:// or tcp://",
		"unix://":                   "absolute socket path",
		"unix://admin.sock":         "absolute socket path",
		"tcp://":                    "host:port",
		"tcp://:9000":               "host:port",
		"tcp://127.0.0.1:99999":     "not between 1 and 65535",
		"tcp://127.0.0.1:9000/path": "host:port",
	} {
		_, err := NewAdminClient(ep, "0123456789abcdef-token")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "admin endpoint") {
			t.Errorf("NewAdminClient(%q): %v, want an admin endpoint error naming %q", ep, err, want)
		}
	}
}
