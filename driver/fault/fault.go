// Package fault parses the driver's fault-injection specs. Each fault breaks
// exactly one rule of the fence spec so that the conformance suite's own
// tests can show the suite catches it. The driver consults a *Set at clearly
// named points; a nil *Set or a Set with nothing enabled is the faithful
// driver.
//
// A spec is "name" or "name=arg": "delay=RPC:DURATION" and "code=RPC:CODE"
// take an argument, every other fault is a plain name (see Names).
package fault

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// RPCs are the names accepted in delay= and code= specs.
var RPCs = []string{"Fence", "Unfence", "List", "GetClients", "GetIdentity", "GetCapabilities", "Probe"}

// Set is the parsed set of active faults.
type Set struct {
	Delay map[string]time.Duration // per RPC: sleep this long first, ignoring cancellation
	Code  map[string]codes.Code    // per RPC: always fail with this code

	AcceptEmpty             bool // Fence/Unfence with no cidrs return OK
	AcceptMalformed         bool // malformed CIDRs are stored verbatim (bare IPs and padded values are AcceptBareIP's)
	AcceptBareIP            bool // bare IPs / padded values are stored verbatim
	LenientCIDRs            bool // bare IPs / padded values are accepted and stored canonically (breaks only a SHOULD)
	PartialApply            bool // the valid elements of a mixed request are applied, then INVALID_ARGUMENT
	NoAuth                  bool // secrets are not checked
	WrongAuthCode           bool // bad secrets give PERMISSION_DENIED instead of UNAUTHENTICATED
	LeakSecret              bool // UNAUTHENTICATED / INVALID_ARGUMENT messages carry the secret values
	IgnoreParams            bool // required parameters are not checked
	NoNormalise             bool // prefixes stored and listed exactly as given
	RejectIPv6              bool // IPv6 prefixes are INVALID_ARGUMENT
	NoDedupe                bool // duplicates stored and listed as often as requested
	FirstOnly               bool // a multi-CIDR Fence fences only the first element
	DropList                bool // List omits the most recently fenced prefix
	UnfenceNoop             bool // Unfence returns OK and removes nothing
	UnfenceOverlap          bool // Unfence also removes every overlapping stored prefix
	NotIdempotent           bool // ALREADY_EXISTS on re-fence, NOT_FOUND on unfence of an unknown prefix
	Race                    bool // mutations are not serialised (lost updates)
	InternalOnContention    bool // a mutation arriving during another fails with INTERNAL
	NoFenceCapability       bool // GetCapabilities omits NETWORK_FENCE
	GetClientsUnimplemented bool // GET_CLIENTS_TO_FENCE advertised, GetFenceClients UNIMPLEMENTED
	ClientsUnstable         bool // client ids change on every call
	ClientsBadAddress       bool // client addresses returned as ip:port
	ClientsEmptyID          bool // one client has an empty id
	ClientsMutate           bool // GetFenceClients unfences everything
	EmptyIdentity           bool // GetIdentity returns an empty name
	ProbeNotReady           bool // Probe returns ready=false
	ListUnimplemented       bool // ListClusterFence returns UNIMPLEMENTED
	RejectHostBits          bool // host bits are rejected whatever the HostBits option says
	ForgetOnRestart         bool // the store is wiped on start: nothing survives a restart

	// AckBeforeEnforce > 0: a Fence that adds prefixes is acknowledged as
	// soon as it is stored and enforced this long afterwards (spec
	// "ack-before-enforce" or "ack-before-enforce=DURATION").
	AckBeforeEnforce time.Duration

	specs []string
}

// flags maps each argument-less fault name to its field.
var flags = map[string]func(*Set) *bool{
	"accept-empty":              func(s *Set) *bool { return &s.AcceptEmpty },
	"accept-malformed":          func(s *Set) *bool { return &s.AcceptMalformed },
	"accept-bare-ip":            func(s *Set) *bool { return &s.AcceptBareIP },
	"lenient-cidrs":             func(s *Set) *bool { return &s.LenientCIDRs },
	"partial-apply":             func(s *Set) *bool { return &s.PartialApply },
	"no-auth":                   func(s *Set) *bool { return &s.NoAuth },
	"wrong-auth-code":           func(s *Set) *bool { return &s.WrongAuthCode },
	"leak-secret":               func(s *Set) *bool { return &s.LeakSecret },
	"ignore-params":             func(s *Set) *bool { return &s.IgnoreParams },
	"no-normalise":              func(s *Set) *bool { return &s.NoNormalise },
	"reject-ipv6":               func(s *Set) *bool { return &s.RejectIPv6 },
	"no-dedupe":                 func(s *Set) *bool { return &s.NoDedupe },
	"first-only":                func(s *Set) *bool { return &s.FirstOnly },
	"drop-list":                 func(s *Set) *bool { return &s.DropList },
	"unfence-noop":              func(s *Set) *bool { return &s.UnfenceNoop },
	"unfence-overlap":           func(s *Set) *bool { return &s.UnfenceOverlap },
	"not-idempotent":            func(s *Set) *bool { return &s.NotIdempotent },
	"race":                      func(s *Set) *bool { return &s.Race },
	"internal-on-contention":    func(s *Set) *bool { return &s.InternalOnContention },
	"no-fence-capability":       func(s *Set) *bool { return &s.NoFenceCapability },
	"get-clients-unimplemented": func(s *Set) *bool { return &s.GetClientsUnimplemented },
	"clients-unstable":          func(s *Set) *bool { return &s.ClientsUnstable },
	"clients-bad-address":       func(s *Set) *bool { return &s.ClientsBadAddress },
	"clients-empty-id":          func(s *Set) *bool { return &s.ClientsEmptyID },
	"clients-mutate":            func(s *Set) *bool { return &s.ClientsMutate },
	"empty-identity":            func(s *Set) *bool { return &s.EmptyIdentity },
	"probe-not-ready":           func(s *Set) *bool { return &s.ProbeNotReady },
	"list-unimplemented":        func(s *Set) *bool { return &s.ListUnimplemented },
	"reject-host-bits":          func(s *Set) *bool { return &s.RejectHostBits },
	"forget-on-restart":         func(s *Set) *bool { return &s.ForgetOnRestart },
}

// DefaultAckBeforeEnforce is the delay of a bare "ack-before-enforce".
const DefaultAckBeforeEnforce = 1500 * time.Millisecond

// Names returns every fault name, sorted; delay and code take an argument,
// ack-before-enforce an optional one.
func Names() []string {
	names := []string{"delay", "code", "ack-before-enforce"}
	for n := range flags {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Parse parses fault specs. An unknown name, a missing or unexpected
// argument, an unknown RPC, a bad duration or an unknown code is an error.
func Parse(specs []string) (*Set, error) {
	s := &Set{Delay: map[string]time.Duration{}, Code: map[string]codes.Code{}}
	for _, spec := range specs {
		name, arg, hasArg := strings.Cut(strings.TrimSpace(spec), "=")
		switch name {
		case "delay", "code":
			rpc, val, ok := strings.Cut(arg, ":")
			if !hasArg || !ok || val == "" {
				return nil, fmt.Errorf("fault %q: want %s=RPC:%s", spec, name, map[string]string{"delay": "DURATION", "code": "CODE"}[name])
			}
			if !slices.Contains(RPCs, rpc) {
				return nil, fmt.Errorf("fault %q: unknown RPC %q (want one of %s)", spec, rpc, strings.Join(RPCs, ", "))
			}
			if name == "delay" {
				d, err := time.ParseDuration(val)
				if err != nil || d < 0 {
					return nil, fmt.Errorf("fault %q: bad duration %q", spec, val)
				}
				s.Delay[rpc] = d
			} else {
				var c codes.Code
				if err := c.UnmarshalJSON([]byte(`"` + strings.ToUpper(val) + `"`)); err != nil || c == codes.OK {
					return nil, fmt.Errorf("fault %q: unknown or OK gRPC code %q", spec, val)
				}
				s.Code[rpc] = c
			}
		case "ack-before-enforce":
			s.AckBeforeEnforce = DefaultAckBeforeEnforce
			if hasArg {
				d, err := time.ParseDuration(arg)
				if err != nil || d <= 0 {
					return nil, fmt.Errorf("fault %q: want ack-before-enforce or ack-before-enforce=DURATION (> 0)", spec)
				}
				s.AckBeforeEnforce = d
			}
		default:
			f, ok := flags[name]
			if !ok {
				return nil, fmt.Errorf("unknown fault %q (known: %s)", name, strings.Join(Names(), ", "))
			}
			if hasArg {
				return nil, fmt.Errorf("fault %q takes no argument", name)
			}
			*f(s) = true
		}
		s.specs = append(s.specs, spec)
	}
	return s, nil
}

// Specs returns the specs the set was parsed from (for logging).
func (s *Set) Specs() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.specs)
}

// Active reports whether any fault is enabled.
func (s *Set) Active() bool { return s != nil && len(s.specs) > 0 }

// Before is the hook every RPC calls first: it sleeps for a configured delay
// (deliberately ignoring the caller's deadline, like a hung driver) and
// returns the configured failure code, if any.
func (s *Set) Before(rpc string) (codes.Code, bool) {
	if s == nil {
		return codes.OK, false
	}
	if d := s.Delay[rpc]; d > 0 {
		time.Sleep(d)
	}
	c, ok := s.Code[rpc]
	return c, ok
}
