package sanity_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/rulebook/clitest"
	"github.com/fenceproof/fenceproof/sanity"
)

// TestBadInvocationsExit2: strings that cannot name an endpoint, selection
// expressions that do not parse and a reports directory that cannot be
// written end the run with exit 2 and a message naming the problem, before
// anything runs: no panic, no verdict, no reference driver left behind.
func TestBadInvocationsExit2(t *testing.T) {
	readOnly := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(readOnly, 0o500); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unix without path", []string{"--endpoint", "unix://"}, "absolute socket path"},
		{"unix relative path", []string{"--endpoint", "unix://driver.sock"}, "absolute socket path"},
		{"unix directory", []string{"--endpoint", "unix:///tmp/"}, "absolute socket path"},
		{"tcp without port", []string{"--endpoint", "tcp://localhost"}, "host:port"},
		{"tcp empty", []string{"--endpoint", "tcp://"}, "host:port"},
		{"tcp bad port", []string{"--endpoint", "tcp://127.0.0.1:99999"}, "port"},
		{"relative path", []string{"--endpoint", "driver.sock"}, "unix:// or tcp://"},
		{"bad label filter", []string{"--label-filter", "MUST && (", ""}, "--label-filter"},
		{"bad focus", []string{"--focus", "CIDR-(00"}, "--focus"},
		{"bad skip", []string{"--skip", "[a-"}, "--skip"},
		{"bad scale size", []string{"--scale-size", "0"}, "scaleSize"},
		{"missing secrets file", []string{"--secrets-file", "/nonexistent/secrets.yaml"}, "secrets file"},
		{"reports path is a file", []string{"--reports", regularFile(t)}, "reports directory"},
	}
	if os.Geteuid() != 0 {
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"unwritable reports dir", []string{"--reports", filepath.Join(readOnly, "sub")}, "reports directory"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args[len(args)-1] == "" {
				args = args[:len(args)-1]
			}
			r := sanityRun(t, time.Minute, args...)
			if r.Exit != 2 {
				t.Fatalf("exit %d, want 2:\n%s", r.Exit, clitest.Tail(r.Out))
			}
			if !strings.Contains(r.Out, c.want) {
				t.Errorf("message does not say %q:\n%s", c.want, r.Out)
			}
			if strings.Contains(r.Out, "panic") || strings.Contains(r.Out, "CONFORMS") {
				t.Errorf("a bad invocation panicked or gave a verdict:\n%s", r.Out)
			}
			if _, err := os.Stat(filepath.Join(r.Dir, "sanity.json")); err == nil {
				t.Errorf("a bad invocation wrote a report")
			}
		})
	}
}

// TestSecretsFileAndShortSecrets: secrets come from a file; a value too
// short to be meaningful is not looked for in error messages (the report
// says so), and a leaked long one is redacted everywhere the suite writes.
func TestSecretsFileAndShortSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secrets.yaml")
	const long = "fenceproof-long-secret-7c1e"
	if err := os.WriteFile(file, []byte("userID: admin\nuserKey: "+long+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := sanityRun(t, 2*time.Minute, "--driver-backend", "memory", "--secrets-file", file, "--driver-fault", "leak-secret")
	if v := r.verdict(t, "ERR-005"); v != sanity.VerdictFail {
		t.Errorf("ERR-005 is %s, want FAIL for the leaked long secret", v)
	}
	rr, _ := r.result.Rule("ERR-005")
	if !strings.Contains(strings.Join(rr.Notes, " "), "userID") {
		t.Errorf("ERR-005 does not say the short secret userID was not checked: %v", rr.Notes)
	}
	if strings.Contains(rr.Reason, "userID") {
		t.Errorf("ERR-005 charged the short secret: %s", rr.Reason)
	}
	expectNoSecret(t, r, long)
}

// TestRunBudget: a driver whose every Fence hangs, under a run budget far
// shorter than the suite would need, still ends with a written report.
func TestRunBudget(t *testing.T) {
	r := sanityRun(t, 2*time.Minute, "--driver-backend", "memory", "--driver-fault", "delay=Fence:10m", "--rpc-timeout", "2s", "--timeout", "5s")
	if r.Exit != 1 {
		t.Fatalf("exit %d, want 1:\n%s", r.Exit, clitest.Tail(r.Out))
	}
	if len(r.result.Rules) == 0 {
		t.Fatalf("no report was written:\n%s", clitest.Tail(r.Out))
	}
}

func regularFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
