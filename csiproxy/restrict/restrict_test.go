package restrict

import (
	"errors"
	"strings"
	"testing"
)

const (
	testSrc = "fp-src"
	testTgt = "fp-tgt"
)

func expand(c Case) (string, string) {
	return Expand(c.A, DefaultPluginsPath, DefaultPodPath, testSrc, testTgt),
		Expand(c.B, DefaultPluginsPath, DefaultPodPath, testSrc, testTgt)
}

// TestEveryCaseViolatesExactlyItsRule holds the property the conformance
// suite relies on: the faithful validator refuses each case with its rule,
// and a validator skipping that one rule accepts it, so a host that forgets
// one restriction fails exactly that rule.
func TestEveryCaseViolatesExactlyItsRule(t *testing.T) {
	for _, c := range Cases {
		t.Run(c.Rule+"/"+c.Name, func(t *testing.T) {
			a, b := expand(c)
			err := New().Check(c, a, b)
			var v *Violation
			if !errors.As(err, &v) {
				t.Fatalf("accepted (%v), want refusal by %s", err, c.Rule)
			}
			if v.Rule != c.Rule {
				t.Fatalf("refused by %s (%v), want %s", v.Rule, v, c.Rule)
			}
			skip := New()
			skip.Skip = map[string]bool{c.Rule: true}
			if err := skip.Check(c, a, b); err != nil {
				t.Fatalf("with %s skipped still refused: %v", c.Rule, err)
			}
		})
	}
}

func TestValidCasesAccepted(t *testing.T) {
	for _, c := range ValidCases {
		a, b := expand(c)
		if err := New().Check(c, a, b); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}

// TestEveryRequestRuleHasACase: a rule without a refusal case could be
// dropped from a host unnoticed. State rules (LINK-003..006) and PIPE-001
// are exercised by the suite's own specs.
func TestEveryRequestRuleHasACase(t *testing.T) {
	have := map[string]bool{}
	for _, c := range Cases {
		if _, ok := RuleByID(c.Rule); !ok {
			t.Errorf("case %q names unknown rule %s", c.Name, c.Rule)
		}
		have[c.Rule] = true
	}
	for _, r := range Rules {
		if !r.State && r.ID != "PIPE-001" && !have[r.ID] {
			t.Errorf("rule %s has no refusal case", r.ID)
		}
	}
}

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		want   bool
	}{
		{`C:\pods`, `C:\pods\a`, true},
		{`C:\pods`, `c:\PODS\a\b`, true},
		{`C:\pods\`, `C:\pods\a`, true},
		{`C:\pods`, `C:\pods`, false},
		{`C:\pods`, `C:\pods\`, false},
		{`C:\pods`, `C:\pods-evil\a`, false},
		{`C:\pods`, `C:\podsa`, false},
		{`C:\pods`, `D:\pods\a`, false},
		{`C:\pods`, `C:/pods/a`, true},
		{`C:\pods`, ``, false},
	} {
		if got := Under(c.dir, c.p); got != c.want {
			t.Errorf("Under(%q, %q) = %v, want %v", c.dir, c.p, got, c.want)
		}
	}
}

func TestLinkState(t *testing.T) {
	emptyDir := Entry{Exists: true, IsDir: true, Empty: true}
	for _, c := range []struct {
		name     string
		src, tgt Entry
		want     string
	}{
		{"fresh source, empty target", Entry{}, emptyDir, ""},
		{"source exists", Entry{Exists: true, IsDir: true}, emptyDir, "LINK-003"},
		{"target missing", Entry{}, Entry{}, "LINK-004"},
		{"target is a file", Entry{}, Entry{Exists: true}, "LINK-004"},
		{"target not empty", Entry{}, Entry{Exists: true, IsDir: true}, "LINK-005"},
		{"target is a symlink", Entry{}, Entry{Exists: true, IsDir: true, IsSymlink: true, Empty: true}, "LINK-006"},
	} {
		err := New().LinkState(c.src, c.tgt)
		got := ""
		var v *Violation
		if errors.As(err, &v) {
			got = v.Rule
			if !v.IsState() {
				t.Errorf("%s: %s is not marked a state rule", c.name, v.Rule)
			}
		}
		if got != c.want {
			t.Errorf("%s: got %q (%v), want %q", c.name, got, err, c.want)
		}
		if c.want != "" {
			skip := New()
			skip.Skip = map[string]bool{c.want: true}
			if err := skip.LinkState(c.src, c.tgt); err != nil {
				t.Errorf("%s: with %s skipped: %v", c.name, c.want, err)
			}
		}
	}
}

func TestPipes(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{`\\.\pipe\csi-proxy-disk-v1`, true},
		{`csi-proxy-volume-v2alpha1`, true},
		{`csi-proxy-iscsi-v1alpha2`, true},
		{`\\.\pipe\csi-proxy-disk-v1beta3`, true},
		{`\\.\pipe\csi-proxy-debug-v1`, false},
		{`\\.\pipe\csi-proxy-disk-1`, false},
		{`\\.\pipe\csi-proxy-disk-v0`, false},
		{`\\.\pipe\csi-proxy-disk-v1gamma1`, false},
		{`\\.\pipe\docker_engine`, false},
	} {
		_, _, err := New().ParsePipe(c.name)
		if (err == nil) != c.ok {
			t.Errorf("ParsePipe(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
	}
	if g, v, err := New().ParsePipe(PipeName("smb", "v1beta2")); err != nil || g != "smb" || v != "v1beta2" {
		t.Errorf("round trip: %q %q %v", g, v, err)
	}
}

func TestCHAPIPsec(t *testing.T) {
	v := New()
	if err := v.MutualCHAPSecret("s", "x", true); err != nil {
		t.Errorf("1 byte with IPsec: %v", err)
	}
	if err := v.MutualCHAPSecret("s", "x", false); err == nil {
		t.Errorf("1 byte without IPsec accepted")
	}
	if err := v.MutualCHAPSecret("s", strings.Repeat("x", 17), true); err == nil {
		t.Errorf("17 bytes with IPsec accepted")
	}
	err := v.MutualCHAPSecret("s", "hunter2-secret-value", false)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error must refuse and not carry the secret: %v", err)
	}
}

func TestSMBParse(t *testing.T) {
	r, err := New().SMBRemotePath("remote_path", `\\FileServer.example.com\Share\sub\dir`)
	if err != nil {
		t.Fatal(err)
	}
	if r.Server != "FileServer.example.com" || r.Share != "Share" || r.Rest != `sub\dir` || r.Key() != `\\fileserver.example.com\share` {
		t.Errorf("parsed %+v key %q", r, r.Key())
	}
}

func TestPortalDefaultPort(t *testing.T) {
	_, port, err := New().Portal("p", "192.0.2.1", 0)
	if err != nil || port != DefaultISCSIPort {
		t.Errorf("port %d err %v, want %d", port, err, DefaultISCSIPort)
	}
}
