// Package gomod finds the source directory of a module of the build list.
//
// It asks `go mod download -json`, which fetches the module when the module
// cache does not hold it yet and then names its directory. `go list -m -f
// {{.Dir}}`, the obvious alternative, prints an empty directory for a module
// that is not cached: on a machine's first run that became a path relative
// to the root ("/deploy/...") and a build step failed.
package gomod

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
)

// Dir returns the directory of module (a path, optionally @version; without
// a version, the version the current module's build list selects),
// downloading it first when needed. goCmd is the go command ("go" when
// empty).
func Dir(ctx context.Context, goCmd, module string) (string, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	out, err := exec.CommandContext(ctx, goCmd, "mod", "download", "-json", module).Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr != nil && err == nil {
		err = jerr
	}
	switch {
	case m.Error != "":
		return "", fmt.Errorf("go mod download %s: %s", module, m.Error)
	case err != nil:
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			return "", fmt.Errorf("go mod download %s: %v: %s", module, err, ee.Stderr)
		}
		return "", fmt.Errorf("go mod download %s: %w", module, err)
	case m.Dir == "":
		return "", fmt.Errorf("go mod download %s: no directory", module)
	}
	return m.Dir, nil
}
