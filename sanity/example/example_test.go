// Package example_test shows how a storage vendor runs the fenceproof
// conformance suite from its own Go tests, here against the reference driver
// started in-process on a unix socket.
package example_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fenceproof/fenceproof/driver"
	"github.com/fenceproof/fenceproof/sanity"
)

func TestVendorDriverConforms(t *testing.T) {
	dir := t.TempDir()
	d, err := driver.New(context.Background(), driver.Options{
		Backend:            "memory",
		StatePath:          filepath.Join(dir, "fences.db"),
		Secrets:            map[string]string{"userKey": "example-secret"},
		RequiredParameters: []string{"clusterID=example"},
	})
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
	cfg.Secrets = map[string]string{"userKey": "example-secret"}
	cfg.Parameters = map[string]string{"clusterID": "example"}
	cfg.Profile.HostBits = sanity.HostBitsNormalise
	sanity.Test(t, &cfg)
}
