// Package fault declares the reference driver's deliberate faults, each one
// typed value (Fault): its name, what it breaks, the hook of the driver's
// faithful path it acts at, and the exact conformance rules a suite run
// against the broken driver must fail (its Proofs). The suite's self test,
// the rule table's fault column and the driver's --fault help all read the
// one table, All.
//
// The driver calls the hooks of a *Set at named points of its faithful path
// (Call, Auth, CIDR, Request, Fence, Unfence, List, ...); a nil *Set, or one
// with no fault at a hook, leaves the faithful behaviour as it is. A spec on
// the command line is "name" or "name=arg": "delay=RPC:DURATION" and
// "code=RPC:CODE" take an argument, "ack-before-enforce" an optional one.
package fault

import (
	"net/netip"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// Hook names a point of the driver's faithful path at which faults act.
type Hook string

// The hooks, in the order a request meets them.
const (
	AtCall     Hook = "call"     // every RPC, first: a delay, a forced code
	AtAuth     Hook = "auth"     // the secrets check
	AtMessage  Hook = "message"  // an error's message
	AtParams   Hook = "params"   // the required-parameters check
	AtCIDR     Hook = "cidr"     // one CIDR of a request, parsed into a block
	AtRequest  Hook = "request"  // the blocks of a whole Fence or Unfence
	AtFence    Hook = "fence"    // one block stored by Fence
	AtUnfence  Hook = "unfence"  // one block removed by Unfence
	AtMutate   Hook = "mutate"   // how mutations are serialised
	AtEnforce  Hook = "enforce"  // when a committed change is enforced
	AtEnforced Hook = "enforced" // what the backend is given to enforce for each stored block
	AtList     Hook = "list"     // ListClusterFence's answer
	AtIdentity Hook = "identity" // GetIdentity, GetCapabilities and Probe
	AtClients  Hook = "clients"  // GetFenceClients's answer
	AtLoad     Hook = "load"     // the stored fences read at start
	AtLate     Hook = "late"     // whether a mutation its client gave up on is applied all the same, and how
)

// Fault is one deliberately broken behaviour of the reference driver.
type Fault struct {
	// Name is how --fault names it.
	Name string
	// Arg is the form of its argument ("RPC:DURATION"); "" when it takes
	// none. Optional says the argument may be left out.
	Arg      string
	Optional bool
	// Example is a spec of the fault as a user types it.
	Example string
	// Help says what the broken driver does.
	Help string
	// Proofs are the suite runs against the driver with this fault, each
	// with the exact rules it must fail. A fault without one is shown by
	// the driver's own tests (and, for a rule, by Otherwise).
	Proofs []Proof

	// make builds the fault's behaviour from its argument, fresh per
	// driver (some faults keep state between calls).
	make func(arg string) (*behaviour, error)
}

// Proof is one run of the conformance suite against the reference driver
// broken by a fault, and the exact set of rules it must fail: no more, no
// fewer.
type Proof struct {
	// Spec is the fault as --driver-fault takes it.
	Spec string
	// Flags are the suite flags the run needs.
	Flags []string
	// Fails are the rules that fail.
	Fails []string
	// MayFail are rules a seeded random walk (FENCE-007) may fail as
	// well, on some seeds: the exact set holds on every seed without
	// them, and the rules that judge the defect class by construction are
	// in Fails.
	MayFail []string
	// Why explains a set wider than the fault's own rule.
	Why string
}

// Hooks are the hooks the fault acts at.
func (f *Fault) Hooks() []Hook {
	b, err := f.make(f.arg(f.Example))
	if err != nil {
		panic("fault " + f.Name + ": its example does not parse: " + err.Error())
	}
	return b.hooks()
}

func (f *Fault) arg(spec string) string {
	if i := len(f.Name); len(spec) > i && spec[i] == '=' {
		return spec[i+1:]
	}
	return ""
}

// behaviour is what a fault does at each hook; nil (zero) fields leave the
// faithful behaviour alone.
type behaviour struct {
	call     func(rpc string) error
	auth     func(rpc string, a *Auth)
	message  func(code codes.Code, msg string, sent, valid map[string]string) string
	params   func(rpc string, p *Params)
	cidr     func(raw string, hb cidr.HostBits, next Parser) (cidr.Block, error)
	request  func(r *Request) error
	fence    func(s *FenceStep) error
	unfence  func(s *UnfenceStep) error
	mutate   Mode
	enforce  time.Duration
	enforced func(p netip.Prefix) netip.Prefix
	list     func(l []Listed) []Listed
	identity func(id *Identity)
	clients  func(cs []Client)
	late     func(rpc string) time.Duration
	oneByOne func(rpc string) bool
	clear    bool // clients: GetFenceClients unfences everything
	load     func(l *Load)
}

func (b *behaviour) hooks() []Hook {
	var out []Hook
	for _, h := range []struct {
		hook Hook
		set  bool
	}{
		{AtCall, b.call != nil}, {AtAuth, b.auth != nil}, {AtMessage, b.message != nil}, {AtParams, b.params != nil},
		{AtCIDR, b.cidr != nil}, {AtRequest, b.request != nil}, {AtFence, b.fence != nil}, {AtUnfence, b.unfence != nil},
		{AtMutate, b.mutate != Serialised}, {AtEnforce, b.enforce > 0}, {AtEnforced, b.enforced != nil}, {AtList, b.list != nil},
		{AtIdentity, b.identity != nil}, {AtClients, b.clients != nil || b.clear}, {AtLoad, b.load != nil},
		{AtLate, b.late != nil || b.oneByOne != nil},
	} {
		if h.set {
			out = append(out, h.hook)
		}
	}
	return out
}

// Auth is how the secrets of a request are checked.
type Auth struct {
	Check bool       // faithful: true
	Code  codes.Code // the code of a refusal; faithful: UNAUTHENTICATED
	// Equal compares a secret value sent with the valid one; nil is the
	// faithful comparison (equal, in constant time).
	Equal func(got, want string) bool
	// Find looks up the value sent for a configured key (want is its
	// valid value); nil is the faithful lookup, by the exact key.
	Find func(sent map[string]string, key, want string) (string, bool)
}

// Params is how a request's required parameters are checked.
type Params struct {
	Check  bool // faithful: true
	Values bool // a parameter given as key=value must carry the value; faithful: true
	// Equal and Find are as Auth's; nil is the faithful comparison and
	// lookup (equal; by the exact key).
	Equal func(got, want string) bool
	Find  func(sent map[string]string, key, want string) (string, bool)
}

// Lookup is Find, or the faithful lookup by the exact key.
func Lookup(find func(map[string]string, string, string) (string, bool), sent map[string]string, key, want string) (string, bool) {
	if find != nil {
		return find(sent, key, want)
	}
	v, ok := sent[key]
	return v, ok
}

// Parser is the faithful parse of one CIDR under a host-bits policy.
type Parser func(raw string, hb cidr.HostBits) (cidr.Block, error)

// Request is a Fence or Unfence as the hooks see it, once every CIDR is
// parsed.
type Request struct {
	RPC   string   // "Fence" or "Unfence"
	CIDRs []string // as the request carried them
	// Blocks are the blocks of the valid CIDRs, in request order, repeats
	// included.
	Blocks []cidr.Block
	// Invalid is the error of the first invalid CIDR; the faithful driver
	// then refuses the request and applies nothing.
	Invalid error
	// Partial applies the valid CIDRs despite Invalid.
	Partial bool
	// Repeats keeps repeated blocks; the faithful driver applies each once.
	Repeats bool
	// Concurrent says another Fence was in flight when this one arrived.
	Concurrent bool
	done       []func()
}

// Done runs what the hooks left to do when the request ends.
func (r *Request) Done() {
	for _, f := range r.done {
		f()
	}
	r.done = nil
}

// Fences is the fence set as the hooks see it inside a mutation.
type Fences interface {
	Has(b cidr.Block) bool
	Blocks() []cidr.Block
	Remove(b cidr.Block)
}

// Action is what Fence does with one block.
type Action int

// Actions; the faithful driver adds a block that is not stored and keeps
// one that is.
const (
	Add     Action = iota // store it
	Keep                  // leave the stored block as it is
	Recount               // store it once more (it is listed once more)
	Drop                  // acknowledge it and store nothing
)

// FenceStep is one block of a Fence being applied.
type FenceStep struct {
	Request *Request
	Block   cidr.Block
	Fences  Fences
	Action  Action
}

// UnfenceStep is one block of an Unfence being applied.
type UnfenceStep struct {
	Block  cidr.Block
	Fences Fences
	// Keep leaves the block stored; the faithful driver removes it.
	Keep bool
}

// Mode is how mutations are serialised.
type Mode int

// Modes.
const (
	Serialised       Mode = iota // faithful: group-committed, as if one at a time
	Racy                         // read, wait, overwrite: concurrent updates are lost
	FailOnContention             // a mutation arriving during another fails with INTERNAL
)

// Listed is one stored block in List's answer.
type Listed struct {
	Block cidr.Block
	Seq   uint64 // when it was fenced; higher is newer
	Count uint32 // times it is listed
	CIDR  string // how it is spelled in the answer
}

// Identity is what the Identity service answers.
type Identity struct {
	Name         string // GetIdentity's name
	NetworkFence bool   // GetCapabilities advertises NETWORK_FENCE
	GetClients   bool   // GetCapabilities advertises GET_CLIENTS_TO_FENCE; faithful: when GetFenceClients is served
	Ready        bool   // Probe's readiness
}

// Client is one entry of GetFenceClients's answer.
type Client struct {
	ID        string
	Addresses []string
}

// Load is how the stored fences are read at start.
type Load struct {
	Forget    bool // discard them
	Keep      int  // when > 0, keep only the Keep fenced first and discard the rest
	Spellings bool // blocks stored as spelled are expected
	Migrate   bool // rewrite IPv4-mapped records as IPv4; faithful: true
}

// Limits of the faults that have one.
const (
	CapacityLimit           = 512                     // silent-capacity: fences stored at most
	ExpiryAfter             = 3 * time.Second         // expire-fences: default lifetime of a fence, shorter than a default run
	RebuildEvery            = 1500 * time.Millisecond // rebuild-partial: idle time before a rebuild, and between rebuilds
	RebuildTakes            = 600 * time.Millisecond  // rebuild-partial: how long List shows half the set
	WideIPv6Bits            = 96                      // fail-wide-ipv6: IPv6 blocks shorter than this fail
	DefaultAckBeforeEnforce = 1500 * time.Millisecond // a bare ack-before-enforce
)

// wideIPv6 reports whether p is an IPv6 block fail-wide-ipv6 cannot expand.
func wideIPv6(p netip.Prefix) bool { return p.Addr().Is6() && p.Bits() < WideIPv6Bits }
