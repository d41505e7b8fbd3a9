// Package clitest runs the fenceproof command the way vendors and CI do, for
// the tests of the conformance suites: one build of the binary per test
// package, and one process per suite run (Ginkgo allows one run per process),
// with a reports directory of its own whose JSON report is read back.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bin is the fenceproof binary Main built.
var Bin string

// Main builds the fenceproof command from cmdDir (relative to the test's
// package) into a temporary directory, runs the tests and removes it.
func Main(m *testing.M, cmdDir string) {
	dir, err := os.MkdirTemp("", "fenceproof-bin-")
	if err != nil {
		panic(err)
	}
	Bin = filepath.Join(dir, "fenceproof")
	build := exec.Command("go", "build", "-o", Bin, cmdDir)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building fenceproof:", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// Run is one run of a suite's command.
type Run struct {
	Exit int
	Out  string // standard output and error
	Dir  string // the reports directory
}

// RunSuite runs `fenceproof COMMAND --reports DIR --no-color ARGS...` with a
// reports directory of its own, failing the test when it does not end within
// limit, and decodes DIR/REPORT into result when the run wrote it.
func RunSuite(t *testing.T, limit time.Duration, command, report string, result any, args ...string) Run {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, Bin, append([]string{command, "--reports", dir, "--no-color"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("fenceproof %s %v did not finish within %s:\n%s", command, args, limit, Tail(out.String()))
	}
	r := Run{Out: out.String(), Dir: dir}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("fenceproof %s %v: %v", command, args, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, report)); err == nil {
		if err := json.Unmarshal(b, result); err != nil {
			t.Fatalf("%s: %v", report, err)
		}
	}
	return r
}

// Tail is the last 40 lines of s, for failure messages.
func Tail(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}
