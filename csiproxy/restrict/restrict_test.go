package restrict

import (
	"errors"
	"strings"
	"testing"
)

var testPlace = Place{
	Plugins: DefaultPluginsPath, Pods: DefaultPodPath, Escape: "fenceproof-escape",
	OSDisk: "0", OSVolume: `\\?\Volume{f3e9c0de-0000-4000-8000-000000000000}\`,
	SMBServer: "fileserver.example.com", SMBShare: "share", Portal: "192.0.2.10", Fresh: "fp-1",
}

func ruleOf(err error) string {
	var v *Violation
	if errors.As(err, &v) {
		return v.Rule
	}
	return ""
}

// TestEveryCaseViolatesExactlyItsRule holds the property the conformance
// suite relies on: the faithful validator refuses each request case with
// its rule, and a validator skipping that one rule accepts it, so a host
// that forgets one restriction is caught by exactly its cases.
func TestEveryCaseViolatesExactlyItsRule(t *testing.T) {
	for _, c := range Cases {
		if r, _ := RuleByID(c.Rule); r.State {
			continue
		}
		t.Run(c.Rule+"/"+string(c.Kind)+"/"+c.Name, func(t *testing.T) {
			val := Expand(c.Value, c.Kind, testPlace)
			err := New().Check(c.Kind, val, c.Port)
			if got := ruleOf(err); got != c.Rule {
				t.Fatalf("%q: refused by %q (%v), want %s", val, got, err, c.Rule)
			}
			skip := New()
			skip.Skip = map[string]bool{c.Rule: true}
			if err := skip.Check(c.Kind, val, c.Port); err != nil {
				t.Fatalf("%q: with %s skipped still refused: %v", val, c.Rule, err)
			}
		})
	}
}

// TestStateCases: the request of every state case is valid (only the
// host's state makes it wrong), and each state rule refuses what the host
// reports.
func TestStateCases(t *testing.T) {
	for _, c := range Cases {
		if r, _ := RuleByID(c.Rule); !r.State {
			continue
		}
		val := Expand(c.Value, c.Kind, testPlace)
		if err := New().Check(c.Kind, val, c.Port); err != nil {
			t.Errorf("%s %s: the request %q is refused on its own: %v", c.Rule, c.Name, val, err)
		}
	}
	v := New()
	dir := Entry{Exists: true, IsDir: true}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"link target exists", v.LinkState(dir, Entry{Exists: true}), "LINK-003"},
		{"link source missing", v.LinkState(Entry{}, Entry{}), "LINK-004"},
		{"link source is a file", v.LinkState(Entry{Exists: true}, Entry{}), "LINK-004"},
		{"link fine", v.LinkState(dir, Entry{}), ""},
		{"source leads to C:\\Windows", v.Reached("LINK-005", "source_path", Reach{Local: true, Path: `C:\Windows`}), "LINK-005"},
		{"path leads to a device", v.Reached("DIR-002", "path", Reach{Path: `\\.\NUL`}), "DIR-002"},
		{"path leads into plugins", v.Reached("DIR-002", "path", Reach{Local: true, Path: DefaultPluginsPath + `\x`}), ""},
		{"path leads to the pod path itself", v.Reached("DIR-002", "path", Reach{Local: true, Path: DefaultPodPath}), ""},
		{"path leads to a mapped share", v.Reached("DIR-002", "path", Reach{Remote: true, Path: `\\fs\share\x`}), ""},
		{"OS disk", v.SystemDisk("disk_number", 0, []uint32{0}), "SYSDISK-001"},
		{"data disk", v.SystemDisk("disk_number", 1, []uint32{0}), ""},
		{"OS volume", v.SystemVolume("volume_id", `\\?\VOLUME{A}\`, []string{`\\?\Volume{a}\`}), "SYSDISK-001"},
	} {
		if got := ruleOf(c.err); got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.name, got, c.err, c.want)
		}
	}
}

func TestValidAccepted(t *testing.T) {
	for _, c := range Valid {
		val := Expand(c.Value, c.Kind, testPlace)
		if err := New().Check(c.Kind, val, c.Port); err != nil {
			t.Errorf("%s %s %q: %v", c.Kind, c.Name, val, err)
		}
	}
}

// TestEveryRuleHasACase: a rule without a refusal case could be dropped
// from a host unnoticed; every case's kind is taken by some RPC field.
func TestEveryRuleHasACase(t *testing.T) {
	have, kinds := map[string]bool{}, map[Kind]bool{}
	for _, r := range RPCs {
		for _, f := range r.Fields {
			kinds[f.Kind] = true
		}
	}
	for _, c := range Cases {
		if _, ok := RuleByID(c.Rule); !ok {
			t.Errorf("case %q names unknown rule %s", c.Name, c.Rule)
		}
		if !kinds[c.Kind] {
			t.Errorf("case %q: no RPC field is of kind %s", c.Name, c.Kind)
		}
		have[c.Rule] = true
	}
	for _, r := range Rules {
		if r.ID != "PIPE-001" && !have[r.ID] {
			t.Errorf("rule %s has no refusal case", r.ID)
		}
	}
	rules := map[string]bool{}
	for _, r := range RPCs {
		if rules[r.Rule()] {
			t.Errorf("two RPCs have the rule %s", r.Rule())
		}
		rules[r.Rule()] = true
	}
}

// TestBypassInputs: each input that got past the validator before (issue
// record: Win32 normalisation, device names, UNC to this machine, 8.3
// aliases, case, streams, device prefixes) is refused, by the rule named.
func TestBypassInputs(t *testing.T) {
	const pods, plugins = DefaultPodPath, DefaultPluginsPath
	for _, c := range []struct {
		kind  Kind
		input string
		rule  string
	}{
		{KindPath, pods + `\.`, "PATH-009"},
		{KindPath, pods + `\ `, "PATH-010"},
		{KindPath, pods + `\. `, "PATH-010"},
		{KindPath, pods + `\.\.\`, "PATH-009"},
		{KindPath, plugins + `\.`, "PATH-009"},
		{KindPath, plugins + `\ `, "PATH-010"},
		{KindPath, plugins + `\. `, "PATH-010"},
		{KindPath, plugins + `\.\.\`, "PATH-009"},
		{KindPath, pods + `\CON`, "PATH-011"},
		{KindPath, pods + `\NUL`, "PATH-011"},
		{KindPath, pods + `\COM1.txt`, "PATH-011"},
		{KindPath, pods + `\CONIN$`, "PATH-011"},
		{KindPath, `\\localhost\share`, "PATH-003"},
		{KindPath, `\\127.0.0.1\share`, "PATH-003"},
		{KindPath, `\\localhost\C$\Windows`, "PATH-003"},
		{KindPath, `\\?\` + pods + `\x`, "PATH-003"},
		{KindPath, `\\.\` + pods + `\x`, "PATH-003"},
		{KindPath, pods + `\x::$INDEX_ALLOCATION`, "PATH-005"},
		{KindPath, `C:\var\lib\kubelet\plugins\KUBERN~1.IO\csi\x`, "PATH-012"},
		{KindPath, "C:\\var\\lib\\\u212aubelet\\pods\\x", "DIR-001"},
		{KindPath, `C:\Windows`, "DIR-001"},
		{KindPath, `C:\Windows\Temp`, "DIR-001"},
		{KindPath, pods, "DIR-001"},
		{KindSMBRemote, `\\localhost\share`, "SMB-005"},
		{KindSMBRemote, `\\127.0.0.1\share`, "SMB-005"},
		{KindSMBRemote, `\\LOCALHOST.\share`, "SMB-005"},
		{KindSMBRemote, `\\0--1.ipv6-literal.net\share`, "SMB-005"},
	} {
		t.Run(c.input, func(t *testing.T) {
			if got := ruleOf(New().Check(c.kind, c.input, 0)); got != c.rule {
				t.Fatalf("refused by %q, want %s", got, c.rule)
			}
		})
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
		{`C:\kubelet`, "C:\\\u212aubelet\\a", false},
	} {
		if got := Under(c.dir, c.p); got != c.want {
			t.Errorf("Under(%q, %q) = %v, want %v", c.dir, c.p, got, c.want)
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
