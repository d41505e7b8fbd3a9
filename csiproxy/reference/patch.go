package reference

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/fenceproof/fenceproof/internal/gomod"
)

// modulePath is csi-proxy's module.
const modulePath = "github.com/kubernetes-csi/csi-proxy"

// ModuleDir is where the go command keeps csi-proxy v1.1.3's source
// (downloaded first when the module cache does not hold it).
func ModuleDir(ctx context.Context, goCmd string) (string, error) {
	return gomod.Dir(ctx, goCmd, modulePath)
}

// osdiskFile is this package's stand-in for pkg/os/disk/api.go.
func osdiskFile() (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the reference package's source")
	}
	return filepath.Join(filepath.Dir(self), "osdisk", "api.go"), nil
}

// PatchedModule copies csi-proxy's module into dir with pkg/os/disk/api.go
// replaced by osdisk/api.go (the disk host API interface alone), and
// returns the copy's path. Nothing else of csi-proxy changes.
func PatchedModule(ctx context.Context, goCmd, dir string) (string, error) {
	src, err := ModuleDir(ctx, goCmd)
	if err != nil {
		return "", err
	}
	stand, err := osdiskFile()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, "csi-proxy@"+Version)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if rel == "vendor" || rel == "integrationtests" || rel == "docs" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		from := p
		if rel == filepath.Join("pkg", "os", "disk", "api.go") {
			from = stand
		}
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	return dst, err
}

// Build builds pkg (a main package of this module, e.g. ./cmd/fenceproof)
// into out with the disk group served: the csiproxy_disk tag, and a copy
// of go.mod (in work) that replaces csi-proxy by PatchedModule. root is
// this module's directory.
func Build(ctx context.Context, goCmd, root, work, pkg, out string) error {
	patched, err := PatchedModule(ctx, goCmd, work)
	if err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	mod = append(mod, []byte(fmt.Sprintf("\nreplace %s => %s\n", modulePath, patched))...)
	modFile := filepath.Join(work, "go.reference.mod")
	if err := os.WriteFile(modFile, mod, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "go.reference.sum"), sum, 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, goCmd, "build", "-tags", "csiproxy_disk", "-modfile", modFile, "-o", out, pkg)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build -tags csiproxy_disk %s: %v\n%s", pkg, err, stderr.String())
	}
	return nil
}
