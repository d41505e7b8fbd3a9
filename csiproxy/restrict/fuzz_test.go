package restrict

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets hold two things for any input: no check panics, and an
// accepted input really has the properties the rules promise. Seed corpora
// are in testdata/fuzz; `make csiproxy-fuzz` runs each target for a bounded
// time.

func seedCases(f *testing.F, kinds ...Kind) {
	for _, list := range [][]Case{Cases, ValidCases} {
		for _, c := range list {
			for _, k := range kinds {
				if c.Kind == k {
					a, b := expand(c)
					f.Add(a, b)
				}
			}
		}
	}
}

func FuzzPath(f *testing.F) {
	seedCases(f, KindLink, KindDir)
	f.Fuzz(func(t *testing.T, a, b string) {
		v := New()
		if v.Path("p", a) == nil {
			if !utf8.ValidString(a) || strings.ContainsAny(a, "/|?*\x00") || strings.Contains(a, "..") || !isDriveAbs(a) || strings.Contains(a[2:], ":") {
				t.Fatalf("Path accepted %q", a)
			}
		}
		if v.Dir("p", a) == nil && !Under(v.PluginsPath, a) && !Under(v.PodPath, a) {
			t.Fatalf("Dir accepted %q outside the kubelet paths", a)
		}
		if v.LinkPaths(a, b) == nil && (!Under(v.PluginsPath, a) || !Under(v.PodPath, b)) {
			t.Fatalf("LinkPaths accepted %q -> %q", a, b)
		}
	})
}

func FuzzSMBRemotePath(f *testing.F) {
	seedCases(f, KindSMB)
	f.Fuzz(func(t *testing.T, p, _ string) {
		r, err := New().SMBRemotePath("remote_path", p)
		if err != nil {
			return
		}
		if strings.ContainsAny(p, `+[]"/:;|<>,?*=$`) || !strings.HasPrefix(p, `\\`) || r.Server == "" || r.Share == "" {
			t.Fatalf("accepted %q as %+v", p, r)
		}
		if r.Key() != strings.ToLower(r.Key()) {
			t.Fatalf("key %q not lower-case", r.Key())
		}
	})
}

func FuzzISCSI(f *testing.F) {
	seedCases(f, KindIQN, KindPortal, KindCHAP)
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
		} else if err != nil && len(b) > 3 && strings.Contains(err.Error(), b) {
			t.Fatalf("CHAP error carries the secret")
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
