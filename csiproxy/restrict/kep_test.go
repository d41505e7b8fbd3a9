package restrict

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// kepText is KEP-1122 as the seed holds it (testdata/kep-1122.md is a
// copy of shared/seeds/003; TestKEPCopyIsTheSeed compares them where the
// seed is at hand).
func kepText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/kep-1122.md")
	if err != nil {
		t.Fatal(err)
	}
	return normaliseKEP(string(b))
}

// normaliseKEP drops the comment markers of the KEP's proto listings and
// folds white space, so a quote may run across a listing's lines.
func normaliseKEP(s string) string {
	s = regexp.MustCompile(`(?m)^\s*//`).ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// TestQuotesAreTheKEPs: every KEP rule quotes the KEP, each excerpt
// verbatim; no other rule claims a quote.
func TestQuotesAreTheKEPs(t *testing.T) {
	kep := kepText(t)
	for _, r := range Rules {
		switch {
		case r.Source == FromKEP && (r.Quote == "" || r.Scope == ScopeNone):
			t.Errorf("%s: a KEP rule without its quote or scope", r.ID)
		case r.Source != FromKEP && (r.Quote != "" || r.Scope != ScopeNone || r.Basis == ""):
			t.Errorf("%s (%s): a quote or scope, or no basis", r.ID, r.Source)
		}
		for _, q := range strings.Split(r.Quote, " ... ") {
			if q != "" && !strings.Contains(kep, normaliseKEP(q)) {
				t.Errorf("%s quotes %q, which the KEP does not contain", r.ID, q)
			}
		}
	}
}

// TestKEPCopyIsTheSeed: the checked-in copy is the seed, byte for byte.
func TestKEPCopyIsTheSeed(t *testing.T) {
	seeds := []string{"/work/shared/seeds/003_6137698530e2cd93.txt", "../../../shared/seeds/003_6137698530e2cd93.txt"}
	for _, p := range seeds {
		seed, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		ours, err := os.ReadFile("testdata/kep-1122.md")
		if err != nil || !bytes.Equal(seed, ours) {
			t.Fatalf("testdata/kep-1122.md differs from %s (%v)", p, err)
		}
		return
	}
	t.Skip("shared/seeds/003 is not at hand")
}
