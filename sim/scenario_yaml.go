package sim

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The YAML reading helpers of the scenario parser: errors with
// file:line:col, mappings read through a declared table of fields, and the
// scalar kinds the tables use.

type sp struct{ file string }

func (p sp) errf(n *yaml.Node, format string, a ...any) error {
	return fmt.Errorf("%s:%d:%d: %s", p.file, n.Line, n.Column, fmt.Sprintf(format, a...))
}

// fields walks a mapping node, rejecting unknown and duplicate keys.
func (p sp) fields(n *yaml.Node, what string, allowed []string, f func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s: want a mapping", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ok := false
		for _, a := range allowed {
			ok = ok || a == k.Value
		}
		if !ok {
			return p.errf(k, "unknown field %q in %s (allowed: %s)", k.Value, what, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return p.errf(k, "duplicate field %q in %s", k.Value, what)
		}
		seen[k.Value] = true
		if err := f(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

// field is one key of a mapping read into a T: set parses the value. A
// late field is set after every other field of the mapping (it depends
// on them, e.g. a machine reference needs the number of machines).
type field[T any] struct {
	name string
	late bool
	set  func(p sp, v *yaml.Node, t T) error
	// show renders the value for a scenario file ("": leave it out).
	show func(t T) string
}

func fieldNames[T any](fs []field[T]) []string {
	n := make([]string, len(fs))
	for i, f := range fs {
		n[i] = f.name
	}
	return n
}

// readFields reads mapping n into t through the table fs.
func readFields[T any](p sp, n *yaml.Node, what string, fs []field[T], t T) error {
	type lateSet struct {
		f field[T]
		v *yaml.Node
	}
	var late []lateSet
	err := p.fields(n, what, fieldNames(fs), func(k string, v *yaml.Node) error {
		for _, f := range fs {
			switch {
			case f.name != k:
			case f.late:
				late = append(late, lateSet{f, v})
			default:
				return f.set(p, v, t)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range late {
		if err := l.f.set(p, l.v, t); err != nil {
			return err
		}
	}
	return nil
}

func (p sp) scalar(v *yaml.Node, what string) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", p.errf(v, "%s: want a scalar", what)
	}
	return v.Value, nil
}

func (p sp) intv(v *yaml.Node, what string, lo, hi int) (int, error) {
	s, err := p.scalar(v, what)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, p.errf(v, "%s: want an integer in %d..%d, got %q", what, lo, hi, s)
	}
	return n, nil
}

func (p sp) dur(v *yaml.Node, what string) (Time, error) {
	s, err := p.scalar(v, what)
	if err != nil {
		return 0, err
	}
	t, err := ParseDuration(s)
	if err != nil {
		return 0, p.errf(v, "%s: %v", what, err)
	}
	return t, nil
}

// enum returns the index of v's value in names; it is an error (listing
// the names) when the value is not one of them.
func (p sp) enum(v *yaml.Node, what string, names []string) (int, error) {
	s, err := p.scalar(v, what)
	if err != nil {
		return 0, err
	}
	for i, n := range names {
		if n == s && n != "" {
			return i, nil
		}
	}
	var known []string
	for _, n := range names {
		if n != "" {
			known = append(known, n)
		}
	}
	return 0, p.errf(v, "%s: want %s, got %q", what, orList(known), s)
}

// orList renders names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func (p sp) machine(v *yaml.Node, what string, n int) (int, error) {
	s, err := p.scalar(v, what)
	if err != nil {
		return 0, err
	}
	if strings.HasPrefix(s, "m") {
		if i, err := strconv.Atoi(s[1:]); err == nil && i >= 1 && i <= n {
			return i - 1, nil
		}
	}
	return 0, p.errf(v, "%s: unknown machine %q (machines are m1..m%d)", what, s, n)
}

// machines reads a list of distinct machines.
func (p sp) machines(v *yaml.Node, what string, n int) ([]int, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, p.errf(v, "%s: want a list of machines", what)
	}
	var out []int
	seen := map[int]bool{}
	for _, e := range v.Content {
		i, err := p.machine(e, what, n)
		if err != nil {
			return nil, err
		}
		if seen[i] {
			return nil, p.errf(e, "%s: m%d listed twice", what, i+1)
		}
		seen[i] = true
		out = append(out, i)
	}
	return out, nil
}
