package restrict

import (
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
)

// The fuzz targets hold two things for any input: no check panics, and an
// accepted input really has the properties the rules promise, judged by an
// independent oracle: hostmodel's Win32 normalisation (the simulated
// host's, written from Microsoft's path rules as a rewriting of the path,
// where the validator only refuses non-canonical text) says where Windows
// would take the path. Seed corpora are in testdata/fuzz; `make
// csiproxy-fuzz` runs each target for a bounded time.

func seed(f *testing.F, kinds ...Kind) {
	for _, list := range [][]Case{Cases, Valid} {
		for _, c := range list {
			for _, k := range kinds {
				if c.Kind == k {
					f.Add(Expand(c.Value, c.Kind, testPlace), Expand(c.Value, c.Kind, testPlace))
				}
			}
		}
	}
}

// oracleBelow reports whether Windows takes p strictly below dir: p
// normalised by hostmodel.Win32 is a local path, not a device, whose
// components extend dir's (compared by NTFS's upper-case table).
func oracleBelow(dir, p string) bool {
	n := hostmodel.Win32(p, hostmodel.ServiceCWD, nil)
	d := hostmodel.Win32(dir, hostmodel.ServiceCWD, nil)
	if n.Where != hostmodel.Local || n.Root != d.Root || len(n.Parts) <= len(d.Parts) {
		return false
	}
	for i, c := range d.Parts {
		if hostmodel.Upper(c) != hostmodel.Upper(n.Parts[i]) {
			return false
		}
	}
	return true
}

// canonical reports whether Windows would leave p as it is (up to one
// trailing separator and case, which NTFS ignores): nothing a prefix test
// reads differently.
func canonical(p string) bool {
	n := hostmodel.Win32(p, hostmodel.ServiceCWD, nil)
	return n.Where == hostmodel.Local && !n.Verbatim &&
		hostmodel.Upper(strings.TrimSuffix(n.String(), `\`)) == hostmodel.Upper(strings.TrimSuffix(p, `\`))
}

func FuzzPath(f *testing.F) {
	seed(f, KindPath, KindLinkSource, KindLinkTarget)
	f.Fuzz(func(t *testing.T, a, b string) {
		v := New()
		if v.Path("p", a) == nil && !canonical(a) {
			t.Fatalf("Path accepted %q, which Windows reads as %q", a, hostmodel.Win32(a, hostmodel.ServiceCWD, nil))
		}
		if v.Dir("p", a) == nil && !oracleBelow(v.PluginsPath, a) && !oracleBelow(v.PodPath, a) {
			t.Fatalf("Dir accepted %q, which Windows takes to %q", a, hostmodel.Win32(a, hostmodel.ServiceCWD, nil))
		}
		if v.LinkPaths(a, b) == nil && (!oracleBelow(v.PluginsPath, a) || !oracleBelow(v.PodPath, b)) {
			t.Fatalf("LinkPaths accepted %q -> %q", a, b)
		}
	})
}

func FuzzSMBRemotePath(f *testing.F) {
	seed(f, KindSMBRemote)
	f.Fuzz(func(t *testing.T, p, _ string) {
		r, err := New().SMBRemotePath("remote_path", p)
		if err != nil {
			return
		}
		if strings.ContainsAny(p, `+[]"/:;|<>,?*=$`) || !strings.HasPrefix(p, `\\`) || r.Server == "" || r.Share == "" {
			t.Fatalf("accepted %q as %+v", p, r)
		}
		if n := hostmodel.Win32(p, hostmodel.ServiceCWD, nil); n.Where != hostmodel.Remote || hostmodel.IsLocalHost(r.Server, nil) {
			t.Fatalf("accepted %q, which Windows takes to %s %q", p, n.Where, n)
		}
		if r.Key() != strings.ToLower(r.Key()) {
			t.Fatalf("key %q not lower-case", r.Key())
		}
	})
}

func FuzzISCSI(f *testing.F) {
	seed(f, KindIQN, KindPortal, KindMutualCHAP)
	f.Fuzz(func(t *testing.T, a, b string) {
		v := New()
		if v.IQN("iqn", a) == nil && (!strings.HasPrefix(strings.ToLower(a), "iqn.") || len(a) > MaxIQNLength) {
			t.Fatalf("IQN accepted %q", a)
		}
		port := uint32(len(b) * 4099)
		if _, p, err := v.Portal("portal", a, port); err == nil && (p == 0 || p > 65535) {
			t.Fatalf("Portal accepted %q:%d as port %d", a, port, p)
		}
		if err := v.MutualCHAPSecret("s", b, false); err == nil && (len(b) < 12 || len(b) > 16) {
			t.Fatalf("CHAP accepted %d bytes", len(b))
		} else if err != nil && err.Error() != v.MutualCHAPSecret("s", strings.Repeat("x", len(b)), false).Error() {
			// the message may say how long the secret is, never what it is
			t.Fatalf("CHAP error depends on the secret: %v", err)
		}
	})
}

func FuzzPipe(f *testing.F) {
	f.Add(`\\.\pipe\csi-proxy-disk-v1`, "")
	f.Add(`csi-proxy-volume-v2alpha1`, "")
	f.Add(`\\.\pipe\csi-proxy-debug-v1`, "")
	f.Fuzz(func(t *testing.T, name, _ string) {
		g, ver, err := New().ParsePipe(name)
		if err != nil {
			return
		}
		if PipeName(g, ver) != name && PipeBase(g, ver) != name {
			t.Fatalf("accepted %q, which is not %q", name, PipeName(g, ver))
		}
	})
}

// TestOracleCatchesBypasses: the fuzz oracle is not the validator: for
// each bypass input, a validator without the rule that refuses it accepts
// it, and the oracle says Windows would take it elsewhere (or rewrite it).
func TestOracleCatchesBypasses(t *testing.T) {
	const pods = DefaultPodPath
	for _, c := range []struct{ input, rule string }{
		{pods + `\.`, "PATH-009"},
		{pods + `\ `, "PATH-010"},
		{pods + `\. `, "PATH-010"},
		{pods + `\.\.\`, "PATH-009"},
		{pods + `\CON`, "PATH-011"},
		{pods + `\COM1.txt`, "PATH-011"},
		{pods + `\x.`, "PATH-010"},
		{"C:\\var\\lib\\\u212aubelet\\pods\\x", "DIR-001"},
	} {
		lax := New()
		lax.Skip = map[string]bool{c.rule: true}
		if err := lax.Dir("p", c.input); err != nil {
			t.Errorf("%q: without %s still refused: %v", c.input, c.rule, err)
			continue
		}
		if canonical(c.input) && (oracleBelow(lax.PluginsPath, c.input) || oracleBelow(lax.PodPath, c.input)) {
			t.Errorf("%q: the oracle finds nothing wrong with it", c.input)
		}
	}
}
