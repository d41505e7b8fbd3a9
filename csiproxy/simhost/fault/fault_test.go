package fault

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fenceproof/fenceproof/csiproxy/api"
)

// TestTable: every fault acts at a hook, every break is one fault, the
// hostile hosts are no exact specs, and bad specs are refused.
func TestTable(t *testing.T) {
	for _, f := range all {
		if f.Hook == "" || f.Help == "" {
			t.Errorf("%s: no hook or help", f.Name)
		}
	}
	for _, b := range breaks {
		if byName[string(b.brk)] == nil {
			t.Errorf("break %s is no fault", b.brk)
		}
	}
	specs := Specs()
	for _, hostile := range []string{"case-sensitive-roots", "service-denylist", "learn"} {
		if !byName[hostile].Hostile() || slices.ContainsFunc(specs, func(s string) bool { return s == hostile || len(s) > len(hostile) && s[:len(hostile)+1] == hostile+"=" }) {
			t.Errorf("%s: not a hostile fault, or among the exact specs", hostile)
		}
	}
	for _, bad := range []string{"nope", "skip", "skip=NOPE-001", "no-effect=1", "novalidate=filesystem.Nope", "learn"} {
		if _, err := Parse([]string{bad}); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	s, err := Parse([]string{"skip=PATH-001", "no-effect", "drop=disk/v1", "interpolate=smbuser", "novalidate=filesystem.Mkdir"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Skipped()["PATH-001"] || !s.Breaks(NoEffect) || s.Serves("disk/v1") || !s.Serves("disk/v1beta3") || !s.Interpolated()["smbuser"] {
		t.Errorf("hooks: %v %v %v", s.Skipped(), s.Breaks(NoEffect), s.Interpolated())
	}
	if req, state := s.Checks(Request{Method: "Mkdir"}); req || !state {
		t.Errorf("novalidate=filesystem.Mkdir: request checks %v, state checks %v", req, state)
	}
	var nilSet *Set
	if !nilSet.Serves("disk/v1") || nilSet.Breaks(NoEffect) || len(nilSet.Skipped()) != 0 {
		t.Error("a nil set is not the faithful host")
	}
}

func TestStringFields(t *testing.T) {
	got := StringFields(&api.IscsiConnectTargetRequest{TargetPortal: &api.IscsiTargetPortal{TargetAddress: "a", TargetPort: 1}, Iqn: "b", ChapSecret: "c"})
	for _, want := range []string{"a", "b", "c"} {
		if !slices.Contains(got, want) {
			t.Errorf("StringFields %q lacks %q", got, want)
		}
	}
}

// TestLearnerKeysOnWhatRunsRepeat: after two runs the learning host checks
// a request carrying a string both runs' refused requests held (the old
// suite's fp- prefix), a value both held (its elevenbytes secret, the OS
// disk 0) or a literal of the suite, and acts on any other unchecked.
func TestLearnerKeysOnWhatRunsRepeat(t *testing.T) {
	dir := t.TempDir()
	for _, run := range [][]string{{`C:\pods\fp-12-1`, "elevenbytes", "0"}, {`C:\pods\fp-77-9`, "elevenbytes", "0"}} {
		b, err := learner(dir)
		if err != nil {
			t.Fatal(err)
		}
		if b.unchecked != nil {
			t.Fatal("the learning host keys before two runs")
		}
		b.refused(Request{Method: "Mkdir", Req: &struct{ A, B, C string }{run[0], run[1], run[2]}})
		if err := b.close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "literals"), []byte("localhost\nab"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := learner(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	for fields, checked := range map[string]bool{
		`C:\x\FP-31-2`: true, "elevenbytes": true, "0": true, `\\LOCALHOST\s`: true,
		"Q7zW": false, "ab": false, "elevenbyte": true, "1": false,
	} {
		if got := !b.unchecked(Request{Method: "Mkdir", Req: &struct{ A string }{fields}}); got != checked {
			t.Errorf("%q: checked %v, want %v", fields, got, checked)
		}
	}
}
