package fault

import (
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
	if req, state := s.Checks("Mkdir", nil); req || !state {
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
