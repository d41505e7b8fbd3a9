package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"
)

// runMainEnv makes the test binary run fenceproof's dispatch instead of the
// tests, so that the tests below see exit codes and output as users do.
const runMainEnv = "FENCEPROOF_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Exit(dispatch(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fenceproof runs the command line args in a process of its own and returns
// its exit code, standard output and standard error.
func fenceproof(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return fenceproofEnv(t, nil, args...)
}

// fenceproofEnv is fenceproof with more environment variables.
func fenceproofEnv(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("fenceproof %v did not end within 30 s (it ignored the flag?)\nstdout:\n%s\nstderr:\n%s", args, o.String(), e.String())
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, o.String(), e.String()
}

// TestHelpExitsZero: asking for help is not an error, for the command and
// for every subcommand however it is asked (-h, --help, help NAME); the
// help names what it is about.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, _ := fenceproof(t, args...)
		if code != 0 {
			t.Errorf("fenceproof %v: exit %d, want 0", args, code)
		}
		for name := range commands {
			if !strings.Contains(out, "  "+name+" ") {
				t.Errorf("fenceproof %v: standard output does not list %s:\n%s", args, name, out)
			}
		}
	}
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			code, out, errOut := fenceproof(t, args...)
			if code != 0 {
				t.Errorf("fenceproof %s: exit %d, want 0\n%s%s", strings.Join(args, " "), code, out, errOut)
			}
			if !strings.Contains(strings.ToLower(out+errOut), "usage") {
				t.Errorf("fenceproof %s printed no usage:\n%s%s", strings.Join(args, " "), out, errOut)
			}
		}
	}
}

// TestUsageErrorsExitTwo: no command, or one that does not exist, is a
// usage error: exit 2 and the commands on standard error, nothing on
// standard output (which a script may be reading).
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{nil, {"no-such-command"}, {"--no-such-flag"}} {
		code, out, errOut := fenceproof(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage: fenceproof") {
			t.Errorf("fenceproof %v: exit %d, stdout %q, stderr %q; want 2, nothing, the usage", args, code, out, errOut)
		}
	}
}

// TestVersionFlag: --version and -version are the version command, whose
// second word is the version (what `make image` puts in the image's tag).
func TestVersionFlag(t *testing.T) {
	_, want, _ := fenceproof(t, "version")
	if f := strings.Fields(want); len(f) < 2 || f[0] != "fenceproof" || f[1] != version {
		t.Fatalf("fenceproof version: %q, want \"fenceproof %s ...\"", want, version)
	}
	for _, flag := range []string{"--version", "-version"} {
		if code, out, _ := fenceproof(t, flag); code != 0 || out != want {
			t.Errorf("fenceproof %s: exit %d, %q; want 0, %q", flag, code, out, want)
		}
	}
}
