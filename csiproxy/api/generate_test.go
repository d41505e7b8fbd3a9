package api

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/fenceproof/fenceproof/csiproxy/api/internal/apigen"
	"github.com/fenceproof/fenceproof/internal/gomod"
)

// TestGeneratedCodeIsCurrent: the checked-in adapters are what apigen
// writes from the client module go.mod pins (run go generate
// ./csiproxy/api after a client upgrade).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	dir, err := gomod.Dir(context.Background(), "", apigen.ClientModule)
	if err != nil {
		t.Fatal(err)
	}
	files, err := apigen.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not current (%v): run go generate ./csiproxy/api", name, err)
		}
	}
	if len(Versions) != 23 {
		t.Errorf("%d group versions, want the 23 of client v1.1.3", len(Versions))
	}
}
