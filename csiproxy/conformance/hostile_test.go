package conformance_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/csiproxy/conformance"
	"github.com/fenceproof/fenceproof/csiproxy/simhost/fault"
	"github.com/fenceproof/fenceproof/rulebook"
)

// The hostile hosts pass what they take to be the suite's requests and
// are unsafe for the rest: each must fail at least one MUST rule of a
// default run (hardened profile, a seed from the clock).

// mustFailures are the MUST rules a run failed.
func mustFailures(r run) []string {
	must := map[string]bool{}
	for _, rule := range conformance.Rules() {
		must[rule.ID] = rule.Level == rulebook.Must
	}
	var out []string
	for _, id := range r.result.Failed() {
		if must[id] {
			out = append(out, id)
		}
	}
	return out
}

// TestRealisticBugsFail: a host with the realistic bugs the issue found (the
// kubelet directories and this machine's names compared case-sensitively,
// a deny-list of services instead of the allow-list), each alone and both
// together, fails MUST rules: the cases that catch them are drawn, not
// fixed.
func TestRealisticBugsFail(t *testing.T) {
	for _, c := range []struct {
		faults []string
		want   []string // rules it must be among the failures
	}{
		{[]string{"case-sensitive-roots"}, []string{"RPC-FS-RMDIR", "RPC-FS-MKDIR", "RPC-FS-CREATESYMLINK", "RPC-SMB-NEWSMBGLOBALMAPPING"}},
		{[]string{"service-denylist"}, []string{"RPC-SYS-STOPSERVICE", "RPC-SYS-STARTSERVICE"}},
		{[]string{"case-sensitive-roots", "service-denylist"}, []string{"RPC-FS-RMDIR", "RPC-SYS-STOPSERVICE"}},
	} {
		t.Run(strings.Join(c.faults, "+"), func(t *testing.T) {
			t.Parallel()
			var args []string
			for _, f := range c.faults {
				args = append(args, "--sim-fault", f)
			}
			r := sanity(t, args...)
			failed := mustFailures(r)
			if r.Exit != 1 || len(failed) == 0 {
				t.Fatalf("exit %d, MUST failures %v: the hostile host passed:\n%s", r.Exit, failed, r.Out)
			}
			for _, id := range c.want {
				if !slices.Contains(failed, id) {
					t.Errorf("%s did not fail (failed: %v)", id, failed)
				}
			}
		})
	}
}

// TestLearningHostFails: a host that learns what the suite's requests look
// like fails a default run. It is shown every string literal of the
// suite's source (the packages that build and send the probes), and it
// watches two runs of the suite, recording every request it refuses; from
// then on it checks only requests carrying one of those literals, or any
// string of three characters that both runs' refused requests held, and
// acts on the others unchecked. A suite that marked its probes with any
// fixed string, or repeated any value from run to run, would pass it.
func TestLearningHostFails(t *testing.T) {
	dir := t.TempDir()
	lits := suiteLiterals(t, "../restrict", ".")
	if err := os.WriteFile(filepath.Join(dir, "literals"), []byte(strings.Join(lits, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		r := sanity(t, "--sim-fault", "learn="+dir)
		if r.Exit != 0 {
			t.Fatalf("learning run %d: a host that checks every request while it learns must conform: exit %d\n%s", i+1, r.Exit, r.Out)
		}
	}
	r := sanity(t, "--sim-fault", "learn="+dir)
	failed := mustFailures(r)
	if r.Exit != 1 || len(failed) == 0 {
		t.Fatalf("the learning host passed (exit %d): it checked only requests carrying one of %d literals or a string both earlier runs held\n%s", r.Exit, len(lits), r.Out)
	}
	t.Logf("the learning host fails %v", failed)
}

// suiteLiterals are the string literals of the non-test Go files of the
// packages in dirs, unquoted, of three characters or more.
func suiteLiterals(t *testing.T, dirs ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(parsed, func(n ast.Node) bool {
				if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
					if s, err := strconv.Unquote(l.Value); err == nil && len([]rune(s)) >= 3 && !seen[s] && !strings.Contains(s, "\n") {
						seen[s] = true
						out = append(out, s)
					}
				}
				return true
			})
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d literals found in %v", len(out), dirs)
	}
	return out
}

// hostileArgs are the arguments the self test gives the hostile hosts
// that take one (the learning hosts have tests of their own).
var hostileArgs = map[string]string{
	"start-window": "1", // seconds: a run takes longer
}

// TestEveryHostileHostFails: every hostile host of the simulated host's
// table (fault.All) fails at least one MUST rule of a default run, and
// every MUST rule its Caught names, whatever the seed.
func TestEveryHostileHostFails(t *testing.T) {
	n := 0
	for _, f := range fault.All() {
		if !f.Hostile() || strings.HasPrefix(f.Name, "learn") {
			continue
		}
		spec := f.Name
		if f.Arg != "" {
			arg, ok := hostileArgs[f.Name]
			if !ok {
				t.Errorf("%s: no argument for the self test", f.Name)
				continue
			}
			spec += "=" + arg
		}
		n++
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			r := sanity(t, "--sim-fault", spec)
			failed := mustFailures(r)
			if r.Exit != 1 || len(failed) == 0 {
				t.Fatalf("exit %d, MUST failures %v: the hostile host passed:\n%s", r.Exit, failed, r.Out)
			}
			for _, id := range f.Caught {
				if !slices.Contains(failed, id) {
					t.Errorf("%s did not fail (failed: %v)", id, failed)
				}
			}
			t.Logf("fails %v", failed)
		})
	}
	if n < 20 {
		t.Fatalf("only %d hostile hosts in the table", n)
	}
}

// TestOrderLearningHostFails: a host that learns where in a run the
// suite's refused requests come (method, version, how many such requests
// before), and from the third run on checks nothing and refuses the
// requests at the positions every earlier run refused, fails a default
// run: the suite's sequence of calls is drawn, not fixed.
func TestOrderLearningHostFails(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		r := sanity(t, "--sim-fault", "learn-order="+dir)
		if r.Exit != 0 {
			t.Fatalf("learning run %d: a host that checks every request while it learns must conform: exit %d\n%s", i+1, r.Exit, r.Out)
		}
	}
	r := sanity(t, "--sim-fault", "learn-order="+dir)
	failed := mustFailures(r)
	if r.Exit != 1 || len(failed) == 0 {
		t.Fatalf("the order-learning host passed (exit %d)\n%s", r.Exit, r.Out)
	}
	t.Logf("the order-learning host fails %v", failed)
}
