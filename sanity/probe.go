package sanity

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TIME-002's probes of late work, made before the first rule so that the
// time late work needs to show passes while the other rules run. Each
// abandons one request right after sending it, with a deadline shorter than
// the driver takes, as a CO whose deadline ran out does, and at once sends
// the request a CO would send next. A driver may refuse up front a request
// whose deadline leaves too little time (a storage commit that cannot finish
// in time is better not started); the probe then gives its request the usual
// RPC deadline and cancels it after the same short time instead, as a CO
// that gives up does, so the driver is caught while it works:
//
//   - Fence probe: Fence(b) abandoned, then Unfence(b). A driver that
//     finishes the abandoned Fence afterwards leaves b fenced behind the
//     client's back.
//   - Unfence probe: Fence(b), Unfence(b) abandoned, then Fence(b) again. A
//     driver that finishes the abandoned Unfence afterwards lifts the fence
//     the client just made.
//
// The fences are read right after the request that follows (the block must
// be unfenced, resp. fenced, then; when it is not, the request is sent again:
// if it takes then, the abandoned one landed in between, which is late work;
// if not, that request does not take and late work cannot be told apart),
// and again once late work has had time to land (lateWindow): before the
// first rule when the window is short, else by the first rule that starts
// after it, or by TIME-002.

// lateProbe is one probe.
type lateProbe struct {
	rpc      string        // the abandoned request: FenceClusterNetwork or UnfenceClusterNetwork
	block    string        // its block
	deadline time.Duration // the deadline it was abandoned at (or the time it was cancelled after)
	cancel   bool          // abandoned by cancelling, not by its deadline
	sentAt   time.Time
	tested   bool   // the request was abandoned (DEADLINE_EXCEEDED) and the one after it took
	why      string // why it could not be tested
	checked  bool   // the fences were read after the window
	fenced   bool   // whether the block was fenced then
	after    time.Duration
}

// Probe deadlines: the first is a quarter of the sentinel Fence's time,
// within these bounds, and each retry halves it.
const (
	probeMaxDeadline = 10 * time.Millisecond
	probeMinDeadline = 20 * time.Microsecond
	probeAttempts    = 8
)

// probeLateWork makes both probes; called once the sentinel is fenced.
func (s *State) probeLateWork(ctx context.Context, sentinelTook time.Duration) {
	first := min(max(sentinelTook/4, 100*time.Microsecond), probeMaxDeadline)
	s.probes = []*lateProbe{s.probeFence(ctx, first), s.probeUnfence(ctx, first)}
	// A short window is waited out here, before any rule can change the
	// probes' blocks; a long one (a slow driver) passes while rules run.
	var until time.Time
	for _, p := range s.probes {
		if p.tested {
			until = maxTime(until, p.sentAt.Add(s.lateWindow(p.rpc)))
		}
	}
	if wait := time.Until(until); wait <= probeWaitHere {
		time.Sleep(max(wait, 0))
		s.checkProbes(ctx, true)
	}
}

// probeWaitHere is the longest late-work window waited out before the
// first rule.
const probeWaitHere = time.Second

// within sends one request abandoned after d, marked as a probe so that its
// deadline miss is not charged to TIME-001: with a deadline of d, or, for
// p.cancel, with the RPC deadline and cancelled after d.
func (s *State) within(ctx context.Context, p *lateProbe, d time.Duration, send func(ctx context.Context) error) (time.Time, error) {
	ctx = context.WithValue(ctx, probeKey{}, true)
	var cancel context.CancelFunc
	if p.cancel {
		ctx, cancel = context.WithTimeout(ctx, s.cfg.RPCTimeout.Duration)
		t := time.AfterFunc(d, cancel)
		defer t.Stop()
	} else {
		ctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	at := time.Now()
	return at, send(ctx)
}

// abandoned tells whether a probe's request ended because the client gave
// up on it.
func abandoned(err error) bool {
	c := status.Code(err)
	return c == codes.DeadlineExceeded || c == codes.Canceled
}

// refusedUpFront switches a probe whose request the driver refused before
// its deadline to abandoning by cancellation, once; it reports whether the
// probe should go on.
func refusedUpFront(p *lateProbe) bool {
	if p.cancel {
		return false
	}
	p.cancel = true
	return true
}

func (s *State) probeFence(ctx context.Context, d time.Duration) *lateProbe {
	p := &lateProbe{rpc: "FenceClusterNetwork"}
	first := d
	for range probeAttempts {
		b, err := s.alloc.block(false, 32)
		if err != nil {
			p.why = err.Error()
			return p
		}
		p.block, p.deadline = b.String(), d
		at, err := s.within(ctx, p, d, func(ctx context.Context) error { return s.fence(ctx, []string{p.block}) })
		switch {
		case abandoned(err):
			p.sentAt = at
			s.followUp(ctx, p, func() error { return s.unfence(ctx, []string{p.block}) }, false)
			return p
		case err == nil:
			// Done within d: undo it and try a shorter deadline.
			_ = s.unfence(ctx, []string{p.block})
			if d <= probeMinDeadline {
				p.why = fmt.Sprintf("the driver answered even a %s deadline, so no Fence could be abandoned while it worked", d)
				return p
			}
			d = max(d/2, probeMinDeadline)
		default:
			if refusedUpFront(p) {
				_ = s.unfence(ctx, []string{p.block})
				d = first
				continue
			}
			p.why = fmt.Sprintf("the probe Fence of %s answered %s before it was cancelled after %s (and before a deadline of %s): %s", p.block, codeSpec(err), d, d, errText(err))
			return p
		}
	}
	p.why = fmt.Sprintf("the driver answered every probe Fence within its deadline (down to %s)", d)
	return p
}

func (s *State) probeUnfence(ctx context.Context, d time.Duration) *lateProbe {
	p := &lateProbe{rpc: "UnfenceClusterNetwork"}
	b, err := s.alloc.block(false, 32)
	if err != nil {
		p.why = err.Error()
		return p
	}
	p.block = b.String()
	if err := s.fence(ctx, []string{p.block}); err != nil {
		p.why = fmt.Sprintf("the Fence of the probe block %s answered %s: %s", p.block, codeSpec(err), errText(err))
		return p
	}
	first := d
	for range probeAttempts {
		p.deadline = d
		at, err := s.within(ctx, p, d, func(ctx context.Context) error { return s.unfence(ctx, []string{p.block}) })
		switch {
		case abandoned(err):
			p.sentAt = at
			s.followUp(ctx, p, func() error { return s.fence(ctx, []string{p.block}) }, true)
			return p
		case err == nil:
			if err := s.fence(ctx, []string{p.block}); err != nil {
				p.why = fmt.Sprintf("the Fence of the probe block %s answered %s: %s", p.block, codeSpec(err), errText(err))
				return p
			}
			if d <= probeMinDeadline {
				p.why = fmt.Sprintf("the driver answered even a %s deadline, so no Unfence could be abandoned while it worked", d)
				return p
			}
			d = max(d/2, probeMinDeadline)
		default:
			if refusedUpFront(p) {
				d = first
				continue
			}
			p.why = fmt.Sprintf("the probe Unfence of %s answered %s before it was cancelled after %s (and before a deadline of %s): %s", p.block, codeSpec(err), d, d, errText(err))
			return p
		}
	}
	p.why = fmt.Sprintf("the driver answered every probe Unfence within its deadline (down to %s)", d)
	return p
}

// followUp sends the request a CO sends after giving up (retried a few
// times when it fails, as a CO does) and reads the fences at once: the
// probe is tested only when the block is then as that request left it.
func (s *State) followUp(ctx context.Context, p *lateProbe, send func() error, wantFenced bool) {
	var err error
	for range 3 {
		if err = send(); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	what := map[bool]string{false: "Unfence", true: "Fence"}[wantFenced]
	if err != nil {
		p.why = fmt.Sprintf("the %s of %s sent after the abandoned request answered %s: %s, so late work cannot be told apart", what, p.block, codeSpec(err), errText(err))
		return
	}
	if s.stateSource() == SourceNone {
		p.why = "the fences cannot be read: " + s.stateGap()
		return
	}
	listed, err := s.observed(ctx)
	if err != nil {
		p.why = fmt.Sprintf("reading the fences right after the %s answered %s: %s", what, codeSpec(err), errText(err))
		return
	}
	if newView(listed).has(p.block) == wantFenced {
		p.tested = true
		return
	}
	// The block is not as the follow-up left it: the follow-up did not
	// take, or the abandoned request landed after it. Sending it again
	// tells them apart: if it takes now, it took the first time too, and
	// the abandoned request is what undid it.
	if err := send(); err == nil {
		if again, err := s.observed(ctx); err == nil && newView(again).has(p.block) == wantFenced {
			p.tested, p.checked, p.fenced, p.after = true, true, !wantFenced, time.Since(p.sentAt)
			return
		}
	}
	p.why = fmt.Sprintf("right after the %s that followed, %s was %s listed, and sending it again did not change that: the %s does not take (other rules judge it), so late work cannot be told apart", what, p.block, map[bool]string{false: "still", true: "not"}[wantFenced], what)
}

// checkProbes reads the fences once for the tested probes whose window has
// passed (all of them when force is set) and records what it saw. A
// reading that fails leaves them for TIME-002.
func (s *State) checkProbes(ctx context.Context, force bool) {
	var due []*lateProbe
	for _, p := range s.probes {
		if p.tested && !p.checked && (force || time.Now().After(p.sentAt.Add(s.lateWindow(p.rpc)))) {
			due = append(due, p)
		}
	}
	if len(due) == 0 || s.cut() != nil {
		return
	}
	listed, err := s.observed(ctx)
	if err != nil {
		return
	}
	v := newView(listed)
	for _, p := range due {
		p.checked, p.fenced, p.after = true, v.has(p.block), time.Since(p.sentAt)
	}
}

// lateWindow is how long after an abandoned request the suite waits for
// late work to land: four times the slowest answer of the method, at least
// 200 ms; three RPC deadlines when the method missed one.
func (s *State) lateWindow(method string) time.Duration {
	s.mu.Lock()
	missed := s.hung[method] > 0
	s.mu.Unlock()
	if missed {
		return 3 * s.cfg.RPCTimeout.Duration
	}
	return min(max(4*s.slowest(method), 200*time.Millisecond), 3*s.cfg.RPCTimeout.Duration)
}

// probeFor returns the probe of the method.
func (s *State) probeFor(method string) *lateProbe {
	for _, p := range s.probes {
		if p.rpc == method {
			return p
		}
	}
	return nil
}
