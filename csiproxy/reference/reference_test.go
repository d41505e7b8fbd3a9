package reference

import (
	"context"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	osdisk "github.com/fenceproof/fenceproof/csiproxy/reference/osdisk"
	"github.com/fenceproof/fenceproof/csiproxy/winos"
)

var _ osdisk.API = (*winos.OS)(nil)

// interfaceMethods prints the methods of the interface API in a Go file.
func interfaceMethods(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "API" {
			return true
		}
		for _, m := range ts.Type.(*ast.InterfaceType).Methods.List {
			var b strings.Builder
			_ = printer.Fprint(&b, fset, m.Type)
			out = append(out, m.Names[0].Name+" "+b.String())
		}
		return false
	})
	return out
}

// TestInterfaceIsCSIProxys: the stand-in declares exactly csi-proxy's disk
// host API, method for method.
func TestInterfaceIsCSIProxys(t *testing.T) {
	dir, err := ModuleDir(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	theirs := interfaceMethods(t, filepath.Join(dir, "pkg", "os", "disk", "api.go"))
	self, _ := osdiskFile()
	ours := interfaceMethods(t, self)
	if strings.Join(theirs, "\n") != strings.Join(ours, "\n") || len(ours) == 0 {
		t.Fatalf("osdisk.API differs from csi-proxy's:\nours:\n%s\ntheirs:\n%s", strings.Join(ours, "\n"), strings.Join(theirs, "\n"))
	}
}
