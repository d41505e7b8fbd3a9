package reference_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/csiproxy/conformance"
	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/reference"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
	"github.com/fenceproof/fenceproof/rulebook/clitest"
)

var update = flag.Bool("update", false, "rewrite testdata/verdicts-*.json and .md from this run (keeping each rule's why)")

// TestMain builds fenceproof with the disk group served (reference.Build:
// the csiproxy_disk tag against the patched csi-proxy module), so the lane
// runs csi-proxy's server code for all 23 group versions.
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "fenceproof-reference-")
	if err != nil {
		panic(err)
	}
	clitest.Bin = filepath.Join(dir, "fenceproof")
	root, _ := filepath.Abs("../..")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	err = reference.Build(ctx, "go", root, dir, "./cmd/fenceproof", clitest.Bin)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// Expected is one rule's expected verdict against csi-proxy's code: the
// verdict, the restrictions whose cases it accepted (for a refusal rule),
// and why csi-proxy does what it does.
type Expected struct {
	ID           string           `json:"id"`
	Verdict      rulebook.Verdict `json:"verdict"`
	Restrictions []string         `json:"restrictions,omitempty"`
	Why          string           `json:"why,omitempty"`
}

// Table is the checked-in verdict table of one csi-proxy version.
type Table struct {
	CSIProxy string     `json:"csi-proxy"`
	Command  string     `json:"command"`
	Rules    []Expected `json:"rules"`
}

var caseRule = regexp.MustCompile(`\(([A-Z]+-[0-9]+), `)

// observed reduces a run's result to the table's shape.
func observed(res conformance.Result) []Expected {
	var out []Expected
	for _, r := range res.Rules {
		e := Expected{ID: r.ID, Verdict: r.Verdict}
		if r.Verdict == rulebook.VerdictFail && strings.HasPrefix(r.ID, "RPC-") {
			set := map[string]bool{}
			for _, m := range caseRule.FindAllStringSubmatch(r.Reason, -1) {
				set[m[1]] = true
			}
			for k := range set {
				e.Restrictions = append(e.Restrictions, k)
			}
			slices.Sort(e.Restrictions)
		}
		out = append(out, e)
	}
	return out
}

// laneSeed is the seed of the lane's runs: the tables hold what one seed's
// draws found (the verdicts hold for any seed; which restrictions' cases a
// rule's failures name could vary with the draws).
const laneSeed = "1122"

// laneArgs is how the lane runs the suite against csi-proxy: its own
// --kubelet-path, and the standard node's links, disk, share, portal,
// names and addresses.
var laneArgs = []string{"--seed", laneSeed, "--kubelet-path", reference.DefaultKubeletPath, "--escape-link", hostmodel.EscapeLink,
	"--inside-link", hostmodel.InsideLink, "--scratch-disk", "1", "--smb-share", hostmodel.DefaultSMBShare, "--iscsi-portal", hostmodel.DefaultPortal,
	"--node-name", hostmodel.DefaultName, "--node-name", hostmodel.DefaultFQDN, "--node-address", hostmodel.DefaultAddress4, "--node-address", hostmodel.DefaultAddress6}

// judges are the lane's runs, each with its table: as the lane judges (a
// refusal must come before any Windows call, as the host reports), as a
// real node is judged (a refusal is any error; no disruptive case), both
// under the hardened profile, and under the profile kep (the KEP's text
// alone: csi-proxy must fail exactly the seven rules it requires).
var judges = []struct {
	suffix string
	flags  []string
}{
	{"", nil},
	{"-node", []string{"--no-host-record"}},
	{"-kep", []string{"--profile", "kep"}},
}

// TestReferenceLane runs the suite against csi-proxy v1.1.3's own server
// code once per judge and compares every rule's verdict, and the
// restrictions each refusal rule found violated, with the checked-in
// tables; every rule csi-proxy does not pass says why.
func TestReferenceLane(t *testing.T) {
	dir := shortDir(t)
	srv := exec.Command(clitest.Bin, "csiproxy-reference", "--dir", dir)
	var out bytes.Buffer
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	waitFor(t, filepath.Join(dir, "csi-proxy-disk-v1"), &out)
	for _, judge := range judges {
		args := append(append([]string{"--endpoint", "unix://" + dir}, laneArgs...), judge.flags...)
		var res conformance.Result
		r := clitest.RunSuite(t, 3*time.Minute, "csiproxy-sanity", "csiproxy.json", &res, args...)
		if len(res.Served) != 23 {
			t.Fatalf("csi-proxy serves %d group versions, want 23:\n%s", len(res.Served), clitest.Tail(r.Out))
		}
		compare(t, filepath.Join("testdata", "verdicts-"+reference.Version+judge.suffix+".json"), strings.TrimSpace(strings.Join(args[2:], " ")), observed(res))
	}
}

// compare checks a run against a table (or rewrites it with -update).
func compare(t *testing.T, path, args string, got []Expected) {
	t.Helper()
	var want Table
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
	}
	if *update {
		writeTable(t, path, args, got, want)
		return
	}
	why := map[string]string{}
	stripped := make([]Expected, len(want.Rules))
	for i, e := range want.Rules {
		why[e.ID] = e.Why
		stripped[i] = Expected{ID: e.ID, Verdict: e.Verdict, Restrictions: e.Restrictions}
	}
	if !slices.EqualFunc(got, stripped, func(a, b Expected) bool {
		return a.ID == b.ID && a.Verdict == b.Verdict && slices.Equal(a.Restrictions, b.Restrictions)
	}) {
		t.Errorf("verdicts against csi-proxy %s differ from %s (go test ./csiproxy/reference -run TestReferenceLane -update):\ngot  %v\nwant %v", reference.Version, path, got, stripped)
	}
	for _, e := range got {
		if e.Verdict != rulebook.VerdictPass && e.Verdict != rulebook.VerdictInfo && why[e.ID] == "" {
			t.Errorf("%s: %s is %s against csi-proxy and the table does not say why", path, e.ID, e.Verdict)
		}
	}
}

func waitFor(t *testing.T, path string, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear:\n%s", path, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// writeTable rewrites the table (keeping each rule's why) and its
// Markdown rendering.
func writeTable(t *testing.T, path, args string, got []Expected, old Table) {
	why := map[string]string{}
	for _, e := range old.Rules {
		why[e.ID] = e.Why
	}
	tab := Table{CSIProxy: reference.Version, Command: "fenceproof csiproxy-sanity --endpoint unix://DIR " + args, Rules: got}
	for i := range tab.Rules {
		tab.Rules[i].Why = why[tab.Rules[i].ID]
	}
	b, _ := json.MarshalIndent(tab, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(strings.TrimSuffix(path, ".json")+".md", []byte(Markdown(tab)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Markdown renders a table.
func Markdown(tab Table) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# The suite against csi-proxy %s's own server code\n\n`%s` against `fenceproof csiproxy-reference` (all 23 group versions).\n\n", tab.CSIProxy, tab.Command)
	fmt.Fprintln(&b, "| rule | verdict | restrictions whose cases were not refused (source) | why |")
	fmt.Fprintln(&b, "| --- | --- | --- | --- |")
	for _, e := range tab.Rules {
		var rs []string
		for _, id := range e.Restrictions {
			r, _ := restrict.RuleByID(id)
			rs = append(rs, id+" ("+string(r.Source)+")")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", e.ID, e.Verdict, strings.Join(rs, " "), strings.ReplaceAll(e.Why, "|", `\|`))
	}
	return b.String()
}

// TestTableRendering: each Markdown table is its JSON table's rendering.
func TestTableRendering(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "verdicts-*.json"))
	if len(paths) != len(judges) {
		t.Fatalf("verdict tables %v, want the lane's and the node's", paths)
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var tab Table
		if err := json.Unmarshal(b, &tab); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(strings.TrimSuffix(path, ".json") + ".md")
		if err != nil || string(md) != Markdown(tab) {
			t.Errorf("%s.md is not the rendering of %s (go test ./csiproxy/reference -run TestReferenceLane -update): %v", strings.TrimSuffix(path, ".json"), path, err)
		}
	}
}

// TestKEPProfileFailsTheSevenRules: under the profile kep, csi-proxy
// v1.1.3's own code fails exactly the rules the KEP's text requires and it
// breaks: Mkdir, Rmdir, RmdirContents, CreateSymlink, both SMB remote_path
// RPCs, the mutual CHAP secret's length (TestReferenceLane holds the table
// to a run).
func TestKEPProfileFailsTheSevenRules(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "verdicts-"+reference.Version+"-kep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tab Table
	if err := json.Unmarshal(b, &tab); err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, e := range tab.Rules {
		if e.Verdict == rulebook.VerdictFail {
			failed = append(failed, e.ID)
		}
	}
	want := []string{"RPC-FS-MKDIR", "RPC-FS-RMDIR", "RPC-FS-RMDIRCONTENTS", "RPC-FS-CREATESYMLINK",
		"RPC-SMB-NEWSMBGLOBALMAPPING", "RPC-SMB-REMOVESMBGLOBALMAPPING", "RPC-ISCSI-SETMUTUALCHAPSECRET"}
	if !slices.Equal(failed, want) {
		t.Errorf("under --profile kep csi-proxy fails %v, want exactly %v", failed, want)
	}
}
