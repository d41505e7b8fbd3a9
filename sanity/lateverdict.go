package sanity

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// What TIME-002's trials showed once late work has had time to land, and
// the verdict; the trials themselves are made in probe.go.

// awaitWindows waits out the late-work windows of the tested trials when
// they are short, or always (isolated), and reads the fences for them; a
// long one (a slow driver) passes while rules run.
func (s *State) awaitWindows(ctx context.Context, trials []*lateProbe, isolated bool) {
	var until time.Time
	for _, p := range trials {
		if p.tested && !p.checked {
			until = maxTime(until, p.sentAt.Add(s.lateWindow(p.rpc)))
		}
	}
	switch wait := time.Until(until); {
	case until.IsZero():
		s.checkProbes(ctx, false) // nothing waits: the leftovers go
	case isolated || wait <= probeWaitHere:
		// The run's --timeout bounds the wait: a cut run reads what it
		// can and goes on to its cleanup.
		if s.pause(ctx, wait) {
			s.checkProbes(ctx, true)
		}
	}
}

// pause waits d, or less when the run is cut, its budget ends or ctx is
// done first; it reports whether it waited the whole of d.
func (s *State) pause(ctx context.Context, d time.Duration) bool {
	if s.cut() != nil {
		return false
	}
	left := s.left()
	t := time.NewTimer(max(min(d, left), 0))
	defer t.Stop()
	select {
	case <-t.C:
		return d <= left
	case <-ctx.Done():
		return false
	}
}

// probeWaitHere is the longest late-work window waited out before the
// first rule.
const probeWaitHere = time.Second

// allChecked reports whether every tested trial was read after its window.
func (s *State) allChecked() bool {
	for _, p := range s.probes {
		if p.tested && !p.checked {
			return false
		}
	}
	return true
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
	if s.cut() != nil {
		return
	}
	var done []string
	if len(due) > 0 {
		listed, err := s.observed(ctx)
		if err != nil {
			return
		}
		done = s.readTrials(newView(listed), due)
		s.confirmLate(ctx, due)
	}
	// The trials' blocks are of no more use: they would only fill the
	// driver (a capacity per family) and the watch of EXPIRE-001. They
	// are unfenced after the reading, never before (an Unfence that lifts
	// another block would look like late work); the blocks of trials that
	// could not be tested go once no tested trial waits (an IPv4-only
	// driver's untested 256-block trials held both IPv4 pools, and
	// CIDR-006 and CIDR-012 found no free /25).
	if s.allChecked() {
		done = append(done, s.leftovers...)
		s.leftovers = nil
	}
	s.discard(context.WithValue(ctx, cleanupKey{}, true), done)
}

// lateConfirmations are the readings that must agree before a block
// counts as changed late, lateConfirmGap apart: late work lasts, while a
// List that shows part of the set for a while (a periodic rebuild, the
// rebuild-partial fault: 600 ms of every 1.5 s) only seems to undo blocks;
// three readings spanning a second are never all inside such a window.
const (
	lateConfirmations = 2
	lateConfirmGap    = 500 * time.Millisecond
)

// confirmLate reads the fences again, lateConfirmations times, when a due
// trial shows blocks changed late, and keeps only the blocks every reading
// shows changed.
func (s *State) confirmLate(ctx context.Context, due []*lateProbe) {
	for range lateConfirmations {
		var suspect []*lateProbe
		for _, p := range due {
			if len(p.changed) > 0 {
				suspect = append(suspect, p)
			}
		}
		if len(suspect) == 0 || !s.pause(ctx, lateConfirmGap) {
			return
		}
		listed, err := s.observed(ctx)
		if err != nil {
			return
		}
		v := newView(listed)
		for _, p := range suspect {
			fence := p.rpc == "FenceClusterNetwork"
			p.changed = slices.DeleteFunc(p.changed, func(b string) bool { return v.has(b) != fence })
			p.fenced = v.has(p.block)
		}
	}
}

// readTrials records what the reading v shows for the due trials and
// returns their blocks.
func (s *State) readTrials(v fenceView, due []*lateProbe) []string {
	var done []string
	for _, p := range due {
		p.checked, p.fenced, p.after = true, v.has(p.block), time.Since(p.sentAt)
		// Every block of the abandoned request that changed since the
		// reading right after the follow-up, the way the abandoned request
		// changes it, was changed late: fenced (Fence), or lifted (Unfence).
		for _, b := range p.blocks {
			if slices.Contains(p.first, b) != v.has(b) && v.has(b) == (p.rpc == "FenceClusterNetwork") {
				p.changed = append(p.changed, b)
			}
		}
		done = append(done, p.blocks...)
	}
	return done
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
// showed late work, in the order the events happened, counts the tested
// ones and sums each trial up for the report.
func lateVerdict(trials []*lateProbe) (late []string, tested int, untested, summary []string) {
	for _, p := range trials {
		n := "the block alone"
		if len(p.blocks) > 1 {
			n = fmt.Sprintf("%d blocks", len(p.blocks))
		}
		switch {
		case !p.tested:
			untested = append(untested, fmt.Sprintf("%s: %s", n, p.why))
			summary = append(summary, n+": not tested")
		case !p.checked:
			summary = append(summary, n+": not read after the window")
		default:
			tested++
			outcome := "nothing late"
			// The trial's block, or two others: one other block that shows
			// up late may be a List that missed the newest entry before.
			if p.again || slices.Contains(p.changed, p.block) || len(p.changed) >= 2 {
				late = append(late, lateStory(p))
				outcome = "late work"
			}
			summary = append(summary, fmt.Sprintf("%s cancelled %s after it was sent: %s %s later", n, p.deadline.Round(time.Microsecond), outcome, p.after.Round(time.Millisecond)))
		}
	}
	return late, tested, untested, summary
}

// lateStory tells one trial that showed late work, events in order.
func lateStory(p *lateProbe) string {
	fence := p.rpc == "FenceClusterNetwork"
	next := map[bool]string{true: "Unfence", false: "Fence"}[fence]
	kind := map[bool]string{true: "Fence", false: "Unfence"}[fence]
	if p.again {
		harm := map[bool]string{true: "it fenced the block behind the client's back", false: "it lifted the fence the client had just made"}[fence]
		return fmt.Sprintf("%s; a reading right after that %s showed %s as before it; the %s sent again took, so the abandoned %s had landed between the two, %s after it was sent: %s",
			p.describe(), next, p.block, next, kind, p.after.Round(time.Millisecond), harm)
	}
	state := map[bool]string{true: "listed", false: "no longer listed"}[fence]
	harm := map[bool]string{true: "fenced behind the client's back", false: "lifted behind the client's back"}[fence]
	if slices.Contains(p.changed, p.block) {
		harm += map[bool]string{true: ", the trial's block too: it landed after the Unfence the client sent next", false: ", the trial's block too: it landed after the Fence the client sent next made it again"}[fence]
	}
	return fmt.Sprintf("%s; a reading right after that %s showed the request's blocks as they were then; %s after the abandoned %s was sent, %d of its blocks were %s (%s): the abandoned %s went on after the client gave up, %s",
		p.describe(), next, p.after.Round(time.Millisecond), kind, len(p.changed), state, strings.Join(p.changed[:min(len(p.changed), 4)], ", "), kind, harm)
}
