package winos

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/internal/gomod"
)

// csiproxyStrings returns every constant string expression (literals and
// concatenations of literals) in csi-proxy v1.1.3's pkg/os sources, read
// from the module cache.
func csiproxyStrings(t *testing.T) map[string]bool {
	t.Helper()
	dir, err := gomod.Dir(context.Background(), "", "github.com/kubernetes-csi/csi-proxy")
	if err != nil {
		t.Fatalf("locating csi-proxy's module: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "pkg", "os", "*", "api.go"))
	if len(files) < 6 {
		t.Fatalf("csi-proxy's pkg/os sources: %v", files)
	}
	found := map[string]bool{}
	var eval func(e ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				s, err := strconv.Unquote(x.Value)
				return s, err == nil
			}
		case *ast.BinaryExpr:
			if x.Op == token.ADD {
				a, ok1 := eval(x.X)
				b, ok2 := eval(x.Y)
				return a + b, ok1 && ok2
			}
		case *ast.ParenExpr:
			return eval(x.X)
		}
		return "", false
	}
	for _, f := range files {
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if e, ok := n.(ast.Expr); ok {
				if s, ok := eval(e); ok {
					found[s] = true
				}
			}
			return true
		})
	}
	return found
}

// TestScriptsAreCSIProxys: every script this package builds is one
// csi-proxy v1.1.3 builds, word for word, and every environment variable
// it names is read by the script (or its optional parts).
func TestScriptsAreCSIProxys(t *testing.T) {
	src := csiproxyStrings(t)
	for op, s := range Scripts {
		if !src[s.Text] {
			t.Errorf("%s: %q is not in csi-proxy v1.1.3's pkg/os", op, s.Text)
		}
		for _, name := range s.Env {
			all := strings.ToLower(s.Text + Scripts["ConnectTargetChapUser"].Text + Scripts["ConnectTargetChapSecret"].Text)
			if !strings.Contains(all, strings.ToLower("env:"+name)) {
				t.Errorf("%s: the script does not read $Env:%s", op, name)
			}
			if Fields[name] == "" {
				t.Errorf("%s: environment variable %s names no request field", op, name)
			}
		}
	}
}

const canaryDir = `C:\var\lib\kubelet\pods\Zq4-drawn_name`

// TestEnvironmentKeepsPayloadsInert: csi-proxy v1.1.3 passes request fields
// as environment variables, so a payload in one never runs.
func TestEnvironmentKeepsPayloadsInert(t *testing.T) {
	h := hostmodel.New(hostmodel.Config{PodPath: `C:\var\lib\kubelet\pods`, SMBShares: []string{`\\fs\share`}})
	o := New(h)
	payload := `x"; New-Item -ItemType Directory -Path '` + canaryDir + `'; "`
	_ = o.FormatVolume(payload)
	_ = o.NewSmbGlobalMapping(`\\fs\share`, payload, payload)
	if len(h.Canaries()) != 0 || len(h.Commands()) != 2 {
		t.Fatalf("canaries %v after %d commands", h.Canaries(), len(h.Commands()))
	}
}

// TestInterpolationRunsPayloads: the fault that splices one field into the
// script text lets a payload in that field (and only that field) run.
func TestInterpolationRunsPayloads(t *testing.T) {
	h := hostmodel.New(hostmodel.Config{PodPath: `C:\var\lib\kubelet\pods`, SMBShares: []string{`\\fs\share`}})
	o := &OS{H: h, Interpolate: map[string]bool{"smbpassword": true}}
	payload := `x; New-Item -ItemType Directory -Path '` + canaryDir + `'; #`
	_ = o.NewSmbGlobalMapping(`\\fs\share`, payload, "secret")
	if len(h.Canaries()) != 0 {
		t.Fatalf("a payload in the user name ran: %v", h.Canaries())
	}
	_ = o.RemoveSmbGlobalMapping(`\\fs\share`)
	_ = o.NewSmbGlobalMapping(`\\fs\share`, "user", payload)
	if len(h.Canaries()) != 1 || !h.Exists(canaryDir) {
		t.Fatalf("the interpolated password's payload did not run: %v", h.Canaries())
	}
	for _, c := range h.Commands() {
		for _, e := range c.Env {
			if strings.HasPrefix(e, "smbpassword=") {
				t.Fatalf("the interpolated field is still passed as a variable: %v", c.Env)
			}
		}
	}
}
