package sim

import (
	"os"
	"strings"
	"testing"
)

// TestFaultTable checks the fault table's shape: every fault a scenario can
// inject has a repair that is itself a repair of the same class, names are
// unique, and only machine faults count as breaking.
func TestFaultTable(t *testing.T) {
	seen := map[string]bool{}
	for i, d := range faultTable {
		k := FaultKind(i)
		if d.name == "" || seen[d.name] {
			t.Errorf("fault %d: empty or duplicate name %q", i, d.name)
		}
		seen[d.name] = true
		h := k.healer()
		if h.healer() != h {
			t.Errorf("%s: repair %s is not its own repair", k, h)
		}
		if h.breaks() {
			t.Errorf("%s: repair %s breaks a machine", k, h)
		}
		if h.controller() != k.controller() {
			t.Errorf("%s: repair %s is of another class", k, h)
		}
		if d.breaks && d.controller {
			t.Errorf("%s: a controller fault cannot break a machine", k)
		}
		if got, ok := lookupFault(d.name); !ok || got != k {
			t.Errorf("lookupFault(%q) = %v, %v", d.name, got, ok)
		}
	}
}

// TestREADMEListsTables: sim/README.md names every fault kind and every
// parameter of the tables in faults.go and params.go.
func TestREADMEListsTables(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, n := range append(FaultNames(), ParamNames()...) {
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("sim/README.md does not name `%s`", n)
		}
	}
}
