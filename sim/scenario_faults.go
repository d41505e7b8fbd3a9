package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parsing of a scenario's expected verdicts and fault list.

func (p sp) verdict(v *yaml.Node) (string, error) {
	var items []*yaml.Node
	switch v.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{v}
	case yaml.SequenceNode:
		items = v.Content
	default:
		return "", p.errf(v, "expect: want pass, invN or a list of invN")
	}
	var invs []int
	for _, it := range items {
		if it.Kind == yaml.ScalarNode && it.Value == "pass" && len(items) == 1 {
			return "pass", nil
		}
		if it.Kind != yaml.ScalarNode || !strings.HasPrefix(it.Value, "inv") {
			return "", p.errf(it, "expect: want pass or inv1..inv%d, got %q", numInvariants-1, it.Value)
		}
		n, err := strconv.Atoi(it.Value[3:])
		if err != nil || n < 1 || n >= numInvariants {
			return "", p.errf(it, "expect: want pass or inv1..inv%d, got %q", numInvariants-1, it.Value)
		}
		invs = append(invs, n)
	}
	if len(invs) == 0 {
		return "", p.errf(v, "expect: empty list; write pass")
	}
	return verdictString(invs), nil
}

func verdictString(invs []int) string {
	if len(invs) == 0 {
		return "pass"
	}
	sort.Ints(invs)
	var parts []string
	last := 0
	for _, n := range invs {
		if n != last {
			parts = append(parts, fmt.Sprintf("inv%d", n))
		}
		last = n
	}
	return strings.Join(parts, ",")
}

// faultDoc is what a fault's fields fill in; kind and machine are read
// after the mapping (the kind decides whether a machine is allowed).
type faultDoc struct {
	f                        Fault
	kind, machine, everyNode *yaml.Node
	hasAt                    bool
	repeat                   int
	every                    Time
}

// faultFields are the keys of one entry of `faults:`.
var faultFields = []field[*faultDoc]{
	{name: "at", set: func(p sp, v *yaml.Node, d *faultDoc) (err error) {
		d.f.At, err = p.dur(v, "at")
		d.hasAt = true
		return
	}},
	{name: "kind", set: func(_ sp, v *yaml.Node, d *faultDoc) error { d.kind = v; return nil }},
	{name: "machine", set: func(_ sp, v *yaml.Node, d *faultDoc) error { d.machine = v; return nil }},
	{name: "for", set: func(p sp, v *yaml.Node, d *faultDoc) (err error) { d.f.For, err = p.dur(v, "for"); return }},
	{name: "repeat", set: func(p sp, v *yaml.Node, d *faultDoc) (err error) {
		d.repeat, err = p.intv(v, "repeat", 1, 1000)
		return
	}},
	{name: "every", set: func(p sp, v *yaml.Node, d *faultDoc) (err error) {
		d.every, err = p.dur(v, "every")
		d.everyNode = v
		return
	}},
}

// fault reads one entry of `faults:` and expands its repeats.
func (p sp) fault(n *yaml.Node, machines int, dur Time) ([]Fault, error) {
	d := &faultDoc{f: Fault{Machine: -1}, repeat: 1}
	if err := readFields(p, n, "fault", faultFields, d); err != nil {
		return nil, err
	}
	f, kindNode, machineNode, everyNode, repeat, every := d.f, d.kind, d.machine, d.everyNode, d.repeat, d.every
	if !d.hasAt || kindNode == nil {
		return nil, p.errf(n, "fault: needs at and kind")
	}
	ks, err := p.scalar(kindNode, "kind")
	if err != nil {
		return nil, err
	}
	k, found := lookupFault(ks)
	if !found {
		return nil, p.errf(kindNode, "kind: unknown fault %q (known: %s)", ks, strings.Join(FaultNames(), ", "))
	}
	f.Kind = k
	if f.Kind.controller() {
		if machineNode != nil {
			return nil, p.errf(machineNode, "machine: not allowed for controller fault %s", ks)
		}
	} else {
		if machineNode == nil {
			return nil, p.errf(n, "fault %s needs a machine", ks)
		}
		if f.Machine, err = p.machine(machineNode, "machine", machines); err != nil {
			return nil, err
		}
	}
	if f.At >= dur {
		return nil, p.errf(n, "fault at %s is not before the end of the run (%s)", f.At.Dur(), dur.Dur())
	}
	if everyNode != nil && repeat == 1 {
		return nil, p.errf(everyNode, "every: needs repeat: (more than 1)")
	}
	if repeat > 1 && everyNode == nil {
		return nil, p.errf(n, "repeat: needs every:")
	}
	if repeat > 1 && every <= f.For {
		where := n
		if everyNode != nil {
			where = everyNode
		}
		return nil, p.errf(where, "repeat needs every > for")
	}
	if repeat > 1 {
		f.Repeat, f.Every = repeat, every
	}
	return []Fault{f}, nil
}
