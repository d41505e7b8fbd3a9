package fault

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// Set is the faults a driver runs with, each with its behaviour, in the
// order they were given. A nil *Set is the faithful driver.
type Set struct {
	active []active
}

type active struct {
	spec  string
	b     *behaviour
	hooks []Hook
}

// Parse parses fault specs. An unknown name, a missing or unexpected
// argument, or a bad argument is an error.
func Parse(specs []string) (*Set, error) {
	s := &Set{}
	for _, spec := range specs {
		spec = strings.TrimSpace(spec)
		name, arg, hasArg := strings.Cut(spec, "=")
		f, ok := byName[name]
		switch {
		case !ok:
			return nil, fmt.Errorf("unknown fault %q (known: %s)", name, strings.Join(Names(), ", "))
		case f.Arg == "" && hasArg:
			return nil, fmt.Errorf("fault %q takes no argument", name)
		case f.Arg != "" && !hasArg && !f.Optional:
			return nil, fmt.Errorf("fault %q: want %s=%s", spec, name, f.Arg)
		case f.Optional && hasArg && arg == "":
			return nil, fmt.Errorf("fault %q: want %s or %s=%s", spec, name, name, f.Arg)
		}
		b, err := f.make(arg)
		if err != nil {
			return nil, fmt.Errorf("fault %q: %v", spec, err)
		}
		s.active = append(s.active, active{spec: spec, b: b, hooks: b.hooks()})
	}
	return s, nil
}

// Specs returns the specs the set was parsed from (for logging).
func (s *Set) Specs() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.active))
	for i, a := range s.active {
		out[i] = a.spec
	}
	return out
}

// Active reports whether any fault is enabled.
func (s *Set) Active() bool { return s != nil && len(s.active) > 0 }

// Acts reports whether some fault acts at the hook.
func (s *Set) Acts(h Hook) bool {
	if s == nil {
		return false
	}
	for _, a := range s.active {
		if slices.Contains(a.hooks, h) {
			return true
		}
	}
	return false
}

// each runs f on the behaviour of every active fault, in order.
func (s *Set) each(f func(b *behaviour)) {
	if s == nil {
		return
	}
	for _, a := range s.active {
		f(a.b)
	}
}

// Call is the hook every RPC runs first: a fault may delay it (ignoring the
// caller's deadline, like a hung driver) or fail it. It returns the first
// failure, after every delay.
func (s *Set) Call(rpc string) error {
	var first error
	s.each(func(b *behaviour) {
		if b.call != nil {
			if err := b.call(rpc); err != nil && first == nil {
				first = err
			}
		}
	})
	return first
}

// Auth is how the secrets of an RPC's request are checked.
func (s *Set) Auth(rpc string) Auth {
	a := Auth{Check: true, Code: codes.Unauthenticated}
	s.each(func(b *behaviour) {
		if b.auth != nil {
			b.auth(rpc, &a)
		}
	})
	return a
}

// Message is an error's message as the driver sends it: sent are the
// request's secrets, valid the driver's.
func (s *Set) Message(code codes.Code, msg string, sent, valid map[string]string) string {
	s.each(func(b *behaviour) {
		if b.message != nil {
			msg = b.message(code, msg, sent, valid)
		}
	})
	return msg
}

// Params is how the required parameters of an RPC's request are checked.
func (s *Set) Params(rpc string) Params {
	p := Params{Check: true, Values: true}
	s.each(func(b *behaviour) {
		if b.params != nil {
			b.params(rpc, &p)
		}
	})
	return p
}

// Late is how long a mutation of the RPC takes in the background when a
// fault applies it even after its client gave up; 0 is the faithful
// driver, which drops such a mutation.
func (s *Set) Late(rpc string) time.Duration {
	var d time.Duration
	s.each(func(b *behaviour) {
		if b.late != nil {
			d = max(d, b.late(rpc))
		}
	})
	return d
}

// OneByOne reports whether a fault applies the RPC's blocks one at a time
// and goes on when the client gives up (ignore-cancel).
func (s *Set) OneByOne(rpc string) bool {
	one := false
	s.each(func(b *behaviour) { one = one || (b.oneByOne != nil && b.oneByOne(rpc)) })
	return one
}

// CIDR parses one CIDR of a request into a block: the faithful parse,
// under the host-bits policy, wrapped by the faults acting on it.
func (s *Set) CIDR(raw string, hb cidr.HostBits, parse Parser) (cidr.Block, error) {
	next := parse
	s.each(func(b *behaviour) {
		if b.cidr != nil {
			inner, at := next, b.cidr
			next = func(raw string, hb cidr.HostBits) (cidr.Block, error) { return at(raw, hb, inner) }
		}
	})
	return next(raw, hb)
}

// Request lets the faults reshape a parsed Fence or Unfence; an error
// refuses it.
func (s *Set) Request(r *Request) error {
	return chain(s, func(b *behaviour) func(*Request) error { return b.request }, r)
}

// Fence decides what Fence does with one block (st.Action starts as the
// faithful choice); an error fails the request.
func (s *Set) Fence(st *FenceStep) error {
	return chain(s, func(b *behaviour) func(*FenceStep) error { return b.fence }, st)
}

// Unfence decides what Unfence does with one block before the driver
// removes it (unless st.Keep); an error fails the request.
func (s *Set) Unfence(st *UnfenceStep) error {
	return chain(s, func(b *behaviour) func(*UnfenceStep) error { return b.unfence }, st)
}

// chain runs the hook each active fault has, in order, until one fails.
func chain[T any](s *Set, hook func(*behaviour) func(T) error, v T) error {
	var err error
	s.each(func(b *behaviour) {
		if f := hook(b); f != nil && err == nil {
			err = f(v)
		}
	})
	return err
}

// Mutate is how mutations are serialised.
func (s *Set) Mutate() Mode {
	m := Serialised
	s.each(func(b *behaviour) {
		if b.mutate != Serialised {
			m = b.mutate
		}
	})
	return m
}

// EnforceDelay is how long after a Fence is acknowledged its blocks are
// enforced; 0 is at once, before the answer (faithful).
func (s *Set) EnforceDelay() time.Duration {
	var d time.Duration
	s.each(func(b *behaviour) { d = max(d, b.enforce) })
	return d
}

// Enforced is what the backend is given to enforce for the stored
// prefixes ps: ps itself on the faithful path; a fault at AtEnforced maps
// each prefix to another (List still shows the stored ones).
func (s *Set) Enforced(ps []netip.Prefix) []netip.Prefix {
	s.each(func(b *behaviour) {
		if b.enforced != nil {
			out := make([]netip.Prefix, len(ps))
			for i, p := range ps {
				out[i] = b.enforced(p)
			}
			ps = out
		}
	})
	return ps
}

// List reshapes List's answer: the stored blocks, sorted.
func (s *Set) List(l []Listed) []Listed {
	s.each(func(b *behaviour) {
		if b.list != nil {
			l = b.list(l)
		}
	})
	return l
}

// Identity reshapes what the Identity service answers.
func (s *Set) Identity(id *Identity) {
	s.each(func(b *behaviour) {
		if b.identity != nil {
			b.identity(id)
		}
	})
}

// Clients reshapes one GetFenceClients answer.
func (s *Set) Clients(cs []Client) {
	s.each(func(b *behaviour) {
		if b.clients != nil {
			b.clients(cs)
		}
	})
}

// ClearOnClients reports whether GetFenceClients unfences everything.
func (s *Set) ClearOnClients() bool {
	clear := false
	s.each(func(b *behaviour) { clear = clear || b.clear })
	return clear
}

// Load is how the stored fences are read at start.
func (s *Set) Load() Load {
	l := Load{Migrate: true}
	s.each(func(b *behaviour) {
		if b.load != nil {
			b.load(&l)
		}
	})
	return l
}
