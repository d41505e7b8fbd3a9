package fault

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// RPCs are the names accepted in delay= and code= specs.
var RPCs = []string{"Fence", "Unfence", "List", "GetClients", "GetIdentity", "GetCapabilities", "Probe"}

// Rule sets that several proofs share.
var (
	// listCases are LIST-001 and the error-table rules with a case of
	// their own for List: a List that is missing or broken answers them
	// wrongly. The rules that read the fences through List are NOT RUN
	// then, not failed: the defect is counted once.
	listCases = []string{"ERR-002", "ERR-003", "ERR-004", "ERR-007", "LIST-001"}
	// readBack read the blocks they fenced (and, for the error table, the
	// block a refused Unfence must leave) back from List: a List that
	// misses or misspells the newest fence fails them all.
	readBack = []string{"CIDR-002", "CIDR-005", "CIDR-006", "CIDR-007", "CIDR-008", "CIDR-009", "CIDR-011", "CIDR-012", "CIDR-013", "CIDR-014",
		"CONC-001", "CONC-002", "ERR-002", "ERR-003", "ERR-004", "ERR-007", "FENCE-001", "FENCE-002", "FENCE-005", "FENCE-006", "FENCE-007", "FENCE-009", "FENCE-010", "SCALE-001"}
	// fencers fence: a Fence that always fails fails them all (not
	// EXPIRE-001, whose sentinel was never fenced: NOT RUN).
	fencers = []string{"CIDR-001", "CIDR-002", "CIDR-003", "CIDR-005", "CIDR-006", "CIDR-007", "CIDR-008", "CIDR-009", "CIDR-011", "CIDR-012", "CIDR-013", "CIDR-014",
		"CLIENT-003", "CLIENT-006", "CONC-001", "CONC-002", "CONC-003", "ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-006", "ERR-007",
		"FENCE-001", "FENCE-002", "FENCE-003", "FENCE-005", "FENCE-006", "FENCE-007", "FENCE-008", "FENCE-009", "FENCE-010", "LIST-002", "SCALE-001"}
)

// with is set and more rules.
func with(set []string, ids ...string) []string { return append(slices.Clone(set), ids...) }

// fails is the proof of a plain fault: the suite run with the fault alone.
func fails(ids ...string) []Proof { return []Proof{{Fails: ids}} }

// whyModel is the Why of a width or spelling fault that fails FENCE-010
// besides its own rule: the generated relations put every width class of
// both families, in every spelling a driver must accept, through the
// reference model, so no defect of the class can escape FENCE-010.
func whyModel(rule string) string {
	return "FENCE-010 generalises " + rule + ": its generated cases fence every width class of both families in every spelling a driver must accept, so every width or spelling defect fails it too (one that failed " + rule + " alone would be a case FENCE-010 lacks)"
}

// fixed is the constructor of a fault whose behaviour keeps no state.
func fixed(b behaviour) func(string) (*behaviour, error) {
	return func(string) (*behaviour, error) { c := b; return &c, nil }
}

// at makes a cidr hook from a check of the faithful parse's result.
func at(f func(raw string, b cidr.Block, err error) (cidr.Block, error)) func(string, cidr.HostBits, Parser) (cidr.Block, error) {
	return func(raw string, hb cidr.HostBits, next Parser) (cidr.Block, error) {
		b, err := next(raw, hb)
		return f(raw, b, err)
	}
}

// all is the table of faults, in the order the rule table lists proofs:
// the faults of this file, then those of the credentials' comparison
// (credentials.go), of what is fenced, listed and reported (fenced.go), of
// blocks that are not independent or not the width asked (blocks.go) and of
// what is enforced (enforced.go).
var all = slices.Concat(faults, credentialFaults, credentialVariantFaults, fencedFaults, blockFaults, enforcedFaults)

var faults = []*Fault{
	{Name: "accept-empty", Help: "Fence and Unfence with no cidrs answer OK", Proofs: fails("ERR-001", "ERR-006"),
		make: fixed(behaviour{request: func(r *Request) error {
			if len(r.CIDRs) == 0 {
				r.Invalid = nil
			}
			return nil
		}})},
	{Name: "accept-malformed", Help: "malformed CIDRs are stored as written (bare and padded addresses are accept-bare-ip's)", Proofs: fails("CIDR-001", "CIDR-002", "ERR-006"),
		make: fixed(behaviour{load: spellings, cidr: at(func(raw string, b cidr.Block, err error) (cidr.Block, error) {
			if err != nil && raw != "" && !cidr.IsBareOrPadded(raw) && !errors.Is(err, cidr.ErrHostBits) && !errors.Is(err, cidr.ErrTooWide) {
				return cidr.Spelled(raw), nil
			}
			return b, err
		})})},
	{Name: "accept-bare-ip", Help: "bare addresses and padded CIDRs are stored as written", Proofs: fails("CIDR-003"),
		make: fixed(behaviour{load: spellings, cidr: at(func(raw string, b cidr.Block, err error) (cidr.Block, error) {
			if err != nil && raw != "" && cidr.IsBareOrPadded(raw) {
				return cidr.Spelled(raw), nil
			}
			return b, err
		})})},
	{Name: "lenient-cidrs", Help: "bare addresses and padded CIDRs are accepted and stored canonically (breaks only a SHOULD)",
		make: fixed(behaviour{load: spellings, cidr: func(raw string, hb cidr.HostBits, next Parser) (cidr.Block, error) {
			b, err := next(raw, hb)
			if err != nil && cidr.IsBareOrPadded(raw) {
				return next(cidr.Loosen(raw), hb)
			}
			return b, err
		}})},
	{Name: "partial-apply", Help: "the valid CIDRs of a mixed request are applied, then INVALID_ARGUMENT", Proofs: fails("CIDR-002"),
		make: fixed(behaviour{request: func(r *Request) error { r.Partial = true; return nil }})},
	{Name: "no-auth", Help: "secrets are not checked", Proofs: fails("ERR-003", "ERR-004"),
		make: fixed(behaviour{auth: func(_ string, a *Auth) { a.Check = false }})},
	{Name: "auth-fence-only", Help: "only Fence checks secrets; Unfence, List and GetFenceClients do not",
		Proofs: []Proof{{Fails: []string{"ERR-003", "ERR-004"}, Why: "the Unfence, List and GetFenceClients cases"}},
		make:   fixed(behaviour{auth: func(rpc string, a *Auth) { a.Check = a.Check && rpc == "Fence" }})},
	{Name: "wrong-auth-code", Help: "bad secrets give PERMISSION_DENIED instead of UNAUTHENTICATED",
		Proofs: []Proof{{Fails: []string{"ERR-003", "ERR-004", "ERR-006"}, Why: "PERMISSION_DENIED is not in the error table"}},
		make:   fixed(behaviour{auth: func(_ string, a *Auth) { a.Code = codes.PermissionDenied }})},
	{Name: "leak-secret", Help: "UNAUTHENTICATED and INVALID_ARGUMENT messages carry the request's secret values",
		Proofs: []Proof{{Flags: []string{"--secret", "userKey=fenceproof-test-secret-value"}, Fails: []string{"ERR-005", "SUITE-002"}}},
		make: fixed(behaviour{message: func(c codes.Code, msg string, secrets, _ map[string]string) string {
			if c == codes.Unauthenticated || c == codes.InvalidArgument || c == codes.PermissionDenied {
				msg += fmt.Sprintf(" (request secrets: %v)", secrets)
			}
			return msg
		}})},
	{Name: "ignore-params", Help: "required parameters are not checked",
		Proofs: []Proof{{Fails: []string{"ERR-002", "ERR-007"}, Why: "no parameter is checked at all"}},
		make:   fixed(behaviour{params: func(_ string, p *Params) { p.Check = false }})},
	{Name: "ignore-param-values", Help: "required parameters are checked for presence only, not for their value", Proofs: fails("ERR-007"),
		make: fixed(behaviour{params: func(_ string, p *Params) { p.Values = false }})},
	{Name: "no-normalise", Help: "CIDRs are stored and listed exactly as given",
		Proofs: []Proof{{Fails: []string{"CIDR-005", "CIDR-007", "CIDR-011", "CIDR-012", "FENCE-010", "LIST-003"}, Why: "each spelling is stored apart, so one block is listed in several"}},
		make: fixed(behaviour{load: spellings, cidr: at(func(raw string, b cidr.Block, err error) (cidr.Block, error) {
			if err == nil {
				return cidr.Spelled(raw), nil
			}
			return b, err
		})})},
	{Name: "reject-ipv6", Help: "IPv6 blocks are INVALID_ARGUMENT",
		Proofs: []Proof{{Fails: []string{"CIDR-007", "CIDR-011", "CIDR-013", "CIDR-014", "FENCE-001", "FENCE-004", "FENCE-005", "FENCE-008", "FENCE-009", "FENCE-010"}, Why: "every rule with an IPv6 case, under profile ipv6=required"}},
		make: fixed(behaviour{cidr: at(func(_ string, b cidr.Block, err error) (cidr.Block, error) {
			if err == nil && b.Prefix.Addr().Is6() {
				return cidr.Block{}, errors.New("IPv6 is not supported")
			}
			return b, err
		})})},
	{Name: "no-dedupe", Help: "repeated blocks are stored and listed as often as they are fenced", Proofs: fails("CIDR-007", "CIDR-008", "CIDR-011", "CONC-001", "FENCE-002", "FENCE-007", "FENCE-010", "LIST-003"),
		make: fixed(behaviour{request: func(r *Request) error { r.Repeats = true; return nil }, fence: recount(func(*FenceStep) bool { return true })})},
	{Name: "first-only", Help: "a Fence of several blocks fences only the first",
		Proofs: []Proof{{Fails: []string{"CIDR-013", "FENCE-005", "FENCE-007", "FENCE-009", "FENCE-010", "SCALE-001"}, Why: "every rule that fences several blocks in one request (FENCE-010 sends each step of its cases together)"}},
		make: fixed(behaviour{request: func(r *Request) error {
			if r.RPC == "Fence" && len(r.Blocks) > 1 {
				r.Blocks = r.Blocks[:1]
			}
			return nil
		}})},
	{Name: "mixed-first-family", Help: "a Fence mixing IPv4 and IPv6 fences only the family of its first block", Proofs: fails("CIDR-013", "FENCE-005"),
		make: fixed(behaviour{request: func(r *Request) error {
			if r.RPC != "Fence" || len(r.Blocks) < 2 || !r.Blocks[0].Enforced() {
				return nil
			}
			v4 := r.Blocks[0].Prefix.Addr().Is4()
			r.Blocks = slices.DeleteFunc(slices.Clone(r.Blocks), func(b cidr.Block) bool { return b.Enforced() && b.Prefix.Addr().Is4() != v4 })
			return nil
		}})},
	{Name: "drop-list", Help: "List leaves out the most recently fenced block",
		Proofs: []Proof{{Fails: readBack, Why: "List lies about the newest fence, which every state rule reads"}},
		make: fixed(behaviour{list: func(l []Listed) []Listed {
			newest := -1
			for i, e := range l {
				if newest < 0 || e.Seq >= l[newest].Seq {
					newest = i
				}
			}
			if newest >= 0 {
				l = slices.Delete(l, newest, newest+1)
			}
			return l
		}})},
	{Name: "list-storage-native", Help: "List spells each fence as a storage blocklist entry, address:port/nonce",
		Proofs: []Proof{
			{Fails: with(readBack, "LIST-002"), Why: "no listed entry names a block, so every state rule sees its fences missing (EXPIRE-001 holds no sentinel: none was listed)"},
			{Flags: []string{"--label-filter", "LIST-002"}, Fails: []string{"LIST-002"}},
		},
		make: fixed(behaviour{list: func(l []Listed) []Listed {
			for i, e := range l {
				if p := e.Block.Prefix; e.Block.Enforced() {
					l[i].CIDR = fmt.Sprintf("%s/%d", netip.AddrPortFrom(p.Addr(), 0), 3710375+p.Bits())
				}
			}
			return l
		}})},
	{Name: "unfence-noop", Help: "Unfence answers OK and removes nothing",
		Proofs: []Proof{{Fails: []string{"CIDR-007", "CIDR-011", "FENCE-001", "FENCE-003", "FENCE-006", "FENCE-007", "FENCE-010", "SUITE-001"}, Why: "every rule that unfences and reads, until the fences left behind fill the IPv4 space (the rules after are NOT RUN, naming them)"}},
		make:   fixed(behaviour{unfence: func(s *UnfenceStep) error { s.Keep = true; return nil }})},
	{Name: "unfence-overlap", Help: "Unfence also removes every stored block that overlaps the one named", Proofs: fails("CIDR-009", "FENCE-007", "FENCE-010"),
		make: fixed(behaviour{unfence: func(s *UnfenceStep) error {
			for _, b := range s.Fences.Blocks() {
				if b != s.Block && b.Enforced() && s.Block.Enforced() && b.Prefix.Overlaps(s.Block.Prefix) {
					s.Fences.Remove(b)
				}
			}
			return nil
		}})},
	{Name: "unfence-neighbour", Help: "Unfence also removes the next fence in key order (an off-by-one)",
		Proofs: []Proof{{Fails: []string{"CIDR-009", "EXPIRE-001", "FENCE-006", "FENCE-007", "FENCE-010"}, Why: "it also removes the sentinel when that is the neighbour"}},
		make: fixed(behaviour{unfence: func(s *UnfenceStep) error {
			// The next stored block after it in key order, found in one
			// pass (a sort per block made a large Unfence take seconds).
			if !s.Fences.Has(s.Block) {
				return nil
			}
			key := s.Block.String()
			var next cidr.Block
			found := false
			for _, b := range s.Fences.Blocks() {
				if k := b.String(); k > key && (!found || k < next.String()) {
					next, found = b, true
				}
			}
			if found {
				s.Fences.Remove(next)
			}
			return nil
		}})},
	{Name: "unfence-verbatim", Help: "Unfence matches the CIDRs as written, so a host-bit spelling removes nothing",
		Proofs: []Proof{{Fails: []string{"CIDR-007", "CIDR-011", "FENCE-010", "SUITE-001"}, Why: "the expanded IPv6 spelling and the host-bit spelling; cleanup leaves them"}},
		make: fixed(behaviour{request: func(r *Request) error {
			if r.RPC == "Unfence" {
				r.Blocks = make([]cidr.Block, len(r.CIDRs))
				for i, c := range r.CIDRs {
					r.Blocks[i] = cidr.Spelled(c)
				}
			}
			return nil
		}})},
	{Name: "not-idempotent", Help: "ALREADY_EXISTS on a repeated Fence, NOT_FOUND on an Unfence of a block not fenced",
		Proofs: fails("CIDR-007", "CIDR-008", "CIDR-011", "CONC-001", "FENCE-002", "FENCE-003", "FENCE-004", "FENCE-007", "FENCE-010", "SUITE-001"),
		make: fixed(behaviour{
			fence: func(s *FenceStep) error {
				if s.Action == Keep {
					return status.Errorf(codes.AlreadyExists, "%s is already fenced", s.Block)
				}
				return nil
			},
			unfence: func(s *UnfenceStep) error {
				if !s.Fences.Has(s.Block) {
					return status.Errorf(codes.NotFound, "%s is not fenced", s.Block)
				}
				return nil
			},
		})},
	{Name: "race", Help: "mutations are not serialised: concurrent updates are lost", Proofs: fails("CONC-002", "CONC-003"),
		make: fixed(behaviour{mutate: Racy})},
	{Name: "internal-on-contention", Help: "a mutation arriving during another fails with INTERNAL", Proofs: fails("CONC-001", "CONC-002", "CONC-003"),
		make: fixed(behaviour{mutate: FailOnContention})},
	{Name: "concurrent-dup", Help: "a Fence arriving while another is in flight stores its blocks once more",
		Proofs: []Proof{{Fails: []string{"CONC-001", "LIST-003"}, Why: "the block stored twice is listed twice"}},
		make: func(string) (*behaviour, error) {
			var inflight atomic.Int32
			return &behaviour{
				request: func(r *Request) error {
					if r.RPC != "Fence" || (r.Invalid != nil && !r.Partial) {
						return nil
					}
					n := inflight.Add(1)
					time.Sleep(concurrentWindow)
					r.Concurrent = n > 1 || inflight.Load() > 1
					r.done = append(r.done, func() { inflight.Add(-1) })
					return nil
				},
				fence: recount(func(s *FenceStep) bool { return s.Request.Concurrent }),
			}, nil
		}},
	{Name: "no-fence-capability", Help: "GetCapabilities leaves out NETWORK_FENCE", Proofs: fails("IDENT-003"),
		make: fixed(behaviour{identity: func(id *Identity) { id.NetworkFence = false }})},
	{Name: "get-clients-unimplemented", Help: "GET_CLIENTS_TO_FENCE is advertised, GetFenceClients answers UNIMPLEMENTED",
		Proofs: []Proof{{Fails: []string{"CLIENT-001", "CLIENT-002", "CLIENT-003", "CLIENT-005", "CLIENT-006", "ERR-002", "ERR-003", "ERR-004", "ERR-007", "IDENT-004"}, Why: "the GetFenceClients cases of the error table"}},
		make:   fixed(behaviour{call: unimplemented("GetClients", "GetFenceClients is not implemented in this mode")})},
	{Name: "clients-unstable", Help: "client ids change on every call", Proofs: fails("CLIENT-002"),
		make: func(string) (*behaviour, error) {
			var calls atomic.Uint64
			return &behaviour{clients: func(cs []Client) {
				n := calls.Add(1)
				for i := range cs {
					cs[i].ID = fmt.Sprintf("%s-%d", cs[i].ID, n)
				}
			}}, nil
		}},
	{Name: "clients-bad-address", Help: "client addresses are answered as ip:port", Proofs: fails("CLIENT-001"),
		make: fixed(behaviour{clients: func(cs []Client) {
			for _, c := range cs {
				for j, a := range c.Addresses {
					if p, err := netip.ParsePrefix(a); err == nil {
						c.Addresses[j] = netip.AddrPortFrom(p.Addr(), 6789).String()
					}
				}
			}
		}})},
	{Name: "clients-empty-id", Help: "one client has an empty id", Proofs: fails("CLIENT-001"),
		make: fixed(behaviour{clients: func(cs []Client) {
			if len(cs) > 0 {
				cs[0].ID = ""
			}
		}})},
	{Name: "clients-mutate", Help: "GetFenceClients unfences everything",
		Proofs: []Proof{{Fails: []string{"CLIENT-003", "EXPIRE-001"}, Why: "the mutation also removes the sentinel"}},
		make:   fixed(behaviour{clear: true})},
	{Name: "empty-identity", Help: "GetIdentity answers an empty name", Proofs: fails("IDENT-001"),
		make: fixed(behaviour{identity: func(id *Identity) { id.Name = "" }})},
	{Name: "probe-not-ready", Help: "Probe answers ready=false", Proofs: fails("IDENT-002"),
		make: fixed(behaviour{identity: func(id *Identity) { id.Ready = false }})},
	{Name: "list-unimplemented", Help: "ListClusterFence answers UNIMPLEMENTED",
		Proofs: []Proof{{Fails: listCases, Why: "profile listClusterFence=required: LIST-001 and the List cases of the error table; the rules that read the fences are NOT RUN"}},
		make:   fixed(behaviour{call: unimplemented("List", "ListClusterFence is not implemented (fault list-unimplemented)")})},
	{Name: "code", Arg: "RPC:CODE", Example: "code=List:INTERNAL", Help: "RPC always fails with CODE",
		Proofs: []Proof{
			{Spec: "code=List:INTERNAL", Fails: with(listCases, "ERR-006"), Why: "a List that panics into INTERNAL: LIST-001 and List's error-table cases, nothing else; the rules that read the fences are NOT RUN"},
			{Spec: "code=List:INTERNAL", Flags: []string{"--list", "optional"}, Fails: with(listCases, "ERR-006"), Why: "profile listClusterFence=optional: a List that is there but broken fails the same"},
			{Spec: "code=Fence:INTERNAL", Fails: fencers, Why: "every rule that fences"},
			{Spec: "code=Unfence:INTERNAL", Fails: []string{"CIDR-001", "CIDR-002", "CIDR-007", "CIDR-009", "CIDR-011", "CONC-003", "ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-006", "ERR-007", "FENCE-001", "FENCE-003", "FENCE-004", "FENCE-006", "FENCE-007", "FENCE-008", "FENCE-010", "SCALE-001", "SUITE-001"}, Why: "every rule that unfences, until the fences left behind fill the IPv4 space (the rules after are NOT RUN, naming them; SCALE-001 still finds /32s to fence and unfence); cleanup fails once, under SUITE-001"},
		},
		make: forcedCode},
	{Name: "silent-capacity", Help: fmt.Sprintf("fences beyond %d are acknowledged and silently dropped", CapacityLimit), Proofs: fails("SCALE-001"),
		make: fixed(behaviour{fence: func(s *FenceStep) error {
			if s.Action == Add && len(s.Fences.Blocks()) >= CapacityLimit {
				s.Action = Drop
			}
			return nil
		}})},
	{Name: "capacity", Arg: "FAMILY:N", Example: "capacity=IPv4:200", Help: "fences of one family (IPv4 or IPv6) beyond N are acknowledged and silently dropped; the other family's are not",
		Proofs: []Proof{{Spec: "capacity=IPv4:200", Fails: []string{"SCALE-001"}}, {Spec: "capacity=IPv4:600", Fails: []string{"SCALE-001"}}, {Spec: "capacity=IPv6:500", Fails: []string{"SCALE-001"}}},
		make:   familyCapacity},
	{Name: "expire-fences", Arg: "DURATION", Optional: true, Help: fmt.Sprintf("fences vanish DURATION (default %s) after they were made, like a storage blocklist's expiry", ExpiryAfter),
		Proofs: []Proof{
			{Flags: []string{"--hold", "4s"}, Fails: []string{"EXPIRE-001"}},
			{Spec: "expire-fences=20s", Flags: []string{"--hold", "20s"}, Fails: []string{"EXPIRE-001"}, Why: "an expiry as long as the default --hold: the sentinels are read at the end of the run, older than it"},
		},
		make: func(arg string) (*behaviour, error) {
			after := ExpiryAfter
			if arg != "" {
				var err error
				if after, err = time.ParseDuration(arg); err != nil || after <= 0 {
					return nil, errors.New("want expire-fences or expire-fences=DURATION (> 0)")
				}
			}
			var born sync.Map // cidr.Block -> time.Time
			return &behaviour{
				fence: func(s *FenceStep) error {
					if s.Action == Add {
						born.Store(s.Block, time.Now())
					}
					return nil
				},
				list: func(l []Listed) []Listed {
					return slices.DeleteFunc(l, func(e Listed) bool {
						t, ok := born.Load(e.Block)
						return ok && time.Since(t.(time.Time)) > after
					})
				},
			}, nil
		}},
	{Name: "rebuild-partial", Proofs: []Proof{{Flags: []string{"--hold", "20s"}, Fails: []string{"EXPIRE-001"}, Why: "the watch while the sentinels are held (at least 5 s) sees the partial List"}}, Help: fmt.Sprintf("after %s without a Fence or Unfence the driver rebuilds its set from the store every %s, and for the first %s of each rebuild List shows half of the set", RebuildEvery, RebuildEvery, RebuildTakes),
		make: func(string) (*behaviour, error) {
			var last atomic.Int64 // when the last mutation was applied, in Unix nanoseconds
			last.Store(time.Now().UnixNano())
			touch := func() { last.Store(time.Now().UnixNano()) }
			return &behaviour{
				fence:   func(*FenceStep) error { touch(); return nil },
				unfence: func(*UnfenceStep) error { touch(); return nil },
				list: func(l []Listed) []Listed {
					idle := time.Duration(time.Now().UnixNano() - last.Load())
					if idle >= RebuildEvery && idle%RebuildEvery < RebuildTakes {
						return l[:len(l)/2]
					}
					return l
				},
			}, nil
		}},
	{Name: "keep-mapped", Help: "IPv4-mapped IPv6 is acknowledged and kept as IPv6, where no IPv4 packet matches it",
		Proofs: []Proof{{Fails: []string{"CIDR-012", "FENCE-010"}, Why: whyModel("CIDR-012")}},
		make: fixed(behaviour{
			load: func(l *Load) { l.Spellings, l.Migrate = true, false },
			cidr: at(func(raw string, b cidr.Block, err error) (cidr.Block, error) {
				if p, perr := netip.ParsePrefix(raw); err == nil && perr == nil && p.Addr().Is4In6() && p.Bits() >= 96 {
					return cidr.Canonical(p.Masked()), nil
				}
				return b, err
			}),
		})},
	{Name: "reject-ipv4-31", Help: "IPv4 /31 blocks are INVALID_ARGUMENT (point-to-point links taken for invalid)", Proofs: []Proof{{Fails: []string{"CIDR-006", "FENCE-008", "FENCE-010"}, Why: "every rule that fences an IPv4 /31 (FENCE-008 fences one in each of its sizes); " + whyModel("CIDR-006")}},
		make: fixed(behaviour{cidr: at(func(_ string, b cidr.Block, err error) (cidr.Block, error) {
			if err == nil && b.Prefix.Addr().Is4() && b.Prefix.Bits() == 31 {
				return cidr.Block{}, errors.New("/31 is not a valid IPv4 network")
			}
			return b, err
		})})},
	{Name: "fail-wide-ipv6", Help: fmt.Sprintf("IPv6 blocks wider than /%d fail with INTERNAL (expanded address by address until out of memory)", WideIPv6Bits),
		Proofs: []Proof{{Fails: []string{"CIDR-005", "CIDR-007", "CIDR-011", "CIDR-013", "CIDR-014", "FENCE-005", "FENCE-008", "FENCE-010"}, Why: "every rule that fences an IPv6 /64 or wider (cleanup failures of blocks it never acknowledged are not charged)"}},
		make: fixed(behaviour{request: func(r *Request) error {
			if r.Invalid != nil && !r.Partial {
				return nil
			}
			for _, b := range r.Blocks {
				if b.Enforced() && wideIPv6(b.Prefix) {
					return status.Errorf(codes.Internal, "expanding %s into addresses: out of memory", b)
				}
			}
			return nil
		}})},
	{Name: "reject-host-bits", Help: "host bits are rejected whatever the driver's host-bits option says",
		Proofs: []Proof{{Flags: []string{"--host-bits", "normalise"}, Fails: []string{"CIDR-005", "CIDR-011", "FENCE-010"}}},
		make:   fixed(behaviour{cidr: func(raw string, _ cidr.HostBits, next Parser) (cidr.Block, error) { return next(raw, cidr.Reject) }})},
	{Name: "delay", Arg: "RPC:DURATION", Example: "delay=Probe:1ms", Help: "RPC sleeps DURATION before answering, ignoring the caller's deadline",
		Proofs: []Proof{
			{Spec: "delay=Fence:10m", Flags: []string{"--rpc-timeout", "1s"}, Fails: []string{"TIME-001"}, Why: "a hung Fence: the root cause only; after two misses the rules that fence are NOT RUN, naming them"},
			{Spec: "delay=Fence:3s", Flags: []string{"--rpc-timeout", "2s"}, Fails: []string{"TIME-001"}, Why: "a slow Fence that misses its deadline: the root cause only; the driver drops the work its client gave up on, so TIME-002 holds"},
		},
		make: delayed},
	{Name: "forget-on-restart", Help: "the stored fences are discarded at start: nothing survives a restart",
		make: fixed(behaviour{load: func(l *Load) { l.Forget = true }})},
	{Name: "persist-first", Arg: "N", Example: "persist-first=100", Help: "only the first N fences are persisted: the ones fenced after them do not survive a restart",
		make: func(arg string) (*behaviour, error) {
			n, err := strconv.Atoi(arg)
			if err != nil || n <= 0 {
				return nil, errors.New("want persist-first=N (> 0)")
			}
			return &behaviour{load: func(l *Load) { l.Keep = n }}, nil
		}},
	{Name: "ack-before-enforce", Arg: "DURATION", Optional: true, Help: fmt.Sprintf("a Fence is acknowledged once stored and enforced DURATION (default %s) later", DefaultAckBeforeEnforce),
		make: func(arg string) (*behaviour, error) {
			d := DefaultAckBeforeEnforce
			if arg != "" {
				var err error
				if d, err = time.ParseDuration(arg); err != nil || d <= 0 {
					return nil, errors.New("want ack-before-enforce or ack-before-enforce=DURATION (> 0)")
				}
			}
			return &behaviour{enforce: d}, nil
		}},
}

// concurrentWindow widens the window in which concurrent Fence calls see
// each other under concurrent-dup.
const concurrentWindow = 30 * time.Millisecond

// spellings is the load hook of the faults that store blocks as spelled.
func spellings(l *Load) { l.Spellings = true }

// recount is a fence hook that stores a block already stored once more when
// when holds.
func recount(when func(*FenceStep) bool) func(*FenceStep) error {
	return func(s *FenceStep) error {
		if s.Action == Keep && when(s) {
			s.Action = Recount
		}
		return nil
	}
}

// unimplemented is a call hook that answers UNIMPLEMENTED to one RPC.
func unimplemented(rpc, msg string) func(string) error {
	return func(r string) error {
		if r == rpc {
			return status.Error(codes.Unimplemented, msg)
		}
		return nil
	}
}

// rpcArg splits an RPC:VALUE argument.
func rpcArg(arg, form string) (rpc, val string, err error) {
	rpc, val, ok := strings.Cut(arg, ":")
	if !ok || val == "" {
		return "", "", fmt.Errorf("want %s", form)
	}
	if !slices.Contains(RPCs, rpc) {
		return "", "", fmt.Errorf("unknown RPC %q (want one of %s)", rpc, strings.Join(RPCs, ", "))
	}
	return rpc, val, nil
}

func familyCapacity(arg string) (*behaviour, error) {
	fam, n, ok := strings.Cut(arg, ":")
	limit, err := strconv.Atoi(n)
	if !ok || err != nil || limit < 0 || (fam != "IPv4" && fam != "IPv6") {
		return nil, errors.New("want capacity=IPv4:N or capacity=IPv6:N")
	}
	of := func(b cidr.Block) bool { return b.Enforced() && b.Prefix.Addr().Is6() == (fam == "IPv6") }
	return &behaviour{fence: func(s *FenceStep) error {
		if s.Action != Add || !of(s.Block) {
			return nil
		}
		count := 0
		for _, b := range s.Fences.Blocks() {
			if of(b) {
				count++
			}
		}
		if count >= limit {
			s.Action = Drop
		}
		return nil
	}}, nil
}

func delayed(arg string) (*behaviour, error) {
	rpc, val, err := rpcArg(arg, "delay=RPC:DURATION")
	if err != nil {
		return nil, err
	}
	d, err := time.ParseDuration(val)
	if err != nil || d < 0 {
		return nil, fmt.Errorf("bad duration %q", val)
	}
	return &behaviour{call: func(r string) error {
		if r == rpc {
			time.Sleep(d)
		}
		return nil
	}}, nil
}

func forcedCode(arg string) (*behaviour, error) {
	rpc, val, err := rpcArg(arg, "code=RPC:CODE")
	if err != nil {
		return nil, err
	}
	var c codes.Code
	if err := c.UnmarshalJSON([]byte(`"` + strings.ToUpper(val) + `"`)); err != nil || c == codes.OK {
		return nil, fmt.Errorf("unknown or OK gRPC code %q", val)
	}
	return &behaviour{call: func(r string) error {
		if r == rpc {
			return status.Errorf(c, "fault injected: code=%s:%s", rpc, c)
		}
		return nil
	}}, nil
}
