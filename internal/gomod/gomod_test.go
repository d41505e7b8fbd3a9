package gomod

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDirDownloadsIntoAnEmptyModuleCache: the directory of a module of the
// build list that the module cache does not hold yet (a machine's first
// run) is a real directory with the module's files.
func TestDirDownloadsIntoAnEmptyModuleCache(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads a module from the module proxy")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cache := t.TempDir()
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", cache).Run() })
	t.Setenv("GOMODCACHE", cache)
	dir, err := Dir(context.Background(), "", "github.com/google/btree")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("Dir = %q, which holds no go.mod: %v", dir, err)
	}
	if rel, err := filepath.Rel(cache, dir); err != nil || rel == ".." || filepath.IsAbs(rel) || rel[:2] == ".." {
		t.Errorf("Dir = %q, not in the empty module cache %s", dir, cache)
	}
}

func TestDirOfAnUnknownModuleIsAnError(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	if _, err := Dir(context.Background(), "", "example.invalid/no-such-module"); err == nil {
		t.Fatal("no error for a module outside the build list")
	}
}
