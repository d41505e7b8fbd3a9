package simhost

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// Faults are the deliberately broken behaviours of the simulated host, for
// proving that the conformance suite catches each. The zero value is the
// faithful host.
type Faults struct {
	// Skip holds restriction rule IDs the host does not enforce.
	Skip map[string]bool
	// Drop holds "group/version" pairs the host does not serve.
	Drop map[string]bool
	// NoEffect: valid link, mkdir and SMB requests return OK and do nothing.
	NoEffect bool
	// EffectBeforeCheck: LinkPath creates the link before checking the
	// target's state and leaves it when it then refuses.
	EffectBeforeCheck bool
	// UnknownCode: refusals carry codes.Unknown instead of
	// INVALID_ARGUMENT / FAILED_PRECONDITION (what csi-proxy v1.1.3 does).
	UnknownCode bool
	// NoDefaultPort: a portal with port 0 is stored with port 0.
	NoDefaultPort bool
}

// FaultNames is the table of fault specs, declared once: "skip=RULE-ID" and
// "drop=group/version" take an argument, the others are plain names.
var FaultNames = []struct{ Name, Doc string }{
	{"skip=RULE-ID", "do not enforce one restriction (any ID of restrict.Rules)"},
	{"drop=GROUP/VERSION", "do not serve one API version"},
	{"no-effect", "valid link, mkdir and SMB requests return OK and change nothing"},
	{"effect-before-check", "LinkPath creates the link before checking the target and keeps it on refusal"},
	{"unknown-code", "refusals carry UNKNOWN instead of INVALID_ARGUMENT / FAILED_PRECONDITION"},
	{"no-default-port", "a portal given with port 0 is kept with port 0 instead of 3260"},
}

// ParseFaults parses fault specs; an unknown spec is an error naming the
// valid ones.
func ParseFaults(specs []string) (Faults, error) {
	f := Faults{Skip: map[string]bool{}, Drop: map[string]bool{}}
	for _, s := range specs {
		name, arg, _ := strings.Cut(s, "=")
		switch name {
		case "skip":
			if _, ok := restrict.RuleByID(arg); !ok {
				return f, fmt.Errorf("fault %q: unknown rule %q", s, arg)
			}
			f.Skip[arg] = true
		case "drop":
			if !slices.ContainsFunc(Served, func(a API) bool { return a.Group+"/"+a.Version == arg }) {
				return f, fmt.Errorf("fault %q: not a served group/version", s)
			}
			f.Drop[arg] = true
		case "no-effect":
			f.NoEffect = true
		case "effect-before-check":
			f.EffectBeforeCheck = true
		case "unknown-code":
			f.UnknownCode = true
		case "no-default-port":
			f.NoDefaultPort = true
		default:
			var names []string
			for _, n := range FaultNames {
				names = append(names, n.Name)
			}
			return f, fmt.Errorf("unknown fault %q (known: %s)", s, strings.Join(names, ", "))
		}
	}
	return f, nil
}
