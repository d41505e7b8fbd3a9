// Command apigen writes the generated files of package api into the
// current directory (go generate runs it in csiproxy/api).
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fenceproof/fenceproof/csiproxy/api/internal/apigen"
	"github.com/fenceproof/fenceproof/internal/gomod"
)

func main() {
	dir, err := gomod.Dir(context.Background(), "", apigen.ClientModule)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen: locating", apigen.ClientModule+":", err)
		os.Exit(1)
	}
	files, err := apigen.Generate(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(".", name), src, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
