package restrict

import (
	"strings"
	"testing"
)

// TestBypassInputs: each input that got past the validator before, named
// after the bug it pins, is refused by the rule named.
func TestBypassInputs(t *testing.T) {
	const pods, plugins = DefaultPodPath, DefaultPluginsPath
	for _, c := range []struct {
		bug   string
		kind  Kind
		input string
		rule  string
	}{
		{"Win32 drops a dot component", KindPath, pods + `\.`, "PATH-009"},
		{"Win32 drops a space component", KindPath, pods + `\ `, "PATH-010"},
		{"Win32 drops a dot-space component", KindPath, pods + `\. `, "PATH-010"},
		{"Win32 drops dot components with a separator", KindPath, pods + `\.\.\`, "PATH-009"},
		{"pods dot separator wipes the pod directories", KindPath, pods + `\.\`, "PATH-009"},
		{"Win32 drops dot components in plugins", KindPath, plugins + `\.\`, "PATH-009"},
		{"device name", KindPath, pods + `\CON`, "PATH-011"},
		{"device name with extension", KindPath, pods + `\COM1.txt`, "PATH-011"},
		{"device name with a space before its extension", KindPath, pods + `\nul .log`, "PATH-011"},
		{"console device", KindPath, pods + `\CONIN$`, "PATH-011"},
		{"UNC to localhost", KindPath, `\\localhost\C$\var\lib\kubelet\pods\x`, "PATH-003"},
		{"verbatim prefix", KindPath, `\\?\` + pods + `\x`, "PATH-003"},
		{"index allocation stream", KindPath, pods + `\x::$INDEX_ALLOCATION`, "PATH-005"},
		{"8.3 alias of the plugins path", KindPath, `C:\var\lib\kubelet\plugins\KUBERN~1.IO\csi\x`, "PATH-012"},
		{"tab in a name", KindPath, pods + "\\x\ty", "PATH-008"},
		{"NUL in a name", KindPath, pods + "\\x\x00y", "PATH-008"},
		{"angle bracket in a name", KindPath, pods + `\x<y`, "PATH-013"},
		{"Kelvin sign for K", KindPath, "C:\\var\\lib\\\u212aubelet\\pods\\x", "DIR-001"},
		{"dotless i for i (Unicode folds it, NTFS does not)", KindPath, "C:\\var\\l\u0131b\\kubelet\\pods\\x", "DIR-001"},
		{"long s for s (Unicode folds it, NTFS does not)", KindPath, "C:\\var\\lib\\kubelet\\pod\u017f\\x", "DIR-001"},
		{"capital I with dot for i (lower-casing folds it)", KindPath, "C:\\var\\l\u0130b\\kubelet\\pods\\x", "DIR-001"},
		{"full-width letter in the pod path", KindPath, "C:\\var\\lib\\kubelet\\\uff50ods\\x", "DIR-001"},
		{"the kubelet directory in upper case", KindPath, `C:\VAR\LIB\KUBELET\PODS`, "DIR-001"},
		{"the kubelet directory itself", KindPath, `C:\var\lib\kubelet`, "DIR-001"},
		{"a Windows directory", KindPath, `C:\Windows\System32\evil`, "DIR-001"},
		{"symlink source in System32", KindLinkSource, `C:\Windows\System32`, "LINK-001"},
		{"SMB to localhost", KindSMBRemote, `\\localhost\share`, "SMB-005"},
		{"SMB to LOCALHOST with a final dot", KindSMBRemote, `\\LOCALHOST.\share`, "SMB-005"},
		{"SMB to full-width localhost", KindSMBRemote, `\\ｌｏｃａｌｈｏｓｔ\share`, "SMB-005"},
		{"SMB to 127.0.0.1", KindSMBRemote, `\\127.0.0.1\share`, "SMB-005"},
		{"SMB to 0x7f000001", KindSMBRemote, `\\0x7f000001\share`, "SMB-005"},
		{"SMB to 0X7F000001", KindSMBRemote, `\\0X7F000001\share`, "SMB-005"},
		{"SMB to 2130706433", KindSMBRemote, `\\2130706433\share`, "SMB-005"},
		{"SMB to 017700000001", KindSMBRemote, `\\017700000001\share`, "SMB-005"},
		{"SMB to 0177.0.0.1", KindSMBRemote, `\\0177.0.0.1\share`, "SMB-005"},
		{"SMB to 127.1", KindSMBRemote, `\\127.1\share`, "SMB-005"},
		{"SMB to 0x7f.1", KindSMBRemote, `\\0x7f.1\share`, "SMB-005"},
		{"SMB to 127.0.65535", KindSMBRemote, `\\127.0.65535\share`, "SMB-005"},
		{"SMB to 0.0.0.0", KindSMBRemote, `\\0.0.0.0\share`, "SMB-005"},
		{"SMB to ::1", KindSMBRemote, `\\0--1.ipv6-literal.net\share`, "SMB-005"},
		{"SMB to ::1 spelled out", KindSMBRemote, `\\0-0-0-0-0-0-0-1.IPV6-LITERAL.NET\share`, "SMB-005"},
		{"SMB to ::ffff:127.0.0.1", KindSMBRemote, `\\--ffff-7f00-1.ipv6-literal.net\share`, "SMB-005"},
		{"SMB to the node's FQDN", KindSMBRemote, `\\NODE7.cluster.example\share`, "SMB-005"},
		{"SMB to the node's short name", KindSMBRemote, `\\Node7\share`, "SMB-005"},
		{"SMB to the node's address", KindSMBRemote, `\\10.1.2.7\share`, "SMB-005"},
		{"SMB to the node's address as a number", KindSMBRemote, `\\0xa010207\share`, "SMB-005"},
		{"SMB to the node's IPv6 address", KindSMBRemote, `\\fd00--7.ipv6-literal.net\share`, "SMB-005"},
		{"SMB to a name below localhost", KindSMBRemote, `\\x.localhost\share`, "SMB-005"},
		{"mutual CHAP secret of 10 bytes", KindMutualCHAP, "0123456789", "CHAP-001"},
		{"a running service outside the allow-list", KindService, "WinDefend", "SVC-001"},
	} {
		t.Run(c.bug, func(t *testing.T) {
			if got := ruleOf(testValidator().Check(c.kind, c.input, 0)); got != c.rule {
				t.Fatalf("%q refused by %q, want %s", c.input, got, c.rule)
			}
		})
	}
}

// TestValidForms: forms a host must accept, that the validator refused
// before.
func TestValidForms(t *testing.T) {
	for _, c := range []struct {
		form  string
		kind  Kind
		input string
	}{
		{"share with a trailing separator (csi-proxy accepts it)", KindSMBRemote, `\\fileserver.example.com\share\`},
		{"share below a trailing-separator path", KindSMBRemote, `\\fileserver.example.com\share\sub\`},
		{"share by a public address", KindSMBRemote, `\\192.0.2.20\share`},
		{`\\.\Volume{GUID}\, the KEP's volume ID format`, KindVolumeID, `\\.\Volume{f3e9c0de-0000-4000-8000-000000000001}\`},
		{`\\.\Volume{GUID} without the separator`, KindVolumeID, `\\.\Volume{F3E9C0DE-0000-4000-8000-000000000001}`},
		{`\\?\Volume{GUID}\, csi-proxy's`, KindVolumeID, `\\?\Volume{f3e9c0de-0000-4000-8000-000000000001}\`},
		{"eui. name (RFC 3720)", KindIQN, "eui.02004567A425678D"},
		{"naa. name of 64 bits (RFC 3980)", KindIQN, "naa.52004567BA64678D"},
		{"naa. name of 128 bits (RFC 3980)", KindIQN, "naa.62004567BA64678D0123456789ABCDEF"},
		{"iqn. name", KindIQN, "iqn.1991-05.com.microsoft:node-7"},
		{"a name with dotless i (a directory of its own on NTFS)", KindPath, DefaultPodPath + "\\l\u0131b"},
		{"the pod path in upper case, below it", KindPath, `C:\VAR\LIB\KUBELET\PODS\x`},
	} {
		if err := testValidator().Check(c.kind, c.input, 0); err != nil {
			t.Errorf("%s: %q refused: %v", c.form, c.input, err)
		}
	}
	if r, err := New().SMBRemotePath("remote_path", `\\FS.example.com\Share\`); err != nil || r.Key() != `\\fs.example.com\share` || r.Rest != "" {
		t.Errorf("trailing separator: %+v %v", r, err)
	}
	for _, bad := range []string{"eui.02004567A425678", "naa.52004567BA64678D0", "eui.0200456GA425678D"} {
		if ruleOf(New().IQN("iqn", bad)) != "ISCSI-001" {
			t.Errorf("%q accepted", bad)
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
		{`C:\pods`, `C:\pod` + "\u017f" + `\a`, false},
		{`C:\pods\`, `C:\pods\a`, true},
		{`C:\pods`, `C:\pods`, false},
		{`C:\pods`, `C:\pods\`, false},
		{`C:\pods`, `C:\pods-evil\a`, false},
		{`C:\pods`, `C:\podsa`, false},
		{`C:\pods`, `D:\pods\a`, false},
		{`C:\pods`, `C:/pods/a`, true},
		{`C:\pods`, ``, false},
		{`C:\kubelet`, "C:\\\u212aubelet\\a", false},
		{"C:\\\u00e9t\u00e9", "C:\\\u00c9T\u00c9\\a", true},
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
