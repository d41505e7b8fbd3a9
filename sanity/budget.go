package sanity

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/rulebook"
)

// The run's time budget (--timeout). Rules start, and send RPCs, only while
// the budget lasts, less what the end of the run needs (the final cleanup
// and SUITE-001's check of it); a rule the budget does not reach is NOT RUN
// (budget), and a rule cut while it ran is NOT RUN too, never FAIL. The
// rules the table marks Always still run after the budget: they read what
// the run recorded, and SUITE-001 undoes every fence the run made.
// A signal (SIGINT, SIGTERM) cuts the run the same way, as interrupted.

// DefaultTimeout is the budget of a run without --timeout, on top of the
// hold (EXPIRE-001): it fits a driver whose List takes a second and holds
// 20,000 fences, or a storage that needs a second per blocklist command.
const DefaultTimeout = 10 * time.Minute

// runBudget tracks the run's time.
type runBudget struct {
	mu          sync.Mutex
	start       time.Time
	total       time.Duration
	interrupted bool
	final       bool // the final cleanup is under way: RPCs go out whatever the budget
}

// cutError is the error of an RPC the suite did not send (or gave up on)
// because the budget ran out or the run was interrupted.
type cutError struct {
	kind rulebook.NotRunKind
	why  string
}

func (e *cutError) Error() string              { return e.why }
func (e *cutError) GRPCStatus() *status.Status { return status.New(codes.Canceled, e.why) }
func (e *cutError) suiteMade()                 {}

// begin starts the clock.
func (b *runBudget) begin(total time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.start, b.total = time.Now(), total
}

func (b *runBudget) interrupt() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.interrupted = true
}

// enterFinal lets the cleanup's RPCs out whatever the budget.
func (b *runBudget) enterFinal() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.final = true
}

// reserve is what the end of the run needs: the cleanup's Unfence and
// SUITE-001's List, at the pace the driver has shown.
func (s *State) reserve() time.Duration {
	slow := max(s.slowest("ListClusterFence"), s.slowest("UnfenceClusterNetwork"), 100*time.Millisecond)
	return 3*slow + time.Second
}

// rulesEnd is when rules stop starting and sending.
func (s *State) rulesEnd() time.Time {
	s.budget.mu.Lock()
	start, total := s.budget.start, s.budget.total
	s.budget.mu.Unlock()
	if start.IsZero() {
		return time.Now().Add(24 * time.Hour)
	}
	return start.Add(total - s.reserve())
}

// cut says whether the run is cut for the rules: by a signal, or because
// the budget is spent. It is nil once the final cleanup runs.
func (s *State) cut() *cutError {
	s.budget.mu.Lock()
	interrupted, final, total := s.budget.interrupted, s.budget.final, s.budget.total
	s.budget.mu.Unlock()
	switch {
	case final:
		return nil
	case interrupted:
		return &cutError{rulebook.NotRunInterrupted, "the run was interrupted (SIGINT or SIGTERM) before this step"}
	case time.Now().After(s.rulesEnd()):
		return &cutError{rulebook.NotRunBudget, fmt.Sprintf("the run's time budget (--timeout %s) ran out before this step; %s is kept for the final cleanup", total, s.reserve().Round(time.Millisecond))}
	}
	return nil
}

// left is how long rules may still run.
func (s *State) left() time.Duration { return time.Until(s.rulesEnd()) }

// gate is the engine's gate: whether a rule may start.
func (s *State) gate(r Rule) (rulebook.NotRunKind, string) {
	s.mu.Lock()
	s.current = r.ID
	s.mu.Unlock()
	switch {
	case s.unreachable != nil:
		return rulebook.NotRunDependency, "the endpoint could not be reached: " + s.unreachable.Error()
	case s.setupErr != nil:
		return rulebook.NotRunDependency, "the suite's setup failed: " + clean(s.setupErr.Error())
	case s.fc == nil:
		return rulebook.NotRunDependency, "the suite's setup did not run"
	case r.Always:
		return "", ""
	}
	if c := s.cut(); c != nil {
		return c.kind, c.why
	}
	return "", ""
}

// budgetedContext is the context of one RPC: the RPC deadline, shortened to
// what the budget leaves while rules run. capped says the budget set it.
func (s *State) budgetedContext(ctx context.Context) (context.Context, context.CancelFunc, bool) {
	d := s.cfg.RPCTimeout.Duration
	s.budget.mu.Lock()
	final := s.budget.final
	s.budget.mu.Unlock()
	if left := s.left(); !final && !isCleanup(ctx) && left < d {
		ctx, cancel := context.WithTimeout(ctx, max(left, 0))
		return context.WithValue(ctx, cappedKey{}, true), cancel, true
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, false
}

type cappedKey struct{}

// isCapped reports whether the budget set ctx's deadline.
func isCapped(ctx context.Context) bool { v, _ := ctx.Value(cappedKey{}).(bool); return v }
