package restrict

import (
	"errors"
	"flag"
	"fmt"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "seed of the draws (0: from the clock, printed)")

// testSeed is the seed a test draws from: -seed, else the clock's, logged
// so a failure replays with -seed.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test ./csiproxy/restrict -run '%s' -seed %d)", s, t.Name(), s)
	return s
}

// testPlace is a standard node's: its escape link, OS disk and volume,
// share, portal, names and addresses.
var testPlace = Place{
	Plugins: DefaultPluginsPath, Pods: DefaultPodPath, Escape: "esc-link",
	OSDisk: "0", OSVolume: `\\?\Volume{f3e9c0de-0000-4000-8000-000000000000}\`,
	SMBServer: "fileserver.example.com", SMBShare: "share", Portal: "192.0.2.10",
	NodeNames: []string{"node7.cluster.example"}, NodeAddresses: []string{"10.1.2.7", "fd00::7"},
}

// testValidator is the faithful validator of testPlace's node.
func testValidator() *Validator {
	v := New()
	v.LocalNames, v.LocalAddresses = testPlace.NodeNames, testPlace.NodeAddresses
	return v
}

func ruleOf(err error) string {
	var v *Violation
	if errors.As(err, &v) {
		return v.Rule
	}
	return ""
}

// draws is how many values of each case the property tests draw.
const draws = 150

// TestEveryCaseViolatesExactlyItsRule holds the property the conformance
// suite relies on, for every value a case can draw: the faithful validator
// refuses it with its rule, and a validator skipping that one rule accepts
// it, so a host that forgets one restriction is caught by exactly its
// cases.
func TestEveryCaseViolatesExactlyItsRule(t *testing.T) {
	d := NewDraw(testSeed(t), testPlace)
	for _, c := range Cases {
		if r, _ := RuleByID(c.Rule); r.State {
			continue
		}
		for range draws {
			p := d.Probe(c, c.Kind)
			err := testValidator().Check(c.Kind, p.Value, p.Port)
			if got := ruleOf(err); got != c.Rule {
				t.Fatalf("%s %s %q: %q drawn, refused by %q (%v), want %s", c.Rule, c.Kind, c.Name, p.Value, got, err, c.Rule)
			}
			skip := testValidator()
			skip.Skip = map[string]bool{c.Rule: true}
			if err := skip.Check(c.Kind, p.Value, p.Port); err != nil {
				t.Fatalf("%s %s %q: %q drawn, with %s skipped still refused: %v", c.Rule, c.Kind, c.Name, p.Value, c.Rule, err)
			}
		}
	}
}

// TestStateCases: the request of every state case is valid whatever is
// drawn (only the host's state makes it wrong), and each state rule
// refuses what the host reports.
func TestStateCases(t *testing.T) {
	d := NewDraw(testSeed(t), testPlace)
	for _, c := range Cases {
		if r, _ := RuleByID(c.Rule); !r.State {
			continue
		}
		for range draws {
			p := d.Probe(c, c.Kind)
			if err := testValidator().Check(c.Kind, p.Value, p.Port); err != nil {
				t.Fatalf("%s %s: the request %q is refused on its own: %v", c.Rule, c.Name, p.Value, err)
			}
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
		{"OS volume spelled as the KEP writes it", v.SystemVolume("volume_id", `\\.\Volume{F3E9C0DE-0000-4000-8000-000000000000}`, []string{testPlace.OSVolume}), "SYSDISK-001"},
	} {
		if got := ruleOf(c.err); got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.name, got, c.err, c.want)
		}
	}
}

// TestValidAccepted: every value the valid cases draw is accepted.
func TestValidAccepted(t *testing.T) {
	d := NewDraw(testSeed(t), testPlace)
	for _, c := range Valid {
		for range draws {
			p := d.Probe(c, c.Kind)
			if err := testValidator().Check(c.Kind, p.Value, p.Port); err != nil {
				t.Fatalf("%s %s %q: %v", c.Kind, c.Name, p.Value, err)
			}
		}
	}
}

// TestDrawReplays: a seed draws the same values again; another seed
// draws other names.
func TestDrawReplays(t *testing.T) {
	all := func(seed uint64) []string {
		d := NewDraw(seed, testPlace)
		var out []string
		for _, c := range append(Cases, Valid...) {
			out = append(out, d.Probe(c, c.Kind).Value)
		}
		return out
	}
	a, b, c := all(7), all(7), all(8)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("seed 7 drew %q, then %q", a[i], b[i])
		}
		if a[i] == c[i] {
			same++
		}
	}
	if same > len(a)/10 {
		t.Errorf("seeds 7 and 8 drew %d of %d values alike", same, len(a))
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

// TestKEPProfileProbesTheSevenRPCs: under the profile kep exactly the RPCs
// whose fields the KEP restricts are probed: Mkdir, Rmdir, RmdirContents,
// CreateSymlink, both SMB remote path RPCs, SetMutualChapSecret.
func TestKEPProfileProbesTheSevenRPCs(t *testing.T) {
	var got []string
	for _, r := range RPCs {
		for _, f := range r.Fields {
			if n := len(casesUnder(KEP, r, f)); n > 0 {
				got = append(got, r.Method)
				break
			}
		}
	}
	want := "[Mkdir Rmdir RmdirContents CreateSymlink NewSmbGlobalMapping RemoveSmbGlobalMapping SetMutualChapSecret]"
	if fmt.Sprint(got) != want {
		t.Errorf("probed under kep: %v, want %s", got, want)
	}
	for _, r := range RPCs {
		for _, f := range r.Fields {
			if f.Kind != KindFree && len(casesUnder(Hardened, r, f)) == 0 {
				t.Errorf("%s %s: no case under hardened", r.Method, f.Name)
			}
		}
	}
}

func casesUnder(p Profile, r RPC, f Field) []string {
	var out []string
	for _, c := range CasesOf(f.Kind) {
		if rule, ok := p.RuleOf(c, r, f); ok {
			out = append(out, rule)
		}
	}
	return out
}
