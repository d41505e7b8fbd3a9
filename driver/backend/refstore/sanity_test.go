package refstore_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/fenceproof/fenceproof/driver"
	rs "github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/sanity"
)

// TestDriverWithRefstoreBackendConforms runs the conformance suite against
// the reference driver whose fences are enforced by a real refstore, with a
// connected client so GetFenceClients has something to report.
func TestDriverWithRefstoreBackendConforms(t *testing.T) {
	dir, err := os.MkdirTemp("", "rsc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := rs.New(rs.Options{Listen: "127.0.0.1:0", Admin: "unix://" + filepath.Join(dir, "admin.sock"),
		AuditPath: filepath.Join(dir, "audit.log"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.Write([]byte(rs.FormatHello("client-1")))
	if _, err := c.Read(make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	d, err := driver.New(context.Background(), driver.Options{Backend: "refstore", RefstoreAdmin: "unix://" + filepath.Join(dir, "admin.sock"),
		StatePath: filepath.Join(dir, "fences.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	sock := "unix://" + filepath.Join(dir, "driver.sock")
	if _, err := d.Start(sock); err != nil {
		t.Fatal(err)
	}
	cfg := sanity.Defaults()
	cfg.Endpoint = sock
	sanity.Test(t, &cfg)
	if got := srv.Blocklist().Strings(); len(got) != 0 {
		t.Fatalf("the suite left %v in refstore's blocklist", got)
	}
}
