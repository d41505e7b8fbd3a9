package hostmodel

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	testPlugins = `C:\var\lib\kubelet\plugins\kubernetes.io\csi`
	testPods    = `C:\var\lib\kubelet\pods`
)

func testHost() *Host {
	c := Standard(testPlugins, testPods, EscapeLink, InsideLink)
	c.Links = nil
	return New(c)
}

// TestSymlinkAtNewname: os.Symlink(oldname, newname) makes the link at
// newname, the way csi-proxy v1's CreateSymlink(source, target) makes it at
// target; removing it never removes what it points to.
func TestSymlinkAtNewname(t *testing.T) {
	h := testHost()
	stage, pub := testPlugins+`\pv\globalmount`, testPods+`\uid\volumes\kubernetes.io~csi\pv\mount`
	must(t, h.MkdirAll(stage+`\data`))
	must(t, h.MkdirAll(testPods+`\uid\volumes\kubernetes.io~csi\pv`))
	must(t, h.Symlink(stage, pub))
	in, err := h.Lstat(pub)
	if err != nil || !in.Link || in.Target != stage {
		t.Fatalf("Lstat(%s) = %+v, %v: want a link to %s", pub, in, err, stage)
	}
	if !h.Exists(pub + `\data`) {
		t.Fatal("the link does not lead to the staging directory")
	}
	if err := h.Symlink(stage, pub); status.Code(err) != codes.AlreadyExists {
		t.Fatalf("a second link at the same path: %v, want AlreadyExists", err)
	}
	must(t, h.Remove(pub))
	if h.Exists(pub) || !h.Exists(stage+`\data`) {
		t.Fatalf("after removing the link: %v", h.Entries())
	}
}

func TestSymlinkNeedsParent(t *testing.T) {
	h := testHost()
	if err := h.Symlink(testPlugins, testPods+`\missing\x`); status.Code(err) != codes.NotFound {
		t.Fatalf("link below a missing directory: %v", err)
	}
}

// TestMkdirAllExisting: os.MkdirAll of an existing directory (or a link to
// one) succeeds; of a file fails.
func TestMkdirAllExisting(t *testing.T) {
	h := testHost()
	must(t, h.MkdirAll(testPods+`\a\b`))
	must(t, h.MkdirAll(testPods+`\a\b`))
	must(t, h.Symlink(testPods+`\a`, testPods+`\l`))
	must(t, h.MkdirAll(testPods+`\l`))
	must(t, h.CreateFile(testPods+`\f`))
	if err := h.MkdirAll(testPods + `\f`); err == nil {
		t.Fatal("MkdirAll over a file succeeded")
	}
}

// TestRemoveAllThroughLinks: RemoveAll of a link removes the link only;
// of a missing path is not an error; Remove of a non-empty directory fails.
func TestRemoveAllThroughLinks(t *testing.T) {
	h := testHost()
	must(t, h.MkdirAll(testPods+`\t\data`))
	must(t, h.Symlink(testPods+`\t`, testPods+`\l`))
	must(t, h.RemoveAll(testPods+`\l`))
	if !h.Exists(testPods + `\t\data`) {
		t.Fatal("RemoveAll of a link removed its target")
	}
	must(t, h.RemoveAll(testPods+`\nothing-here`))
	if err := h.Remove(testPods + `\t`); err == nil {
		t.Fatal("Remove of a non-empty directory succeeded")
	}
}

// TestRemoveAllDotDeletesPods pins the damage the bypass does: Win32
// normalisation takes pods\.\, pods\  and pods\.  to pods itself, and
// os.RemoveAll (Go 1.20, csi-proxy v1.1.3's build) goes ahead.
func TestRemoveAllDotDeletesPods(t *testing.T) {
	for _, p := range []string{`\ `, `\. `, `\.\.\`, `\.\`, ``, `\`} {
		h := testHost()
		must(t, h.MkdirAll(testPods+`\uid1\volumes`))
		must(t, h.RemoveAll(testPods+p))
		if h.Exists(testPods + `\uid1`) {
			t.Errorf("RemoveAll(pods%s) left the pod directories", p)
		}
	}
}

// TestRemoveAllRefusesPodsDot pins what the reference table claimed
// wrongly: os.RemoveAll refuses a path ending in a separator and "."
// before it removes anything (Go's endsWithDot), so pods\. with force
// wipes nothing.
func TestRemoveAllRefusesPodsDot(t *testing.T) {
	for _, p := range []string{`\.`, `/.`, `\x\..\.`} {
		h := testHost()
		must(t, h.MkdirAll(testPods+`\uid1\volumes`))
		if err := h.RemoveAll(testPods + p); err == nil {
			t.Errorf("RemoveAll(pods%s) accepted", p)
		}
		if !h.Exists(testPods + `\uid1\volumes`) {
			t.Errorf("RemoveAll(pods%s) removed the pod directories", p)
		}
	}
}

// TestWindowsRefusesInvalidNames pins the host model's lapse: a name
// Windows cannot create (a control character, < > " | ? *, NUL in the
// path) was made.
func TestWindowsRefusesInvalidNames(t *testing.T) {
	h := testHost()
	for _, name := range []string{"a\tb", "a<b", `a"b`, "a|b", "a?b", "a*b", "a>b", "a\x00b", "a\x1fb"} {
		p := testPods + `\` + name
		if err := h.MkdirAll(p); err == nil {
			t.Errorf("MkdirAll(%q) made it", p)
		}
		if h.Exists(p) {
			t.Errorf("%q exists", p)
		}
	}
}

func TestShortNames(t *testing.T) {
	h := testHost()
	must(t, h.MkdirAll(testPods+`\fenceproof-one\x`))
	must(t, h.MkdirAll(testPods+`\fenceproof-two`))
	for short, long := range map[string]string{`FENCEP~1`: `fenceproof-one`, `fencep~2`: `fenceproof-two`} {
		in, err := h.Lstat(testPods + `\` + short)
		if err != nil || !strings.HasSuffix(in.Path, long) {
			t.Errorf("Lstat(pods\\%s) = %+v, %v, want %s", short, in, err, long)
		}
	}
	if !h.Exists(`C:\var\lib\kubelet\plugins\KUBERN~1.IO\csi`) {
		t.Error("kubernetes.io has no 8.3 alias KUBERN~1.IO")
	}
}

func TestCaseInsensitive(t *testing.T) {
	h := testHost()
	must(t, h.MkdirAll(testPods+`\Data`))
	if !h.Exists(`c:\VAR\lib\KUBELET\pods\data`) {
		t.Error("names are not compared case-insensitively")
	}
	if h.Exists("C:\\var\\lib\\\u212aubelet\\pods\\Data") {
		t.Error("the Kelvin sign was taken for K")
	}
}

// TestLinksFollowedToFinalTarget: a path through a link that leaves the
// kubelet directories resolves outside them.
func TestLinksFollowedToFinalTarget(t *testing.T) {
	h := testHost()
	must(t, h.Symlink(`C:\Windows`, testPods+`\evil-link`))
	must(t, h.Symlink(`..\..\..\..\Windows\Temp`, testPods+`\rel`))
	for in, want := range map[string]string{
		testPods + `\evil-link\System32`: `C:\Windows\System32`,
		testPods + `\EVIL-L~1\x`:         `C:\Windows\x`,
		testPods + `\rel\x`:              `C:\Windows\Temp\x`,
	} {
		n, err := h.Resolve(in, false)
		if err != nil || n.String() != want {
			t.Errorf("Resolve(%s) = %s, %v, want %s", in, n, err, want)
		}
	}
	n, _ := h.Resolve(testPods+`\evil-link`, false)
	if n.String() != testPods+`\evil-link` {
		t.Errorf("the final link was followed without follow: %s", n)
	}
}

func TestDevicesAreNotFiles(t *testing.T) {
	h := testHost()
	in, err := h.Lstat(testPods + `\NUL`)
	if err != nil || !in.Device {
		t.Fatalf("Lstat(pods\\NUL) = %+v, %v: want the NUL device", in, err)
	}
	if h.MkdirAll(testPods+`\CON`) == nil || h.Remove(testPods+`\COM1.txt`) == nil {
		t.Fatal("a device was made or removed as a directory")
	}
}

func TestRemoteNeedsMapping(t *testing.T) {
	h := testHost()
	if _, err := h.Lstat(`\\fileserver.example.com\share\x`); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("unmapped share: %v", err)
	}
	if err := h.MapSMB(`\\nowhere.example.com\share`, "u", "p"); status.Code(err) != codes.Unavailable {
		t.Fatalf("unknown server: %v, want a network failure", err)
	}
	must(t, h.MapSMB(`\\FILESERVER.example.com\share`, "u", "p"))
	must(t, h.MkdirAll(`\\fileserver.example.com\share\x`))
	must(t, h.Symlink(`\\fileserver.example.com\share\`, testPlugins+`\smb`))
	if n, _ := h.Resolve(testPlugins+`\smb\x`, true); n.Where != Remote {
		t.Fatalf("through the SMB link: %v", n)
	}
	must(t, h.MapSMB(`\\localhost\C$`, "u", "p"))
	must(t, h.Symlink(`\\localhost\C$\`, testPods+`\loop`))
	if n, _ := h.Resolve(testPods+`\loop\Windows`, true); n.String() != `C:\Windows` {
		t.Fatalf("a link to \\\\localhost\\C$ leads to %s, want C:\\Windows", n)
	}
}

func TestISCSIConnectAddsDisk(t *testing.T) {
	h := testHost()
	p := Portal{Address: "192.0.2.1", Port: 3260}
	if err := h.AddPortal(p); status.Code(err) != codes.Unavailable {
		t.Fatalf("unreachable portal: %v", err)
	}
	p.Address = "192.0.2.10"
	if err := h.Connect(p, "iqn.2003-01.org.example:t", "NONE"); err == nil {
		t.Fatal("connect through an unregistered portal succeeded")
	}
	must(t, h.AddPortal(p))
	before := len(h.Disks())
	must(t, h.Connect(p, "iqn.2003-01.org.example:t", "NONE"))
	if len(h.Disks()) != before+1 {
		t.Fatalf("disks %d, want %d", len(h.Disks()), before+1)
	}
	if err := h.RemovePortal(p); err == nil {
		t.Fatal("portal removed while a target is connected")
	}
	must(t, h.Disconnect(p, "iqn.2003-01.org.example:t"))
	if len(h.Disks()) != before || !slices.Equal(h.SMBMappings(), nil) {
		t.Fatalf("after disconnect: %d disks", len(h.Disks()))
	}
	if err := h.Connect(p, "iqn.2003-01.org.example:t", "MUTUAL_CHAP"); err == nil {
		t.Fatal("mutual CHAP without a secret succeeded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestMkdirAllBelowASpaceEndedName pins a hang: a middle component ending
// in a space names no directory Windows makes for it (the final
// component's trailing space is dropped, a middle one's is not), so
// os.MkdirAll fails instead of looping.
func TestMkdirAllBelowASpaceEndedName(t *testing.T) {
	h := testHost()
	if err := h.MkdirAll(testPods + `\abc \x`); err == nil {
		t.Fatal(`MkdirAll(pods\abc \x) succeeded`)
	}
}
