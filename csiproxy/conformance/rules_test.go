package conformance_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fenceproof/fenceproof/csiproxy/conformance"
)

// TestAPIRuleQuotes: every rule labelled the KEP's quotes the KEP
// verbatim in its spec (excerpts joined by " ... ", up to the line breaks
// and comment markers of its proto listings); every rule states a source.
func TestAPIRuleQuotes(t *testing.T) {
	b, err := os.ReadFile("../restrict/testdata/kep-1122.md")
	if err != nil {
		t.Fatal(err)
	}
	norm := func(s string) string {
		return strings.Join(strings.Fields(regexp.MustCompile(`(?m)^\s*//`).ReplaceAllString(s, " ")), " ")
	}
	kep := norm(string(b))
	for _, r := range conformance.Rules() {
		if r.Source == "" || !slices.ContainsFunc(r.Labels, func(l string) bool { return strings.HasPrefix(l, "source:") }) {
			t.Errorf("%s states no source", r.ID)
		}
		if !slices.Contains(r.Labels, "source:kep") {
			continue
		}
		for _, q := range strings.Split(r.Spec, " ... ") {
			if !strings.Contains(kep, norm(q)) {
				t.Errorf("%s quotes %q, which the KEP does not contain", r.ID, q)
			}
		}
	}
}
