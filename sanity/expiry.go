package sanity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// EXPIRE-001: fences outlive the run. Sentinel fences of both families and
// several widths are made before the first rule; EXPIRE-001 runs last of
// the rules that read the fences and holds until the sentinels are at
// least --hold old, counted from the answer to their Fence. While it holds
// it watches: it reads the fences again and again, and every reading must
// show every sentinel, and no fence that existed before the run may vanish
// from one reading and be back in a later one (a List that shows part of
// the set while the driver rebuilds it). The watch lasts what the hold
// leaves, and at least a quarter of --hold.

// describeExpiry registers EXPIRE-001 last of the rules that read the
// fences: the sentinels are read at the end of the run.
func describeExpiry(s *State) {
	Describe("Expiry", func() { s.it("EXPIRE-001", s.checkExpiry) })
}

// ExpiryMinimum is the default hold (--hold): the sentinels are at least
// this old when EXPIRE-001 last reads them, at the end of the run, even
// when the rules take less; a fence that lapses within it fails.
const ExpiryMinimum = 20 * time.Second

// sentinels are fenced before the first spec and checked by EXPIRE-001.
type sentinels struct {
	blocks []string
	sent   time.Time     // when the first Fence was sent
	at     time.Time     // when the last Fence of them was answered: their age counts from here
	took   time.Duration // how long the first (one block) took
	err    error
	// unlisted are the ones not listed right after their Fence answered:
	// not held (other rules judge them); lostAtRestart the ones
	// RESTART-001 found gone after the restart (its to judge).
	unlisted, lostAtRestart []string
	// lastAge is the sentinels' age at EXPIRE-001's last reading (0 when
	// it did not read them).
	lastAge time.Duration
}

// makeSentinels fences the sentinels: an IPv4 /32 alone (its time sizes
// TIME-002's probes), then an IPv4 /28 and, when IPv6 is required, an IPv6
// /128, /64 and /56 in one request. Called once the driver is ready; it
// returns how long the first Fence took.
func (s *State) makeSentinels(ctx context.Context) time.Duration {
	first, err := s.alloc.block(false, 32)
	if err != nil {
		s.sentinels.err = err
		return 0
	}
	s.sentinels.sent = time.Now()
	if s.sentinels.err = s.fence(ctx, []string{first.String()}); s.sentinels.err != nil {
		return time.Since(s.sentinels.sent)
	}
	s.sentinels.took = time.Since(s.sentinels.sent)
	s.sentinels.blocks = []string{first.String()}
	var more []string
	if p, err := s.alloc.block(false, 28); err == nil {
		more = append(more, p.String())
	}
	if s.cfg.Profile.IPv6 == Required {
		// Only in the documentation ranges: the reserved space
		// --destructive adds is too small to spare.
		for _, bits := range []int{128, 64, 56} {
			if p, err := s.alloc.block(true, bits); err == nil && inDocRanges(p) {
				more = append(more, p.String())
			}
		}
	}
	if len(more) > 0 {
		if err := s.fence(ctx, more); err == nil {
			s.sentinels.blocks = append(s.sentinels.blocks, more...)
		}
	}
	s.sentinels.at = time.Now()
	// Only the sentinels listed now are held: one never listed is the
	// width rules' or the lifecycle rules' to judge, not an expiry.
	if s.stateSource() != SourceNone {
		if listed, err := s.observed(ctx); err == nil {
			v := newView(listed)
			s.sentinels.blocks = slices.DeleteFunc(s.sentinels.blocks, func(b string) bool {
				if !v.has(b) {
					s.sentinels.unlisted = append(s.sentinels.unlisted, b)
					return true
				}
				return false
			})
		}
	}
	return s.sentinels.took
}

// checkExpiry is EXPIRE-001.
func (s *State) checkExpiry(ctx context.Context) {
	GinkgoHelper()
	s.needState()
	sn := &s.sentinels
	if len(sn.blocks) == 0 && len(sn.unlisted) == 0 {
		why := fmt.Sprint(sn.err)
		var hung *hungError
		switch {
		case errors.As(sn.err, &hung):
			why = fmt.Sprintf("its Fence at the start of the run did not answer within the RPC deadline of %s; TIME-001 fails for it", s.cfg.RPCTimeout.Duration)
		case !sn.sent.IsZero():
			why = fmt.Sprintf("its Fence at the start of the run answered %s: %s (the rules that fence judge that)", codeSpec(sn.err), errText(sn.err))
		}
		notRun("the sentinel could not be fenced: %s", why)
	}
	if len(sn.blocks) == 0 {
		notRun("no sentinel was listed right after its Fence answered OK (%s): other rules judge that", strings.Join(sn.unlisted, ", "))
	}
	if len(sn.lostAtRestart) > 0 {
		sn.blocks = slices.DeleteFunc(sn.blocks, func(b string) bool { return slices.Contains(sn.lostAtRestart, b) })
		note("not held: %s, gone after the driver restarted (RESTART-001 fails for it)", strings.Join(sn.lostAtRestart, ", "))
		if len(sn.blocks) == 0 {
			notRun("every sentinel was gone after the driver restarted: RESTART-001 fails for it")
		}
	}
	hold := s.cfg.Hold.Duration
	wait := max(time.Until(sn.at.Add(hold)), hold/4)
	if wait > s.left() {
		s.cutNow(fmt.Sprintf("the sentinels must be %s old (--hold) and watched for %s more, and the run's time budget leaves %s", hold, wait.Round(time.Millisecond), max(s.left(), 0).Round(time.Millisecond)))
	}
	GinkgoWriter.Printf("watching the fences for %s, until the sentinels %s are %s old\n", wait.Round(time.Millisecond), strings.Join(sn.blocks, ", "), hold)
	readings, problems := s.watch(ctx, time.Now().Add(wait))
	age := time.Since(sn.at)
	sn.lastAge = age
	check(len(problems) == 0, "%s", strings.Join(problems, "\n"))
	run := time.Since(s.budget.start).Round(time.Millisecond)
	below := ""
	if hold < ExpiryMinimum {
		below = fmt.Sprintf(", below the default %s: a fence that lapses later is not caught", ExpiryMinimum)
	}
	note("the %d sentinels were listed in each of %d readings over the last %s; last read at age %s, %s into the run (--hold %s%s)",
		len(sn.blocks), readings, wait.Round(time.Millisecond), age.Round(time.Millisecond), run, hold, below)
	if len(sn.unlisted) > 0 {
		note("not held, as they were not listed right after their Fence answered OK (other rules judge that): %s", strings.Join(sn.unlisted, ", "))
	}
}

// watch reads the fences until the deadline and once more at it, with a
// pause of four times the last reading's length between readings (at
// least 20 ms, so a fifth of the time at most goes to reading, and at most
// 250 ms, so that no partial List that lasts longer goes unseen),
// and says, in the order seen, which sentinel was missing from a reading
// and which fence that existed before the run vanished and came back.
func (s *State) watch(ctx context.Context, until time.Time) (readings int, problems []string) {
	GinkgoHelper()
	sn := &s.sentinels
	late := s.lateBlocks()
	gone := map[string]time.Duration{} // pre-existing blocks missing from a reading, since when
	var lost lapse                     // the sentinels missing from the readings, as one run of readings
	for last := false; !last; {
		last = !time.Now().Before(until)
		start := time.Now()
		v := s.readFences(ctx, "while holding the sentinels")
		took := time.Since(start)
		s.mu.Lock()
		s.lists.Watch++
		s.mu.Unlock()
		readings++
		age := time.Since(sn.at).Round(time.Millisecond)
		var missing []string
		for _, b := range sn.blocks {
			if !v.has(b) {
				missing = append(missing, b)
			}
		}
		if p := lost.next(strings.Join(missing, ", "), readings, age, len(v.raw)); p != "" {
			problems = append(problems, p)
		}
		for k := range s.preSet {
			switch _, was := gone[k]; {
			case late[k]:
			case v.blocks[k] == 0 && !was:
				gone[k] = age
			case v.blocks[k] > 0 && was:
				problems = append(problems, fmt.Sprintf("%s, fenced before the run, was not listed from %s to %s after the sentinels were fenced, then listed again", show(k), gone[k], age))
				delete(gone, k)
			}
		}
		if len(problems) >= 3 || last {
			break
		}
		select {
		case <-time.After(min(max(min(4*took, 250*time.Millisecond), 20*time.Millisecond), max(time.Until(until), 0))):
		case <-ctx.Done():
			return readings, problems
		}
	}
	if p := lost.next("", readings+1, 0, 0); p != "" {
		problems = append(problems, p)
	}
	return readings, problems
}

// lapse is a run of readings that miss the same sentinels.
type lapse struct {
	missing     string
	first, last int
	from, to    time.Duration
	listed      int
}

// next takes the sentinels missing from reading n and returns the
// sentence of the run that ends there, if one does.
func (l *lapse) next(missing string, n int, age time.Duration, listed int) string {
	if missing == l.missing {
		l.last, l.to = n, age
		return ""
	}
	var out string
	if l.missing != "" {
		out = fmt.Sprintf("readings %d to %d, %s to %s after the sentinels were fenced: %s not listed (%d entries listed)", l.first, l.last, l.from, l.to, l.missing, l.listed)
	}
	*l = lapse{missing: missing, first: n, last: n, from: age, to: age, listed: listed}
	return out
}
