package sanity

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

	conn     *grpc.ClientConn
	fc       fence.FenceControllerClient
	id       identity.IdentityClient
	setupErr error

	// Identity and capabilities, read once at the start.
	Identity *identity.GetIdentityResponse
	Caps     []*identity.Capability
	// Preexisting is what ListClusterFence returned before the first spec.
	Preexisting []string
	preSet      map[string]bool // canonical forms of Preexisting
	listMissing bool            // List answered UNIMPLEMENTED and the profile allows it
	listErr     error           // List failed before the first spec (a broken List, not a missing one)

	sentinelFence sentinelFence // EXPIRE-001's fence, made before the first spec

	cleanupMu   sync.Mutex
	cleanupErrs []string // cleanup failures, reported once under SUITE-001

	suite   *rulebook.Suite // the rule bodies registered for this run
	tracker tracker
	alloc   allocator
	rng     *rand.Rand
	Seed    int64

	mu    sync.Mutex
	calls []Call
	hung  map[string]int // deadline misses per method
	late  []lateFence    // Fence requests the suite gave up on (TIME-002)
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
	raw      string        // the message as sent, for SUITE-002 only
}

func newState(cfg Config) *State {
	seed := cfg.Seed
	if seed == 0 {
		seed = time.Now().UnixNano() & 0x7fffffff
	}
	installRedactor(cfg.Secrets)
	s := &State{cfg: cfg, Seed: seed, rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed))}
	s.suite = book.Suite(rulebook.SuiteOptions{Strict: cfg.Strict, Redact: redact, Before: func() {
		s.mustBeReady()
		s.cleanupAfterSpec()
	}})
	return s
}

// connect dials the endpoint and waits until it is usable or ConnectTimeout
// passes, then reads identity, capabilities and the pre-existing fences.
func (s *State) connect(ctx context.Context) error {
	ep, err := endpoint.Parse(s.cfg.Endpoint, endpoint.Dial)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(ep.Target(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(s.record))
	if err != nil {
		return fmt.Errorf("endpoint %s: %w", s.cfg.Endpoint, err)
	}
	s.conn = conn
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout.Duration)
	defer cancel()
	conn.Connect()
	for st := conn.GetState(); st != connectivity.Ready; st = conn.GetState() {
		if !conn.WaitForStateChange(cctx, st) {
			return fmt.Errorf("could not connect to %s within %s (last state %s)", s.cfg.Endpoint, s.cfg.ConnectTimeout.Duration, st)
		}
	}
	s.fc = fence.NewFenceControllerClient(conn)
	s.id = identity.NewIdentityClient(conn)

	if s.Identity, err = s.getIdentity(ctx); err != nil {
		return fmt.Errorf("GetIdentity: %w", err)
	}
	caps, err := s.getCapabilities(ctx)
	if err != nil {
		return fmt.Errorf("GetCapabilities: %w", err)
	}
	s.Caps = caps
	pre, err := s.list(ctx)
	switch {
	case err == nil:
		s.Preexisting = pre
	case codeName(err) == "Unimplemented" && s.cfg.Profile.ListClusterFence == Optional:
		s.listMissing = true
	default:
		// A broken List fails LIST-001 and the rules that observe state
		// through it; every other rule still runs.
		s.listErr = fmt.Errorf("ListClusterFence before the first spec: %s: %s", codeName(err), errMessage(err))
		GinkgoWriter.Printf("fenceproof sanity: %v\n", s.listErr)
	}
	if s.stateSource() == SourceObserve {
		if s.Preexisting, err = s.observe(ctx); err != nil {
			return err
		}
	}
	s.preSet = map[string]bool{}
	for _, c := range s.Preexisting {
		s.preSet[canonical(strings.TrimSpace(c))] = true
	}
	s.alloc.reset(s.Preexisting)
	return nil
}

// mustBeReady fails the current spec when the setup did not succeed.
func (s *State) mustBeReady() {
	if s.setupErr != nil {
		Fail("suite setup failed: " + s.setupErr.Error())
	}
	if s.fc == nil {
		Fail("suite setup did not run")
	}
}

func (s *State) close() {
	if s.conn != nil {
		_ = s.conn.Close()
	}
}

// record is a client interceptor that logs every RPC for the report and
// turns a deadline into an error that says which RPC hung.
func (s *State) record(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	name := method[strings.LastIndex(method, "/")+1:]
	s.mu.Lock()
	misses := s.hung[name]
	s.mu.Unlock()
	if misses >= hungLimit {
		return &hungError{method: name, timeout: s.cfg.RPCTimeout.Duration, skipped: true,
			err: status.Error(codes.DeadlineExceeded, "not sent")}
	}
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	c := Call{Method: name, Code: codeName(err), Message: errMessage(err), Duration: time.Since(start)}
	c.raw = rawMessage(err)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	if missedDeadline(ctx, err) {
		if s.hung == nil {
			s.hung = map[string]int{}
		}
		s.hung[name]++
		if r, ok := req.(*fence.FenceClusterNetworkRequest); ok {
			s.late = append(s.late, lateFence{cidrs: strList(r.GetCidrs()), at: time.Now()})
		}
		return &hungError{method: name, timeout: s.cfg.RPCTimeout.Duration, err: err}
	}
	return err
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
	skipped bool // not sent: the method already missed hungLimit deadlines
	err     error
}

func (h *hungError) Error() string {
	if h.skipped {
		return fmt.Sprintf("%s not sent: it already missed the RPC deadline of %s %d times", h.method, h.timeout, hungLimit)
	}
	return fmt.Sprintf("%s did not answer within the RPC deadline of %s", h.method, h.timeout)
}
func (h *hungError) GRPCStatus() *status.Status { s, _ := status.FromError(h.err); return s }
func (h *hungError) Unwrap() error              { return h.err }

// codeName is the gRPC code of err as its Go name ("OK" for nil).
func codeName(err error) string {
	if err == nil {
		return "OK"
	}
	st, ok := status.FromError(err)
	if !ok {
		var h *hungError
		if errors.As(err, &h) {
			return codes.DeadlineExceeded.String()
		}
		return "non-gRPC error"
	}
	return st.Code().String()
}

// errMessage is the error's message with every secret value redacted.
func errMessage(err error) string { return redact(rawMessage(err)) }

// rpc returns a context with the per-RPC deadline.
func (s *State) rpc(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.RPCTimeout.Duration)
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
		if !s.preSet[canonical(strings.TrimSpace(c))] {
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

// canonical is the canonical spelling of a CIDR, or the input when it does
// not parse (so that garbage a broken driver stored stays visible).
func canonical(c string) string {
	p, err := netip.ParsePrefix(c)
	if err != nil {
		return c
	}
	return p.String()
}
