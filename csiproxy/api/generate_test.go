package api

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/csiproxy/api/internal/apigen"
)

// TestGeneratedCodeIsCurrent: the checked-in adapters are what apigen
// writes from the client module go.mod pins (run go generate
// ./csiproxy/api after a client upgrade).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", apigen.ClientModule).Output()
	if err != nil {
		t.Fatal(err)
	}
	files, err := apigen.Generate(strings.TrimSpace(string(dir)))
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
