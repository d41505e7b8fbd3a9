package fault

import (
	"fmt"
	"slices"
	"strings"
)

// byName indexes the table.
var byName = map[string]*Fault{}

func init() {
	for _, f := range all {
		if _, dup := byName[f.Name]; dup {
			panic("fault " + f.Name + " declared twice")
		}
		byName[f.Name] = f
		if f.Example == "" {
			f.Example = f.Name
		}
		for i := range f.Proofs {
			if f.Proofs[i].Spec == "" {
				f.Proofs[i].Spec = f.Name
			}
		}
		if len(f.Hooks()) == 0 {
			panic("fault " + f.Name + " acts at no hook")
		}
	}
}

// All returns every fault, in table order.
func All() []*Fault { return slices.Clone(all) }

// Names returns every fault name, sorted.
func Names() []string {
	names := make([]string, 0, len(all))
	for _, f := range all {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}

// Usage is one line per fault for a --fault flag's help: its spec form and
// what it breaks.
func Usage() string {
	var b strings.Builder
	for _, n := range Names() {
		f := byName[n]
		form := f.Name
		switch {
		case f.Optional:
			form += "[=" + f.Arg + "]"
		case f.Arg != "":
			form += "=" + f.Arg
		}
		fmt.Fprintf(&b, "\n  %s: %s", form, f.Help)
	}
	return b.String()
}

// Proofs returns every proof of every fault, in table order.
func Proofs() []Proof {
	var out []Proof
	for _, f := range all {
		out = append(out, f.Proofs...)
	}
	return out
}

// Run is the proof as a user types it: the fault spec and the suite flags.
func (p Proof) Run() string { return strings.TrimSpace(p.Spec + " " + strings.Join(p.Flags, " ")) }

// ProvenBy returns, for each rule ID, the proofs whose exact set holds it,
// as Run strings, narrowest first (the proof that fails fewest rules).
func ProvenBy() map[string][]string {
	by := map[string][]Proof{}
	for _, p := range Proofs() {
		for _, id := range p.Fails {
			by[id] = append(by[id], p)
		}
	}
	out := map[string][]string{}
	for id, ps := range by {
		slices.SortStableFunc(ps, func(a, b Proof) int { return len(a.Fails) - len(b.Fails) })
		for _, p := range ps {
			out[id] = append(out[id], p.Run())
		}
	}
	return out
}

// ProvenOtherwise are the MUST rules of the conformance suite that no proof
// breaks, with what shows they can fail.
var ProvenOtherwise = map[string]string{
	"CIDR-010":    "needs `--destructive` (TestReferenceDriverConformsNftablesDestructive runs it); any fault that breaks CIDR-006 breaks it the same way",
	"RESTART-001": "`forget-on-restart` and `persist-first=100` under `--restart-command` (TestRestartCommand; vault driver variants `forget`, `persist-first`)",
	"CIDR-004":    "`lenient-cidrs` (WARN; FAIL with `--strict`, TestProfiles)",
	"ENFORCE-001": "`enforce-first-address`, `enforce-neighbour` and `ack-before-enforce` on the nftables backend, whose write probe is the enforce command (TestEnforcementFaults; root)",
}
