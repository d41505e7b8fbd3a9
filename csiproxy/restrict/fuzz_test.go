package restrict

import (
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
)

// The fuzz targets hold two things for any input: no check panics, and an
// accepted input really has the properties the rules promise, judged by an
// independent oracle: hostmodel's Win32 normalisation and its $UpCase
// table read from a real volume (the simulated host's, written from
// Microsoft's path rules as a rewriting of the path, where the validator
// only refuses non-canonical text and folds case by its own table) say
// where Windows would take the path; hostmodel's name resolution says
// which servers are this machine. Seed corpora are in testdata/fuzz, and
// every run adds draws of every case and every character where Windows'
// and Unicode's upper case disagree; `make csiproxy-fuzz` runs each target
// for a bounded time.

// fuzzNode is the node the fuzz targets validate for.
var fuzzNode = hostmodel.Node{Names: testPlace.NodeNames, Addresses: testPlace.NodeAddresses}

func seed(f *testing.F, kinds ...Kind) {
	d := NewDraw(1, testPlace)
	for _, list := range [][]Case{Cases, Valid} {
		for _, c := range list {
			for _, k := range kinds {
				if c.Kind == k {
					f.Add(d.Probe(c, c.Kind).Value, d.Probe(c, c.Kind).Value)
				}
			}
		}
	}
	// every character where NTFS and Unicode disagree, four at a time
	// below a kubelet directory, the first of them also in place of a
	// letter of its name
	rs := DisagreeWithUnicode()
	for i, r := range rs {
		dir := []string{DefaultPodPath, DefaultPluginsPath}[i%2]
		at := strings.IndexAny(dir[3:], "iks") + 3
		if i%4 == 0 {
			below := string(rs[i:min(i+4, len(rs))])
			f.Add(dir[:at]+string(r)+dir[at+1:]+`\`+below, dir+`\`+below)
		}
	}
}

// oracleBelow reports whether Windows takes p strictly below dir: p
// normalised by hostmodel.Win32 is a local path, not a device, whose
// components extend dir's (compared by NTFS's upper-case table).
func oracleBelow(dir, p string) bool {
	n := hostmodel.Win32(p, hostmodel.ServiceCWD, fuzzNode)
	d := hostmodel.Win32(dir, hostmodel.ServiceCWD, fuzzNode)
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
	n := hostmodel.Win32(p, hostmodel.ServiceCWD, fuzzNode)
	return n.Where == hostmodel.Local && !n.Verbatim &&
		hostmodel.Upper(strings.TrimSuffix(n.String(), `\`)) == hostmodel.Upper(strings.TrimSuffix(p, `\`))
}

func FuzzPath(f *testing.F) {
	seed(f, KindPath, KindLinkSource, KindLinkTarget)
	f.Fuzz(func(t *testing.T, a, b string) {
		v := testValidator()
		if v.Path("p", a) == nil && !canonical(a) {
			t.Fatalf("Path accepted %q, which Windows reads as %q", a, hostmodel.Win32(a, hostmodel.ServiceCWD, fuzzNode))
		}
		if v.Dir("p", a) == nil && !oracleBelow(v.PluginsPath, a) && !oracleBelow(v.PodPath, a) {
			t.Fatalf("Dir accepted %q, which Windows takes to %q", a, hostmodel.Win32(a, hostmodel.ServiceCWD, fuzzNode))
		}
		if v.LinkPaths(a, b) == nil && (!oracleBelow(v.PluginsPath, a) || !oracleBelow(v.PodPath, b)) {
			t.Fatalf("LinkPaths accepted %q -> %q", a, b)
		}
	})
}

func FuzzSMBRemotePath(f *testing.F) {
	seed(f, KindSMBRemote)
	f.Fuzz(func(t *testing.T, p, _ string) {
		r, err := testValidator().SMBRemotePath("remote_path", p)
		if err != nil {
			return
		}
		if strings.ContainsAny(p, `+[]"/:;|<>,?*=$`) || !strings.HasPrefix(p, `\\`) || r.Server == "" || r.Share == "" {
			t.Fatalf("accepted %q as %+v", p, r)
		}
		if n := hostmodel.Win32(p, hostmodel.ServiceCWD, fuzzNode); n.Where != hostmodel.Remote || fuzzNode.IsLocalHost(r.Server) {
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
		if v.IQN("iqn", a) == nil && len(a) > MaxIQNLength {
			t.Fatalf("IQN accepted %q", a)
		}
		if l := strings.ToLower(a); v.IQN("iqn", a) == nil && !strings.HasPrefix(l, "iqn.") && !strings.HasPrefix(l, "eui.") && !strings.HasPrefix(l, "naa.") {
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
		{"C:\\var\\l\u0131b\\kubelet\\pods\\x", "DIR-001"},
		{"C:\\var\\lib\\kubelet\\pod\u017f\\x", "DIR-001"},
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

// TestKEPAttribution: a path case is the KEP's DIR-001 (its own rule, or
// the KEP rule it names) exactly when Windows takes its draws outside the
// kubelet directories or to one of them, so the profile kep probes every
// creation or deletion the KEP forbids and nothing else.
func TestKEPAttribution(t *testing.T) {
	d := NewDraw(testSeed(t), testPlace)
	v := testValidator()
	for _, c := range CasesOf(KindPath) {
		if r, _ := RuleByID(c.Rule); r.State {
			continue
		}
		kep := c.Rule == "DIR-001" || c.KEP == "DIR-001"
		for range draws {
			p := d.Probe(c, KindPath).Value
			outside := !oracleBelow(v.PluginsPath, p) && !oracleBelow(v.PodPath, p)
			if outside != kep {
				t.Fatalf("%s %q: %q drawn, which Windows takes to %q (outside: %v), but the case is DIR-001 under kep: %v",
					c.Rule, c.Name, p, hostmodel.Win32(p, hostmodel.ServiceCWD, fuzzNode), outside, kep)
			}
		}
	}
}
