package sanity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
	. "github.com/onsi/ginkgo/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/endpoint"
	"github.com/fenceproof/fenceproof/rulebook"
)

// State is the per-run state of one suite registration: the connection, what
// the driver said about itself, the fences the suite made and every RPC it
// sent. Config stays apart and read-only.
type State struct {
	cfg Config

	conn        *grpc.ClientConn
	fc          fence.FenceControllerClient
	id          identity.IdentityClient
	setupErr    error
	unreachable error // the endpoint did not answer: nothing can be tested

	// Identity and capabilities, read once at the start; identityErr and
	// capsErr are why they could not be (IDENT-001 and IDENT-003 fail).
	Identity    *identity.GetIdentityResponse
	Caps        []*identity.Capability
	identityErr error
	capsErr     error
	// Preexisting is what ListClusterFence returned before the first spec.
	Preexisting []string
	preSet      map[string]bool // blocks of Preexisting (blockKey)
	listMissing bool            // List answered UNIMPLEMENTED and the profile allows it
	listErr     error           // List failed before the first spec (a broken List, not a missing one)

	sentinels sentinels    // EXPIRE-001's fences, made before the first spec
	probes    []*lateProbe // TIME-002's probes, made before the first spec
	leftovers []string     // blocks of trials of no more use, unfenced once every trial is read

	cleanupMu   sync.Mutex
	cleanupErrs []string // cleanup failures of accepted blocks, reported once under SUITE-001

	suite    *rulebook.Suite // the rule bodies registered for this run
	selected map[string]bool // the rules a label filter selects; nil: every rule
	secrets  *secretSet
	budget   runBudget
	tracker  tracker
	alloc    allocator
	rng      *rand.Rand
	Seed     int64

	mu        sync.Mutex
	calls     []Call
	slow      map[string]time.Duration // slowest answer per method (not counting deadline misses)
	pace      paceWindow               // the time per block of the recent Fences and Unfences answered OK
	hung      map[string]int           // deadline misses per method
	hungBy    map[string][]string      // who sent each request that missed it, per method
	current   string                   // the rule running now ("" before the first)
	late      []lateFence              // Fence requests the suite gave up on (TIME-002)
	lists     listStats
	unread    []netip.Prefix      // blocks sent to Fence since the last reading of the fences
	seen      []netip.Prefix      // blocks of the last reading in the space the suite allocates from
	dups      map[string][]string // blocks some List answer named twice (LIST-003), with the spellings
	overFence map[string]string   // listed blocks nobody asked for that cover or merge requested ones (FENCE-009)
}

// lateFence is a Fence request that missed its deadline.
type lateFence struct {
	cidrs []string
	at    time.Time
}

// hungLimit is how many deadline misses of one method the suite waits out;
// after that, calls to the method fail at once, so that a hung driver fails
// its rules in bounded time instead of holding CI for every remaining call.
const hungLimit = 2

// Call is one RPC the suite sent, for the report.
type Call struct {
	Method   string        `json:"method"`
	Code     string        `json:"code"`
	Message  string        `json:"message,omitempty"`
	Duration time.Duration `json:"duration"`
	// Probe marks the deliberately abandoned calls of TIME-002's probes.
	Probe bool `json:"probe,omitempty"`
	// Sender is who sent it: a rule, its cleanup, or the start of the run;
	// Input what it carried (the blocks of a Fence or Unfence).
	Sender string `json:"sender,omitempty"`
	Input  string `json:"input,omitempty"`
	// Echoed names the secrets the answer (its error, List entries, client
	// details or identity) contained, and where; SUITE-002 reads it.
	Echoed []string `json:"echoed,omitempty"`
}

// listStats is what the run's List calls cost.
type listStats struct {
	Calls int `json:"calls"`
	// Watch are the calls of EXPIRE-001's watch, bounded by time (a List
	// at most every four times its own length), not counted by
	// ListCallBound.
	Watch    int           `json:"watch"`
	Time     time.Duration `json:"time"`
	Slowest  time.Duration `json:"slowest"`
	Largest  int           `json:"largest"`
	Failures []string      `json:"failures,omitempty"`
}

func newState(cfg Config) *State {
	seed := cfg.Seed
	if seed == 0 {
		seed = time.Now().UnixNano() & 0x7fffffff
	}
	s := &State{cfg: cfg, Seed: seed, rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed))}
	s.secrets = installRedactor(cfg.Secrets)
	s.alloc.destructive = cfg.Destructive
	s.alloc.reclaim = s.reclaimBlocks
	s.alloc.held = s.heldBlocks
	s.suite = book.Suite(rulebook.SuiteOptions{Strict: cfg.Strict, Redact: redact, Gate: s.gate, Before: s.cleanupAfterSpec, OptedIn: cfg.optedIn})
	return s
}

// dialError is "; " and why a plain connection to the endpoint fails (no
// such socket, permission denied: a socket that is root's), or "" when it
// does not: gRPC's connection state does not say.
func dialError(ep endpoint.Endpoint) string {
	c, err := net.DialTimeout(ep.Scheme, ep.Address, time.Second)
	if err != nil {
		return "; " + err.Error()
	}
	c.Close()
	return ""
}

// connect dials the endpoint and waits until it is usable or ConnectTimeout
// passes, then reads identity, capabilities and the pre-existing fences. An
// endpoint that does not answer is unreachable (s.unreachable); a driver
// that answers but fails GetIdentity or GetCapabilities is not a setup
// failure: the rules about them fail, the others run.
func (s *State) connect(ctx context.Context) error {
	ep, err := endpoint.Parse(s.cfg.Endpoint, endpoint.Dial)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(ep.Target(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxAnswerBytes)),
		grpc.WithUnaryInterceptor(s.record), grpc.WithStatsHandler(sentHook{}))
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", s.cfg.Endpoint, err)
	}
	s.conn = conn
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout.Duration)
	defer cancel()
	conn.Connect()
	for st := conn.GetState(); st != connectivity.Ready; st = conn.GetState() {
		if !conn.WaitForStateChange(cctx, st) {
			s.unreachable = fmt.Errorf("nothing answered at %s within --connect-timeout %s (last connection state %s%s)", s.cfg.Endpoint, s.cfg.ConnectTimeout.Duration, st, dialError(ep))
			return nil
		}
	}
	s.fc = fence.NewFenceControllerClient(conn)
	s.id = identity.NewIdentityClient(conn)

	s.Identity, s.identityErr = s.getIdentity(ctx)
	if status.Code(s.identityErr) == codes.Unavailable {
		s.unreachable = fmt.Errorf("%s accepted a connection but answered GetIdentity UNAVAILABLE: %s (is it a gRPC server?)", s.cfg.Endpoint, errText(s.identityErr))
		return nil
	}
	s.Caps, s.capsErr = s.getCapabilities(ctx)
	pre, err := s.list(ctx)
	switch {
	case err == nil:
		s.Preexisting = pre
	case codeName(err) == "Unimplemented" && s.cfg.Profile.ListClusterFence == Optional:
		s.listMissing = true
	default:
		// A broken List fails LIST-001; the rules that read the fences
		// through it do not run; every other rule does.
		s.listErr = fmt.Errorf("ListClusterFence before the first rule answered %s: %s", codeName(err), errText(err))
		GinkgoWriter.Printf("fenceproof sanity: %s\n", clean(s.listErr.Error()))
	}
	if s.stateSource() == SourceObserve {
		if s.Preexisting, err = s.observe(ctx); err != nil {
			return err
		}
	}
	s.preSet = map[string]bool{}
	for _, c := range s.Preexisting {
		s.preSet[blockKey(c)] = true
	}
	s.alloc.reset(s.Preexisting)
	return nil
}

// maxAnswerBytes bounds one answer of the driver: a List of a million fences.
const maxAnswerBytes = 64 << 20

func (s *State) close() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
}

type probeKey struct{}

// record is a client interceptor that logs every RPC for the report, keeps
// RPCs from going out once the run is cut, turns a deadline into an error
// that says which RPC hung, and looks at every answer for echoed secrets and
// (List) duplicate entries.
func (s *State) record(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	name := method[strings.LastIndex(method, "/")+1:]
	if c := s.cut(); c != nil && !isCleanup(ctx) {
		return c
	}
	probe := ctx.Value(probeKey{}) != nil
	s.mu.Lock()
	misses, by, sender := s.hung[name], slices.Clone(s.hungBy[name]), s.senderLocked(ctx)
	s.mu.Unlock()
	if misses >= hungLimit && !probe {
		// The root cause is TIME-001's: a rule whose request is not sent
		// did not test its property, and is NOT RUN, naming it.
		return &cutError{rulebook.NotRunDependency, fmt.Sprintf("%s was not sent: it already missed the RPC deadline of %s %d times (%s); TIME-001 fails for it",
			name, s.cfg.RPCTimeout.Duration, hungLimit, strings.Join(by, "; "))}
	}
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	took := time.Since(start)
	missed := missedDeadline(ctx, err)
	if status.Code(err) == codes.DeadlineExceeded && isCapped(ctx) {
		// The budget set this deadline (the driver's own timer may fire
		// a moment before ours): the run was cut, the driver did not hang.
		return &cutError{rulebook.NotRunBudget, fmt.Sprintf("%s was cut by the run's time budget (--timeout %s)", name, s.budget.total)}
	}
	c := Call{Method: name, Code: codeName(err), Message: clean(rawMessage(err)), Duration: took, Probe: probe, Sender: sender, Input: requestInput(req)}
	if e := echoedSecrets(rawMessage(err)); len(e) > 0 {
		c.Echoed = []string{"error message: " + strings.Join(e, ", ")}
	}
	if err == nil {
		c.Echoed = append(c.Echoed, answerEchoes(reply)...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	if !missed && !probe {
		if s.slow == nil {
			s.slow = map[string]time.Duration{}
		}
		s.slow[name] = max(s.slow[name], took)
		if n := len(requestCIDRs(req)); n > 0 && err == nil {
			s.pace.add(took / time.Duration(n))
		}
	}
	if r, ok := reply.(*fence.ListClusterFenceResponse); ok && name == "ListClusterFence" {
		s.lists.Calls++
		s.lists.Time += took
		s.lists.Slowest = max(s.lists.Slowest, took)
		if err == nil {
			s.lists.Largest = max(s.lists.Largest, len(r.GetCidrs()))
			s.noteDuplicates(strList(r.GetCidrs()))
		}
	}
	if missed && !probe {
		if s.hung == nil {
			s.hung, s.hungBy = map[string]int{}, map[string][]string{}
		}
		s.hung[name]++
		s.hungBy[name] = append(s.hungBy[name], fmt.Sprintf("%s%s, sent by %s", name, c.Input, sender))
		if r, ok := req.(*fence.FenceClusterNetworkRequest); ok {
			s.late = append(s.late, lateFence{cidrs: strList(r.GetCidrs()), at: time.Now()})
		}
		return &hungError{method: name, timeout: s.cfg.RPCTimeout.Duration, err: err}
	}
	return err
}

// senderLocked names who sends a request now. s.mu is held.
func (s *State) senderLocked(ctx context.Context) string {
	switch {
	case s.current == "":
		return "the start of the run (sentinels and late-work trials)"
	case isCleanup(ctx):
		return "the cleanup after " + s.current
	}
	return s.current
}

// requestInput says what a Fence or Unfence carried: " of N blocks (the
// first few)"; "" for other requests.
func requestInput(req any) string {
	cidrs := requestCIDRs(req)
	if cidrs == nil {
		if _, ok := req.(*fence.FenceClusterNetworkRequest); !ok {
			if _, ok := req.(*fence.UnfenceClusterNetworkRequest); !ok {
				return ""
			}
		}
	}
	names := strList(cidrs)
	shown := names[:min(len(names), 3)]
	more := ""
	if len(names) > 3 {
		more = fmt.Sprintf(" and %d more", len(names)-3)
	}
	plural := "s"
	if len(names) == 1 {
		plural = ""
	}
	return fmt.Sprintf(" of %d block%s (%s%s)", len(names), plural, clean(strings.Join(shown, ", ")), more)
}

// heldBlocks are the blocks the allocator must not hand out as regions:
// those fenced and not undone, those sent to Fence since the fences were
// last read (an Unfence may not have taken), and those the last reading
// showed in the suite's space (what a cleanup left behind).
func (s *State) heldBlocks() []netip.Prefix {
	out := s.tracker.pending()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(append(out, s.unread...), s.seen...)
}

// noteFenced records blocks about to be sent to Fence.
func (s *State) noteFenced(cidrs []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cidrs {
		if p, ok := blockOf(c); ok {
			s.unread = append(s.unread, p)
		}
	}
}

// noteReading records a reading of the fences: what it shows in the
// suite's space is what is held now.
func (s *State) noteReading(listed []string) {
	var seen []netip.Prefix
	for _, c := range listed {
		if p, ok := blockOf(c); ok && !s.preSet[p.String()] && s.alloc.inSpace(p) {
			seen = append(seen, p)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unread, s.seen = nil, seen
}

// requestCIDRs are the CIDRs of a Fence or Unfence request.
func requestCIDRs(req any) []*fence.CIDR {
	switch r := req.(type) {
	case *fence.FenceClusterNetworkRequest:
		return r.GetCidrs()
	case *fence.UnfenceClusterNetworkRequest:
		return r.GetCidrs()
	}
	return nil
}

// answerEchoes says where a successful answer contained a secret.
func answerEchoes(reply any) []string {
	var out []string
	look := func(where string, texts ...string) {
		for _, t := range texts {
			if e := echoedSecrets(t); len(e) > 0 {
				out = append(out, where+": "+strings.Join(e, ", "))
				return
			}
		}
	}
	switch r := reply.(type) {
	case *fence.ListClusterFenceResponse:
		look("a List entry", strList(r.GetCidrs())...)
	case *fence.GetFenceClientsResponse:
		for _, c := range r.GetClients() {
			look("a client id", c.GetId())
			look("a client address", strList(c.GetAddresses())...)
		}
	case *identity.GetIdentityResponse:
		look("the identity", r.GetName(), r.GetVendorVersion())
		for k, v := range r.GetManifest() {
			look("the identity's manifest", k, v)
		}
	}
	return out
}

// noteDuplicates records, for LIST-003, the blocks a List answer names more
// than once (in any spelling). s.mu is held.
func (s *State) noteDuplicates(listed []string) {
	seen := make(map[string]string, len(listed))
	for _, c := range listed {
		k := blockKey(c)
		first, dup := seen[k]
		if !dup {
			seen[k] = c
			continue
		}
		if s.dups == nil {
			s.dups = map[string][]string{}
		}
		if len(s.dups) < 20 && len(s.dups[k]) == 0 {
			s.dups[k] = []string{first, c}
		}
	}
}

// slowest is the slowest answer of a method so far.
func (s *State) slowest(method string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slow[method]
}

// missedDeadline reports whether err is the call's own deadline running out
// (not a driver answering DEADLINE_EXCEEDED in time). gRPC may report it
// before the context's timer has fired, when the server's reset of the
// stream arrives first, so the deadline is read rather than ctx.Err.
func missedDeadline(ctx context.Context, err error) bool {
	if status.Code(err) != codes.DeadlineExceeded {
		return false
	}
	dl, ok := ctx.Deadline()
	return ctx.Err() != nil || (ok && !time.Now().Before(dl))
}

// Calls returns a copy of every RPC sent so far.
func (s *State) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

type hungError struct {
	method  string
	timeout time.Duration
	err     error
}

func (h *hungError) Error() string {
	return fmt.Sprintf("%s did not answer within the RPC deadline of %s", h.method, h.timeout)
}
func (h *hungError) GRPCStatus() *status.Status { s, _ := status.FromError(h.err); return s }
func (h *hungError) Unwrap() error              { return h.err }
func (h *hungError) suiteMade()                 {}

// codeName is the gRPC code of err as its Go name ("OK" for nil).
func codeName(err error) string {
	if err == nil {
		return "OK"
	}
	var h *hungError
	if errors.As(err, &h) {
		return codes.DeadlineExceeded.String()
	}
	st, ok := status.FromError(err)
	if !ok {
		return "non-gRPC error"
	}
	return st.Code().String()
}

// rpc returns a context with the per-RPC deadline (shortened to the
// budget's end while rules run).
func (s *State) rpc(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel, _ := s.budgetedContext(ctx)
	return ctx, cancel
}

// hasCap reports whether the driver advertised a NetworkFence capability.
func (s *State) hasCap(t identity.Capability_NetworkFence_Type) bool {
	for _, c := range s.Caps {
		if nf := c.GetNetworkFence(); nf != nil && nf.GetType() == t {
			return true
		}
	}
	return false
}

// ours filters a List answer to the entries the suite may have made: those
// that are not pre-existing. Entries are kept as the driver spelled them.
func (s *State) ours(listed []string) []string {
	var out []string
	for _, c := range listed {
		if !s.preSet[blockKey(c)] {
			out = append(out, c)
		}
	}
	return out
}

// cleanupFailed records a cleanup failure for SUITE-001, the one rule that
// is charged with it.
func (s *State) cleanupFailed(msg string) {
	s.cleanupMu.Lock()
	defer s.cleanupMu.Unlock()
	s.cleanupErrs = append(s.cleanupErrs, msg)
}

func (s *State) cleanupFailures() []string {
	s.cleanupMu.Lock()
	defer s.cleanupMu.Unlock()
	return slices.Clone(s.cleanupErrs)
}
