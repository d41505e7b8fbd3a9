// Package fault declares the simulated csi-proxy host's deliberate faults,
// each one typed value (Fault): its name, what it breaks, the hook of the
// host's faithful path it acts at, and the exact conformance rules a suite
// run against the broken host must fail (Fails), or, for a hostile host
// built to pass the suite while being unsafe, none: such a host must fail
// at least one MUST rule (the conformance self test). The self test, the
// --sim-fault help and the host read the one table, All.
//
// The host calls the hooks of a *Set at named points of its faithful path
// (Serves, Skipped, Interpolated, Vetoes, Checks, Stands, Breaks, Code,
// Refused); a
// nil *Set, or one with no fault at a hook, leaves the faithful behaviour
// as it is. A spec on the command line is "name" or "name=arg".
package fault

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// Hook names a point of the host's faithful path at which faults act.
type Hook string

// The hooks, in the order a request meets them.
const (
	AtServe   Hook = "serve"   // which endpoints are served
	AtRules   Hook = "rules"   // which restrictions the validator enforces
	AtChecks  Hook = "checks"  // whether a request's checks run, and a refusal stands
	AtCommand Hook = "command" // how request fields reach a command line
	AtEffect  Hook = "effect"  // what a valid call does to the host
	AtAnswer  Hook = "answer"  // what a call answers
	AtCode    Hook = "code"    // the code of a refusal
)

// Break is one broken behaviour at the effect, answer, code or serve hook,
// named like the fault that has it.
type Break string

// Fault is one deliberately broken behaviour of the simulated host.
type Fault struct {
	// Name is how --sim-fault names it.
	Name string
	// Arg is the form of its argument ("RULE-ID"); "" when it takes none.
	Arg string
	// Help says what the broken host does.
	Help string
	// Hook is where it acts.
	Hook Hook
	// Args lists the arguments it takes, for the self test (nil: none, or
	// any when Arg is set).
	Args func() []string
	// Fails is the exact set of rules a run against the host with the
	// fault (and its argument) fails; nil for a hostile host, which must
	// fail the MUST rules of Caught on every seed.
	Fails func(arg string) []string
	// Caught are, for a hostile host, the MUST rules every default run
	// against it fails, whatever the seed (it may fail more).
	Caught []string

	make func(arg string) (*behaviour, error)
}

// Hostile reports a fault built to pass the suite while being unsafe.
func (f *Fault) Hostile() bool { return f.Fails == nil }

// Validator is what a fault may read of the host's configuration.
type Validator = restrict.Validator

// Request is one request as the host's checks meet it: its
// version-neutral method (restrict.RPCs), the API version it came on, and
// the version-neutral request (csiproxy/api).
type Request struct {
	Method, Version string
	Req             any
}

// behaviour is what a fault does at its hook; zero fields leave the
// faithful behaviour alone.
type behaviour struct {
	drop        string                                                                  // serve: a group version not served
	skip        string                                                                  // rules: a restriction not enforced
	interpolate string                                                                  // command: an environment variable spliced
	brk         Break                                                                   // effect, answer, code, serve
	lax         func(method string) bool                                                // checks: the RPC's request checks do not run
	unchecked   func(r Request) bool                                                    // checks: no check runs for the request
	veto        func(r Request) bool                                                    // checks: the request is refused without a check
	overturn    func(v *restrict.Violation, value string, r Request, h *Validator) bool // checks: a refusal does not stand
	refused     func(r Request)                                                         // checks: a request the host refused
	close       func() error                                                            // when the host stops
}

// All returns every fault, in table order.
func All() []*Fault { return slices.Clone(all) }

// byName indexes the table.
var byName = func() map[string]*Fault {
	m := map[string]*Fault{}
	for _, f := range all {
		if m[f.Name] != nil {
			panic("fault " + f.Name + " declared twice")
		}
		m[f.Name] = f
	}
	return m
}()

// Usage is the --sim-fault help: each fault's form and what it breaks.
func Usage() string {
	var b strings.Builder
	for _, f := range all {
		form := f.Name
		if f.Arg != "" {
			form += "=" + f.Arg
		}
		fmt.Fprintf(&b, "\n  %s: %s", form, f.Help)
	}
	return b.String()
}

// Specs lists the spec of every exact fault: each plain one, and each
// argument of the others ("skip=PATH-001", "novalidate=filesystem.Rmdir").
func Specs() []string {
	var out []string
	for _, f := range all {
		switch {
		case f.Hostile():
		case f.Args == nil:
			out = append(out, f.Name)
		default:
			for _, a := range f.Args() {
				out = append(out, f.Name+"="+a)
			}
		}
	}
	return out
}

// ExpectedFailures is the sorted set of rules a run against the host with
// the given exact fault specs fails.
func ExpectedFailures(specs ...string) ([]string, error) {
	set := map[string]bool{}
	for _, s := range specs {
		name, arg, _ := strings.Cut(s, "=")
		f, ok := byName[name]
		if !ok || f.Hostile() {
			return nil, fmt.Errorf("no exact fault %q", s)
		}
		for _, r := range f.Fails(arg) {
			set[r] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out, nil
}

// Set is the faults a host runs with. A nil *Set is the faithful host.
type Set struct {
	specs []string
	bs    []*behaviour
}

// Parse parses fault specs; an unknown name, a missing, unexpected or
// unknown argument is an error naming the valid ones.
func Parse(specs []string) (*Set, error) {
	s := &Set{}
	for _, spec := range specs {
		name, arg, hasArg := strings.Cut(strings.TrimSpace(spec), "=")
		f, ok := byName[name]
		switch {
		case !ok:
			var names []string
			for _, f := range all {
				names = append(names, f.Name)
			}
			return nil, fmt.Errorf("unknown fault %q (known: %s)", spec, strings.Join(names, ", "))
		case f.Arg == "" && hasArg:
			return nil, fmt.Errorf("fault %q takes no argument", name)
		case f.Arg != "" && (!hasArg || arg == ""):
			return nil, fmt.Errorf("fault %q: want %s=%s", spec, name, f.Arg)
		case f.Args != nil && !slices.Contains(f.Args(), arg):
			return nil, fmt.Errorf("fault %q: %q is not one of %s", name, arg, strings.Join(f.Args(), ", "))
		}
		b, err := f.make(arg)
		if err != nil {
			return nil, fmt.Errorf("fault %q: %v", spec, err)
		}
		s.specs, s.bs = append(s.specs, spec), append(s.bs, b)
	}
	return s, nil
}

// Specs returns the specs the set was parsed from.
func (s *Set) Specs() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.specs)
}

func (s *Set) each(f func(b *behaviour) bool) bool {
	if s == nil {
		return false
	}
	return slices.ContainsFunc(s.bs, f)
}

// Serves reports whether the host serves a group version ("group/version").
func (s *Set) Serves(gv string) bool { return !s.each(func(b *behaviour) bool { return b.drop == gv }) }

// Skipped are the restrictions the validator does not enforce.
func (s *Set) Skipped() map[string]bool { return s.named(func(b *behaviour) string { return b.skip }) }

// Interpolated are the environment variables spliced into command lines.
func (s *Set) Interpolated() map[string]bool {
	return s.named(func(b *behaviour) string { return b.interpolate })
}

// named is the set of names one hook of the faults holds.
func (s *Set) named(name func(b *behaviour) string) map[string]bool {
	out := map[string]bool{}
	s.each(func(b *behaviour) bool {
		if n := name(b); n != "" {
			out[n] = true
		}
		return false
	})
	return out
}

// Vetoes reports whether the host refuses the request without checking
// it. The faithful host checks every request.
func (s *Set) Vetoes(r Request) bool {
	return s.each(func(b *behaviour) bool { return b.veto != nil && b.veto(r) })
}

// Checks says which of a request's checks run: its request checks (shape,
// syntax, prefixes, the OS disk), its state checks (what exists, where
// links lead). The faithful host runs both. Every hook that asks is asked,
// so each sees every request.
func (s *Set) Checks(r Request) (request, state bool) {
	unchecked := false
	s.each(func(b *behaviour) bool {
		if b.unchecked != nil && b.unchecked(r) {
			unchecked = true
		}
		return false
	})
	if unchecked {
		return false, false
	}
	return !s.each(func(b *behaviour) bool { return b.lax != nil && b.lax(r.Method) }), true
}

// Stands reports whether a refusal for a violation of the field value
// stands; a fault may let it through.
func (s *Set) Stands(v *restrict.Violation, value string, r Request, h *Validator) bool {
	return !s.each(func(b *behaviour) bool { return b.overturn != nil && b.overturn(v, value, r, h) })
}

// Refused tells the faults of a request the host refused by a restriction.
func (s *Set) Refused(r Request) {
	s.each(func(b *behaviour) bool {
		if b.refused != nil {
			b.refused(r)
		}
		return false
	})
}

// Breaks reports whether a broken behaviour is on.
func (s *Set) Breaks(brk Break) bool { return s.each(func(b *behaviour) bool { return b.brk == brk }) }

// Code is the code a refusal carries.
func (s *Set) Code(c codes.Code) codes.Code {
	if s.Breaks(UnknownCode) && (c == codes.InvalidArgument || c == codes.FailedPrecondition) {
		return codes.Unknown
	}
	return c
}

// Close ends what the faults keep (a learning host's record).
func (s *Set) Close() error {
	var first error
	s.each(func(b *behaviour) bool {
		if b.close != nil {
			if err := b.close(); err != nil && first == nil {
				first = err
			}
		}
		return false
	})
	return first
}

// StringFields are a request's string and number fields as text, those of
// its messages included (a target portal's address and port), in field
// order.
func StringFields(req any) []string {
	var out []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.String:
			out = append(out, v.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			out = append(out, strconv.FormatInt(v.Int(), 10))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out = append(out, strconv.FormatUint(v.Uint(), 10))
		}
	}
	walk(reflect.ValueOf(req))
	return out
}
