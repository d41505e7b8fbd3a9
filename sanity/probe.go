package sanity

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TIME-002's trials of late work, made before the first rule so that the
// time late work needs to show passes while the other rules run. Each
// trial abandons one request right after sending it, with a deadline
// shorter than the driver takes, as a CO whose deadline ran out does, and
// at once sends the request a CO would send next for the trial's block:
//
//   - Fence trial: Fence(fillers..., b) abandoned, then Unfence(b). A driver
//     that finishes the abandoned Fence afterwards leaves b fenced behind
//     the client's back.
//   - Unfence trial: Fence(b), Unfence(fillers..., b) abandoned, then
//     Fence(b) again. A driver that finishes the abandoned Unfence
//     afterwards lifts the fence the client just made.
//
// Whether late work shows must not depend on the run: a driver that goes
// on with an abandoned request may well finish a one-block request before
// the next one arrives (and then nothing is wrong to see). So the schedule
// is fixed, the same on every run and every seed: each kind is tried with
// the trial block alone and last of 4 and of 16 blocks, so that a driver
// that goes on after its client gave up (block by block, or with a
// request that outlasts the short one that follows) applies b after the
// request that followed. The verdict's rule: TIME-002 fails at the first
// trial that shows late work; it passes when at least one trial of each
// kind could be tested (abandoned while the driver worked on it, and the
// request that followed took) and none showed late work; the report says
// how many trials were tested and why the others could not be.
//
// A driver may refuse up front a request whose deadline leaves too little
// time (a storage commit that cannot finish in time is better not started);
// the trial then gives its request the usual RPC deadline and cancels it
// after the same short time instead, as a CO that gives up does.
//
// The fences are read right after the request that follows (the block must
// be unfenced, resp. fenced, then; when it is not, the request is sent again:
// if it takes then, the abandoned one landed in between, which is late work;
// if not, that request does not take and late work cannot be told apart),
// and again, once for every trial, when late work has had time to land
// (lateWindow): before the first rule when the window is short, else by the
// first rule that starts after it, or by TIME-002.

// lateSizes are the sizes of the abandoned requests, in blocks.
var lateSizes = []int{1, 4, 16}

// lateProbe is one trial.
type lateProbe struct {
	rpc      string        // the abandoned request: FenceClusterNetwork or UnfenceClusterNetwork
	blocks   []string      // its blocks; the trial's block is the last
	block    string        // the trial's block
	deadline time.Duration // the deadline it was abandoned at (or the time it was cancelled after)
	cancel   bool          // abandoned by cancelling, not by its deadline
	sentAt   time.Time
	tested   bool   // the request was abandoned and the one after it took
	why      string // why it could not be tested
	checked  bool   // the fences were read after the window
	fenced   bool   // whether the block was fenced then
	after    time.Duration
	again    bool // the request that followed had to be sent again: the abandoned one landed in between
}

// describe says what the trial sent, in order.
func (p *lateProbe) describe() string {
	how := "its deadline of " + p.deadline.String() + " ran out"
	if p.cancel {
		how = "it was cancelled after " + p.deadline.String() + " (the driver refuses shorter deadlines up front)"
	}
	what := p.block
	if len(p.blocks) > 1 {
		what = fmt.Sprintf("%s, the last of %d blocks in one request,", p.block, len(p.blocks))
	}
	next := map[string]string{"FenceClusterNetwork": "UnfenceClusterNetwork", "UnfenceClusterNetwork": "FenceClusterNetwork"}[p.rpc]
	return fmt.Sprintf("%s of %s was abandoned when %s; the %s of %s sent right after it answered OK", p.rpc, what, how, next, p.block)
}

// Trial deadlines: the first is a quarter of the sentinel Fence's time
// within these bounds, divided by an eighth of the request's size, and each
// retry halves it.
const (
	probeMaxDeadline = 10 * time.Millisecond
	probeMinDeadline = 20 * time.Microsecond
	probeAttempts    = 8
)

// probeLateWork makes every trial; called once the sentinels are fenced.
func (s *State) probeLateWork(ctx context.Context, sentinelTook time.Duration) {
	for _, n := range lateSizes {
		// A larger request is abandoned sooner, while most of it is left.
		first := max(min(max(sentinelTook/4, 100*time.Microsecond), probeMaxDeadline)/time.Duration(max(1, n/8)), probeMinDeadline)
		s.probes = append(s.probes, s.probeFence(ctx, n, first), s.probeUnfence(ctx, n, first))
	}
	// A short window is waited out here, before any rule can change the
	// trials' blocks; a long one (a slow driver) passes while rules run.
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

// abandoned tells whether a trial's request ended because the client gave
// up on it.
func abandoned(err error) bool {
	c := status.Code(err)
	return c == codes.DeadlineExceeded || c == codes.Canceled
}

// refusedUpFront switches a trial whose request the driver refused before
// its deadline to abandoning by cancellation, once; it reports whether the
// trial should go on.
func refusedUpFront(p *lateProbe) bool {
	if p.cancel {
		return false
	}
	p.cancel = true
	return true
}

// trialBlocks are n fresh blocks, the trial's block last.
func (s *State) trialBlocks(p *lateProbe, n int) bool {
	p.blocks = nil
	for range n {
		b, err := s.alloc.block(false, 32)
		if err != nil {
			p.why = err.Error()
			return false
		}
		p.blocks = append(p.blocks, b.String())
	}
	p.block = p.blocks[n-1]
	return true
}

func (s *State) probeFence(ctx context.Context, n int, d time.Duration) *lateProbe {
	p := &lateProbe{rpc: "FenceClusterNetwork"}
	first := d
	for range probeAttempts {
		if !s.trialBlocks(p, n) {
			return p
		}
		p.deadline = d
		at, err := s.within(ctx, p, d, func(ctx context.Context) error { return s.fence(ctx, p.blocks) })
		switch {
		case abandoned(err):
			p.sentAt = at
			s.followUp(ctx, p, func() error { return s.unfence(ctx, []string{p.block}) }, false)
			return p
		case err == nil:
			// Done within d: undo it and try a shorter deadline.
			if s.unfence(ctx, p.blocks) == nil {
				s.tracker.forget(p.blocks...)
			}
			if d <= probeMinDeadline {
				p.why = fmt.Sprintf("the driver answered even a %s deadline, so no Fence could be abandoned while it worked", d)
				return p
			}
			d = max(d/2, probeMinDeadline)
		default:
			if refusedUpFront(p) {
				_ = s.unfence(ctx, p.blocks)
				d = first
				continue
			}
			p.why = fmt.Sprintf("the trial Fence of %s answered %s before it was cancelled after %s (and before a deadline of %s): %s", p.block, codeSpec(err), d, d, errText(err))
			return p
		}
	}
	p.why = fmt.Sprintf("the driver answered every trial Fence within its deadline (down to %s)", d)
	return p
}

func (s *State) probeUnfence(ctx context.Context, n int, d time.Duration) *lateProbe {
	p := &lateProbe{rpc: "UnfenceClusterNetwork"}
	if !s.trialBlocks(p, n) {
		return p
	}
	if err := s.fence(ctx, p.blocks); err != nil {
		p.why = fmt.Sprintf("the Fence of the trial's blocks %s answered %s: %s", showAll(p.blocks), codeSpec(err), errText(err))
		return p
	}
	first := d
	for range probeAttempts {
		p.deadline = d
		at, err := s.within(ctx, p, d, func(ctx context.Context) error { return s.unfence(ctx, p.blocks) })
		switch {
		case abandoned(err):
			p.sentAt = at
			s.followUp(ctx, p, func() error { return s.fence(ctx, []string{p.block}) }, true)
			return p
		case err == nil:
			if err := s.fence(ctx, p.blocks); err != nil {
				p.why = fmt.Sprintf("the Fence of the trial's blocks answered %s: %s", codeSpec(err), errText(err))
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
			p.why = fmt.Sprintf("the trial Unfence of %s answered %s before it was cancelled after %s (and before a deadline of %s): %s", p.block, codeSpec(err), d, d, errText(err))
			return p
		}
	}
	p.why = fmt.Sprintf("the driver answered every trial Unfence within its deadline (down to %s)", d)
	return p
}

// followUp sends the request a CO sends after giving up (retried a few
// times when it fails, as a CO does) and reads the fences at once: the
// trial is tested only when the block is then as that request left it.
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
			p.tested, p.checked, p.fenced, p.after, p.again = true, true, !wantFenced, time.Since(p.sentAt), true
			return
		}
	}
	p.why = fmt.Sprintf("right after the %s that followed, %s was %s listed, and sending it again did not change that: the %s does not take (other rules judge it), so late work cannot be told apart", what, p.block, map[bool]string{false: "still", true: "not"}[wantFenced], what)
}

// checkProbes reads the fences once for the tested trials whose window has
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

// trialsOf are the trials of the method.
func (s *State) trialsOf(method string) []*lateProbe {
	var out []*lateProbe
	for _, p := range s.probes {
		if p.rpc == method {
			out = append(out, p)
		}
	}
	return out
}

// lateVerdict says, for the trials of one kind that were checked, which
// showed late work, in the order the events happened, and counts the
// tested ones.
func lateVerdict(trials []*lateProbe) (late []string, tested int, untested []string) {
	for _, p := range trials {
		switch {
		case !p.tested:
			untested = append(untested, fmt.Sprintf("%d blocks: %s", max(len(p.blocks), 1), p.why))
		case !p.checked:
		default:
			tested++
			if p.fenced == (p.rpc == "FenceClusterNetwork") {
				late = append(late, lateStory(p))
			}
		}
	}
	return late, tested, untested
}

// lateStory tells one trial that showed late work, events in order.
func lateStory(p *lateProbe) string {
	fence := p.rpc == "FenceClusterNetwork"
	next := map[bool]string{true: "Unfence", false: "Fence"}[fence]
	kind := map[bool]string{true: "Fence", false: "Unfence"}[fence]
	harm := map[bool]string{true: "it fenced the block behind the client's back", false: "it lifted the fence the client had just made"}[fence]
	var seen string
	if p.again {
		seen = fmt.Sprintf("a reading right after that %s showed %s as before it; the %s sent again took, so the abandoned %s had landed between the two, %s after it was sent: %s",
			next, p.block, next, kind, p.after.Round(time.Millisecond), harm)
	} else {
		state := map[bool]string{true: "listed", false: "no longer listed"}[fence]
		seen = fmt.Sprintf("a reading right after that %s showed %s as the %s left it; %s after the abandoned %s was sent, it was %s: the abandoned %s landed after the %s the client sent next, and %s",
			next, p.block, next, p.after.Round(time.Millisecond), kind, state, kind, next, harm)
	}
	return p.describe() + "; " + seen
}
