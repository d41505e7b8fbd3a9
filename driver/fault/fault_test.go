package fault

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

func TestParse(t *testing.T) {
	s, err := Parse([]string{"delay=Fence:50ms", "code=List:INTERNAL", "code=Probe:unavailable", "race", "no-dedupe"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Active() || len(s.Specs()) != 5 || s.Mutate() != Racy || !s.Acts(AtRequest) || s.Acts(AtAuth) {
		t.Fatalf("parsed %v: mode %v", s.Specs(), s.Mutate())
	}
	start := time.Now()
	if err := s.Call("Fence"); err != nil || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("Call(Fence) = %v after %v", err, time.Since(start))
	}
	if c := status.Code(s.Call("List")); c != codes.Internal {
		t.Fatalf("Call(List) = %v", c)
	}
	if c := status.Code(s.Call("Probe")); c != codes.Unavailable {
		t.Fatalf("Call(Probe) = %v", c)
	}
	var none *Set
	if none.Active() || none.Call("Fence") != nil || none.Mutate() != Serialised || !none.Auth("Fence").Check || !none.Load().Migrate {
		t.Fatal("a nil set is not the faithful driver")
	}
}

func TestParseErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"bogus":                   "unknown fault",
		"race=1":                  "takes no argument",
		"delay":                   "want delay=RPC:DURATION",
		"delay=Fence":             "want delay=RPC:DURATION",
		"delay=Fence:soon":        "bad duration",
		"delay=Fence:-1s":         "bad duration",
		"delay=Nope:1s":           "unknown RPC",
		"code=Fence:NOPE":         "unknown or OK",
		"code=Fence:OK":           "unknown or OK",
		"code=Fence":              "want code=RPC:CODE",
		"code=Frobnicate:OK":      "unknown RPC",
		"ack-before-enforce=soon": "ack-before-enforce=DURATION",
		"ack-before-enforce=-1s":  "ack-before-enforce=DURATION",
		"ack-before-enforce=":     "ack-before-enforce=DURATION",
	} {
		_, err := Parse([]string{spec})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want error mentioning %q", spec, err, want)
		}
	}
}

// TestEveryFaultIsDeclaredWhole: each fault's example parses, it acts at a
// hook, says what it breaks, and is shown by a suite proof or named where
// it is shown otherwise.
func TestEveryFaultIsDeclaredWhole(t *testing.T) {
	shownElsewhere := map[string]bool{"lenient-cidrs": true, "forget-on-restart": true, "persist-first": true, "ack-before-enforce": true,
		"enforce-first-address": true, "enforce-neighbour": true}
	for _, f := range All() {
		s, err := Parse([]string{f.Example})
		if err != nil || !s.Active() {
			t.Errorf("%s: example %q: %v", f.Name, f.Example, err)
		}
		if f.Help == "" || len(f.Hooks()) == 0 {
			t.Errorf("%s: no help or no hook", f.Name)
		}
		if len(f.Proofs) == 0 && !shownElsewhere[f.Name] {
			t.Errorf("%s has no proof", f.Name)
		}
		for _, p := range f.Proofs {
			if _, err := Parse([]string{p.Spec}); err != nil || len(p.Fails) == 0 {
				t.Errorf("%s: proof %q: %v, fails %v", f.Name, p.Run(), err, p.Fails)
			}
		}
	}
	if len(Names()) != 81 {
		t.Errorf("got %d faults, want 81", len(Names()))
	}
}

// parse is the faithful parse the cidr hooks wrap.
func parse(raw string, hb cidr.HostBits) (cidr.Block, error) {
	p, err := cidr.Parse(raw, hb)
	return cidr.Canonical(p), err
}

func TestCIDRHooksWrapTheFaithfulParse(t *testing.T) {
	for _, c := range []struct {
		fault, raw, want string
		fails            bool
	}{
		{"", "192.0.2.5/24", "192.0.2.0/24", false},
		{"reject-host-bits", "192.0.2.5/24", "", true},
		{"no-normalise", "192.0.2.5/24", "192.0.2.5/24", false},
		{"accept-bare-ip", "192.0.2.1", "192.0.2.1", false},
		{"accept-bare-ip", "not-a-cidr", "", true},
		{"accept-malformed", "not-a-cidr", "not-a-cidr", false},
		{"lenient-cidrs", " 192.0.2.1 ", "192.0.2.1/32", false},
		{"reject-ipv6", "2001:db8::/64", "", true},
		{"reject-ipv4-31", "192.0.2.0/31", "", true},
		{"keep-mapped", "::ffff:192.0.2.1/128", "::ffff:192.0.2.1/128", false},
		{"", "::ffff:192.0.2.1/128", "192.0.2.1/32", false},
	} {
		var specs []string
		if c.fault != "" {
			specs = []string{c.fault}
		}
		s, err := Parse(specs)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.CIDR(c.raw, cidr.Normalise, parse)
		if (err != nil) != c.fails || (err == nil && b.String() != c.want) {
			t.Errorf("%q under %q: %v %v, want %q (fails %v)", c.raw, c.fault, b, err, c.want, c.fails)
		}
	}
}

type fences map[cidr.Block]bool

func (f fences) Has(b cidr.Block) bool { return f[b] }
func (f fences) Remove(b cidr.Block)   { delete(f, b) }
func (f fences) Blocks() []cidr.Block {
	var out []cidr.Block
	for b := range f {
		out = append(out, b)
	}
	return out
}

func block(s string) cidr.Block { return cidr.Canonical(netip.MustParsePrefix(s)) }

func TestStepHooks(t *testing.T) {
	s, _ := Parse([]string{"unfence-overlap", "not-idempotent"})
	f := fences{block("192.0.2.0/24"): true, block("192.0.2.0/25"): true, block("198.51.100.0/24"): true}
	st := UnfenceStep{Block: block("192.0.2.0/24"), Fences: f}
	if err := s.Unfence(&st); err != nil || st.Keep || f.Has(block("192.0.2.0/25")) || !f.Has(block("198.51.100.0/24")) {
		t.Errorf("unfence-overlap left %v (keep %v, %v)", f.Blocks(), st.Keep, err)
	}
	st = UnfenceStep{Block: block("203.0.113.0/24"), Fences: f}
	if status.Code(s.Unfence(&st)) != codes.NotFound {
		t.Error("not-idempotent did not refuse an Unfence of a block not fenced")
	}
	fs := FenceStep{Block: block("192.0.2.0/24"), Fences: f, Action: Keep}
	if status.Code(s.Fence(&fs)) != codes.AlreadyExists {
		t.Error("not-idempotent did not refuse a repeated Fence")
	}
	d, _ := Parse([]string{"no-dedupe"})
	r := Request{RPC: "Fence"}
	fs = FenceStep{Request: &r, Block: block("192.0.2.0/24"), Fences: f, Action: Keep}
	if d.Request(&r) != nil || !r.Repeats || d.Fence(&fs) != nil || fs.Action != Recount {
		t.Errorf("no-dedupe: repeats %v, action %v", r.Repeats, fs.Action)
	}
	w, _ := Parse([]string{"fail-wide-ipv6"})
	r = Request{RPC: "Unfence", Blocks: []cidr.Block{block("2001:db8::/64")}}
	if status.Code(w.Request(&r)) != codes.Internal {
		t.Error("fail-wide-ipv6 took a /64")
	}
	r = Request{RPC: "Fence", Blocks: []cidr.Block{block("2001:db8::/64")}, Invalid: errors.New("bad")}
	if w.Request(&r) != nil {
		t.Error("fail-wide-ipv6 answered before the invalid CIDR")
	}
}
