package hostmodel

import "testing"

// TestWin32 pins the normalisation each bypass input relies on: where the
// Win32 layer sends a path the kubelet-directory prefix test reads as
// below the pod path.
func TestWin32(t *testing.T) {
	const pods = `C:\var\lib\kubelet\pods`
	for _, c := range []struct{ in, want string }{
		{pods + `\x`, pods + `\x`},
		{pods + `\.`, pods},
		{pods + `\ `, pods},
		{pods + `\. `, pods},
		{pods + `\.\.\`, pods},
		{pods + `\...`, pods},
		{pods + `\x.\y`, pods + `\x\y`},
		{pods + `\x \y`, pods + `\x \y`},
		{pods + `\t\..\..\..\..\..\Windows`, `C:\Windows`},
		{`c:/var/lib/x/`, `C:\var\lib\x`},
		{`var\lib\x`, `C:\Windows\System32\var\lib\x`},
		{`C:x`, `C:\Windows\System32\x`},
		{`\x`, `C:\x`},
		{`\\?\C:\pods\t`, `C:\pods\t`},
		{`\\?\C:\pods\..`, `C:\pods\..`},
		{`\\?\C:\pods\x. `, `C:\pods\x. `},
		{`\\.\C:\pods\..\..\Windows`, `C:\Windows`},
		{`\\.\C:\..\..`, `C:\`},
		{`\\localhost\C$\Windows`, `C:\Windows`},
		{`\\127.0.0.1\c$\Windows\System32`, `C:\Windows\System32`},
		{`\\FENCEPROOF-NODE\ADMIN$\Temp`, `C:\Windows\Temp`},
		{`\\0--1.ipv6-literal.net\C$\x`, `C:\x`},
		{`\\?\UNC\localhost\C$\x`, `C:\x`},
		{`\\.\UNC\127.0.0.2\C$\x`, `C:\x`},
		{`\\fileserver\share\a\..\..\b`, `\\fileserver\share\b`},
		{pods + `\CON`, `\\.\CON`},
		{pods + `\nul`, `\\.\NUL`},
		{pods + `\COM1.txt`, `\\.\COM1`},
		{pods + `\CONIN$`, `\\.\CONIN$`},
		{pods + `\conout$.log`, `\\.\CONOUT$`},
		{pods + `\LPT¹`, `\\.\LPT¹`},
		{pods + `\AUX \.`, `\\.\AUX`},
		{pods + `\CON\x`, pods + `\CON\x`},
		{pods + `\t::$INDEX_ALLOCATION`, pods + `\t`},
		{pods + `\t:evil\x`, pods + `\t\x`},
		{`\\?\` + pods + `\CON`, pods + `\CON`},
		{`\\.\pipe\csi-proxy-disk-v1`, `\\.\pipe\csi-proxy-disk-v1`},
		{`\\.\PhysicalDrive0`, `\\.\PhysicalDrive0`},
		{`\\?\GLOBALROOT\Device\HarddiskVolume1`, `\\.\GLOBALROOT\Device\HarddiskVolume1`},
	} {
		if got := Win32(c.in, ServiceCWD, DefaultNode).String(); got != c.want {
			t.Errorf("Win32(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUpperIsNotFolding(t *testing.T) {
	if Upper("kubelet") == Upper("\u212aubelet") {
		t.Error("the Kelvin sign compares equal to k; NTFS's upper-case table keeps them apart")
	}
	if Upper("Pods") != Upper("PODS") {
		t.Error("ASCII case is ignored by NTFS")
	}
}

func TestDeviceName(t *testing.T) {
	for in, want := range map[string]bool{
		"CON": true, "con.txt": true, "COM1.tar.gz": true, "NUL ": true, "nul:": true, "CONIN$": true,
		"CONX": false, "COM10": false, "console": false, "x.CON": false, "": false,
	} {
		if _, got := DeviceName(in); got != want {
			t.Errorf("DeviceName(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestIsLocalHost: every spelling of this machine Windows resolves to it
// (the FQDN, 0x7f000001 and full-width localhost among them) is
// local; other hosts are not.
func TestIsLocalHost(t *testing.T) {
	for in, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "ｌｏｃａｌｈｏｓｔ": true, "x.localhost": true,
		"127.0.0.1": true, "127.1.2.3": true, "0.0.0.0": true, "0": true, "127.1": true,
		"0x7f000001": true, "0X7F000001": true, "2130706433": true, "017700000001": true, "0177.0.0.1": true, "0x7f.0.0.1": true,
		"0--1.ipv6-literal.net": true, "--1.IPV6-LITERAL.NET": true, "--ffff-7f00-1.ipv6-literal.net": true,
		"fenceproof-node": true, "FENCEPROOF-NODE.CLUSTER.EXAMPLE": true, "fenceproof-node.cluster.example.": true,
		"10.20.30.40": true, "0xa141e28": true, "fd00-20-30--40.ipv6-literal.net": true,
		"fileserver.example.com": false, "192.0.2.20": false, "2001-db8--1.ipv6-literal.net": false,
		"0b1111111": false, "0o177.0.0.1": false, "127.0.0.1.5": false, "08.0.0.1": false, "fenceproof": false,
	} {
		if got := DefaultNode.IsLocalHost(in); got != want {
			t.Errorf("IsLocalHost(%q) = %v, want %v", in, got, want)
		}
	}
}
