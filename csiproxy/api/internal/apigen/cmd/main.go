// Command apigen writes the generated files of package api into the
// current directory (go generate runs it in csiproxy/api).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/api/internal/apigen"
)

func main() {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", apigen.ClientModule).Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen: locating", apigen.ClientModule+":", err)
		os.Exit(1)
	}
	files, err := apigen.Generate(strings.TrimSpace(string(dir)))
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
