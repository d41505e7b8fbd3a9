package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
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
// the trial block alone and last of 16 and of 256 blocks, each request
// abandoned a quarter of the time the driver took for one of its size
// after it was queued, the largest no sooner than the driver surely has
// it, so that a driver that goes on after its client gave up (block by
// block, or with a request that outlasts the short one that follows)
// applies b after the request that followed, however fast it is. The verdict's rule: TIME-002 fails at the first
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
var lateSizes = []int{1, 16, 256}

// lateProbe is one trial.
type lateProbe struct {
	rpc      string        // the abandoned request: FenceClusterNetwork or UnfenceClusterNetwork
	blocks   []string      // its blocks; the trial's block is the last
	block    string        // the trial's block
	deadline time.Duration // how long after it was written it was cancelled
	sentAt   time.Time     // when it was written
	tested   bool          // the request was abandoned and the one after it took
	why      string        // why it could not be tested
	checked  bool          // the fences were read after the window
	fenced   bool          // whether the block was fenced then
	after    time.Duration
	again    bool     // the request that followed had to be sent again: the abandoned one landed in between
	first    []string // the request's blocks listed right after the request that followed
	whole    bool     // the abandoned request had been applied whole by then: not a test
	changed  []string // the request's blocks the abandoned request changed after that reading
}

// describe says what the trial sent, in order.
func (p *lateProbe) describe() string {
	how := "it was cancelled " + p.deadline.String() + " after it was sent"
	what := p.block
	if len(p.blocks) > 1 {
		what = fmt.Sprintf("%s, the last of %d blocks in one request,", p.block, len(p.blocks))
	}
	next := map[string]string{"FenceClusterNetwork": "UnfenceClusterNetwork", "UnfenceClusterNetwork": "FenceClusterNetwork"}[p.rpc]
	return fmt.Sprintf("%s of %s was abandoned when %s; the %s of %s sent right after it answered OK", p.rpc, what, how, next, p.block)
}

// Trial deadlines: the first is a quarter of the time a Fence of the
// trial's size took (for one block, the sentinel's), at least
// probeMinDeadline, and each retry halves it.
const (
	probeMinDeadline = 20 * time.Microsecond
	probeAttempts    = 8
)

// probeLateWork makes every trial; called once the sentinels are fenced.
func (s *State) probeLateWork(ctx context.Context, sentinelTook time.Duration) {
	// The times first, then the trials: an Unfence sent after a trial
	// could change its blocks (a driver that lifts a neighbour too).
	took := map[int]time.Duration{1: sentinelTook}
	for _, n := range lateSizes[1:] {
		took[n] = s.timeFence(ctx, n)
	}
	first := func(n int) time.Duration { return max(took[n]/4, probeMinDeadline) }
	for _, n := range lateSizes {
		s.probes = append(s.probes, s.probeFence(ctx, n, first(n)))
	}
	// Each Unfence trial is read once its window passed, before the next
	// one sends anything: an Unfence that lifts another block too (or a
	// lost update) must not pass for late work of an earlier trial.
	for _, n := range lateSizes {
		p := s.probeUnfence(ctx, n, first(n))
		s.probes = append(s.probes, p)
		if p.tested {
			s.awaitWindows(ctx, []*lateProbe{p}, true)
		}
	}
	for _, p := range s.probes {
		if !p.tested {
			s.leftovers = append(s.leftovers, p.blocks...)
		}
	}
	s.awaitWindows(ctx, s.probes, false)
}

// within sends one request, marked as a probe so that it is not charged to
// TIME-001, with the usual RPC deadline (a driver may refuse a request whose
// deadline leaves too little time), and cancels it d after it was queued on
// the connection (sentHook), as a CO that gives up does. With confirm, it
// cancels it no sooner than the driver surely has it: a Probe is sent on
// the same connection right after it, and the frames of one connection
// arrive in order, so when the Probe's answer is back the driver has the
// request, however loaded the machine is. It returns when the request was
// queued (with confirm, when the driver had it).
func (s *State) within(ctx context.Context, d time.Duration, confirm bool, send func(ctx context.Context) error) (time.Time, error) {
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, probeKey{}, true), s.cfg.RPCTimeout.Duration)
	defer cancel()
	ready := make(chan time.Time, 1)
	var once sync.Once
	var written atomic.Bool
	ctx = context.WithValue(ctx, sentHookKey{}, func() {
		written.Store(true)
		once.Do(func() {
			queued := time.Now()
			if !confirm {
				ready <- queued
				time.AfterFunc(d, cancel)
				return
			}
			go func() {
				pctx, pcancel := context.WithTimeout(context.WithValue(context.Background(), probeKey{}, true), s.cfg.RPCTimeout.Duration)
				_, _ = s.id.Probe(pctx, &identity.ProbeRequest{})
				pcancel()
				ready <- time.Now()
				time.AfterFunc(max(d-time.Since(queued), 0), cancel)
			}()
		})
	})
	err := send(ctx)
	if !written.Load() {
		// Never written (the run was cut, or the connection failed): no
		// driver has it, and nothing will cancel it.
		return time.Now(), err
	}
	select {
	case at := <-ready:
		return at, err
	case <-time.After(s.cfg.RPCTimeout.Duration):
		return time.Now(), err
	}
}

// sentHookKey holds, in a request's context, what to call once the request
// is written to the connection.
type sentHookKey struct{}

// sentHook is the connection's stats handler: it calls a request's hook
// once its message is written.
type sentHook struct{}

func (sentHook) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (sentHook) HandleRPC(ctx context.Context, st stats.RPCStats) {
	if _, ok := st.(*stats.OutPayload); ok && st.IsClient() {
		if f, ok := ctx.Value(sentHookKey{}).(func()); ok {
			f()
		}
	}
}
func (sentHook) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (sentHook) HandleConn(context.Context, stats.ConnStats)                       {}

// abandoned tells whether a trial's request ended because the client gave
// up on it.
func abandoned(err error) bool {
	c := status.Code(err)
	return c == codes.DeadlineExceeded || c == codes.Canceled
}

// trialBlocks are n fresh blocks, the trial's block last: IPv6 hosts of the
// documentation ranges when the profile requires IPv6 (the space is
// plenty), else IPv4 ones. When the IPv4 /32s run out (a driver that
// answers every retry in time leaves 256 blocks per retry), the blocks of
// trials of no more use are unfenced first: such an Unfence cannot pass for
// late work of a Fence trial (those are late when blocks appear), and no
// Unfence trial is waiting then (each is read before the next is made).
func (s *State) trialBlocks(ctx context.Context, p *lateProbe, n int) bool {
	p.blocks = nil
	v6 := s.cfg.Profile.IPv6 == Required
	for range n {
		b, err := s.alloc.block(v6, map[bool]int{false: 32, true: 128}[v6])
		if v6 && (err != nil || !inDocRanges(b)) {
			// The reserved IPv6 space is too small to spare: IPv4.
			v6 = false
			b, err = s.alloc.block(false, 32)
		}
		if err != nil && !v6 && len(s.leftovers) > 0 {
			s.discard(context.WithValue(ctx, cleanupKey{}, true), s.leftovers)
			s.leftovers = nil
			b, err = s.alloc.block(false, 32)
		}
		if err != nil {
			p.why = err.Error()
			s.alloc.release(prefixesOf(p.blocks)) // never sent
			return false
		}
		p.blocks = append(p.blocks, b.String())
	}
	p.block = p.blocks[n-1]
	return true
}

// discard unfences blocks of a trial that is of no more use, so that they
// neither fill the driver nor stay in the watch of EXPIRE-001, and gives
// them back to the allocator (the trials are made before the first rule, so
// nothing else would: a driver that answers every retry in time used up
// the IPv4 /32s).
func (s *State) discard(ctx context.Context, blocks []string) {
	if len(blocks) > 0 && s.unfence(ctx, blocks) == nil {
		s.tracker.forget(blocks...)
		s.alloc.release(prefixesOf(blocks))
	}
}

// prefixesOf are the blocks the strings name.
func prefixesOf(blocks []string) []netip.Prefix {
	var out []netip.Prefix
	for _, b := range blocks {
		if p, ok := blockOf(b); ok {
			out = append(out, p)
		}
	}
	return out
}

// timeFence times a Fence of n fresh blocks the driver is let finish, and
// unfences them: how long a request of that size takes (0 when it failed).
func (s *State) timeFence(ctx context.Context, n int) time.Duration {
	var p lateProbe
	if !s.trialBlocks(ctx, &p, n) {
		return 0
	}
	start := time.Now()
	if s.fence(ctx, p.blocks) != nil {
		return 0
	}
	took := time.Since(start)
	s.discard(ctx, p.blocks)
	return took
}

func (s *State) probeFence(ctx context.Context, n int, d time.Duration) *lateProbe {
	p := &lateProbe{rpc: "FenceClusterNetwork"}
	for range probeAttempts {
		if s.stopped(p) {
			return p
		}
		if !s.trialBlocks(ctx, p, n) {
			return p
		}
		p.deadline = d
		at, err := s.within(ctx, d, n == lateSizes[len(lateSizes)-1], func(ctx context.Context) error { return s.fence(ctx, p.blocks) })
		switch {
		case abandoned(err):
			p.sentAt = at
			s.followUp(ctx, p, func() error { return s.unfence(ctx, []string{p.block}) }, false)
			if !p.whole || d <= probeMinDeadline {
				return p
			}
			// Applied whole before the client gave up: nothing was left to
			// land late. Again, sooner.
			s.leftovers = append(s.leftovers, p.blocks...)
			d = max(d/2, probeMinDeadline)
		case err == nil:
			// Done within d: undo it and try a shorter deadline.
			s.leftovers = append(s.leftovers, p.blocks...)
			if d <= probeMinDeadline {
				p.why = fmt.Sprintf("the driver answered even %s after the request was written, so no Fence could be abandoned while it worked", d)
				return p
			}
			d = max(d/2, probeMinDeadline)
		default:
			p.why = fmt.Sprintf("the trial Fence of %s answered %s before it was cancelled: %s", p.block, codeSpec(err), errText(err))
			return p
		}
	}
	p.why = fmt.Sprintf("the driver answered every trial Fence before it was cancelled (down to %s after it was written)", d)
	return p
}

func (s *State) probeUnfence(ctx context.Context, n int, d time.Duration) *lateProbe {
	p := &lateProbe{rpc: "UnfenceClusterNetwork"}
	setUp := func() bool {
		if !s.trialBlocks(ctx, p, n) {
			return false
		}
		if err := s.fence(ctx, p.blocks); err != nil {
			p.why = fmt.Sprintf("the Fence of the trial's blocks %s answered %s: %s", showAll(p.blocks), codeSpec(err), errText(err))
			return false
		}
		return true
	}
	if !setUp() {
		return p
	}
	for range probeAttempts {
		if s.stopped(p) {
			return p
		}
		p.deadline = d
		at, err := s.within(ctx, d, n == lateSizes[len(lateSizes)-1], func(ctx context.Context) error { return s.unfence(ctx, p.blocks) })
		switch {
		case abandoned(err):
			p.sentAt = at
			s.followUp(ctx, p, func() error { return s.fence(ctx, []string{p.block}) }, true)
			if !p.whole || d <= probeMinDeadline {
				return p
			}
			s.leftovers = append(s.leftovers, p.blocks...)
			if !setUp() {
				return p
			}
			d = max(d/2, probeMinDeadline)
		case err == nil:
			s.leftovers = append(s.leftovers, p.blocks...)
			if !setUp() {
				return p
			}
			if d <= probeMinDeadline {
				p.why = fmt.Sprintf("the driver answered even %s after the request was written, so no Unfence could be abandoned while it worked", d)
				return p
			}
			d = max(d/2, probeMinDeadline)
		default:
			p.why = fmt.Sprintf("the trial Unfence of %s answered %s before it was cancelled: %s", p.block, codeSpec(err), errText(err))
			return p
		}
	}
	p.why = fmt.Sprintf("the driver answered every trial Unfence before it was cancelled (down to %s after it was written)", d)
	return p
}

// stopped reports whether the run was cut, so that no more trial is
// tried (its blocks are left for the cleanup), and says so in p.
func (s *State) stopped(p *lateProbe) bool {
	c := s.cut()
	if c != nil {
		p.why = c.why
	}
	return c != nil
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
	if v := newView(listed); v.has(p.block) == wantFenced {
		p.tested, p.first, p.whole = true, nil, len(p.blocks) > 1
		for _, b := range p.blocks {
			if v.has(b) {
				p.first = append(p.first, b)
			}
			// The abandoned request was applied whole when every other
			// block is as it leaves it (fenced, resp. lifted).
			if b != p.block && v.has(b) != !wantFenced {
				p.whole = false
			}
		}
		if p.whole {
			p.tested, p.why = false, "the abandoned request had been applied whole before the reading that followed, even at the shortest deadline: nothing was left to land late"
		}
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
