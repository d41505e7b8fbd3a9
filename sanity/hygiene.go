package sanity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
)

// Rules checked at the end of the run over everything the suite did. They
// are registered last in an ordered container, so they see the whole run.
func describeHygiene(s *State) {
	Describe("Run hygiene", func() {
		s.it("TIME-001", func(ctx context.Context) {
			if s.cut() == nil {
				// A fresh block if one is left (the driver's leftovers may
				// fill the space); without one, Fence and Unfence are not
				// sent here.
				calls := []func() error{
					func() error { _, err := s.getIdentity(ctx); return err },
					func() error { _, err := s.getCapabilities(ctx); return err },
					func() error { _, err := s.probe(ctx); return err },
					func() error { _, err := s.list(ctx); return err },
					func() error { _, err := s.clients(ctx); return err },
				}
				if p, err := s.alloc.block(false, 32); err == nil {
					b := []string{p.String()}
					calls = append(calls, func() error { return s.fence(ctx, b) }, func() error { return s.unfence(ctx, b) })
				}
				for _, call := range calls {
					_ = call()
				}
			}
			var hung []string
			var slowest Call
			for _, c := range s.Calls() {
				if c.Probe {
					continue
				}
				if c.Code == "DeadlineExceeded" {
					hung = append(hung, fmt.Sprintf("%s%s, sent by %s", c.Method, c.Input, c.Sender))
				}
				if c.Duration > slowest.Duration {
					slowest = c
				}
			}
			note("slowest RPC: %s%s in %s (deadline %s), sent by %s", slowest.Method, slowest.Input, slowest.Duration.Round(time.Millisecond), s.cfg.RPCTimeout.Duration, slowest.Sender)
			check(len(hung) == 0, "%d RPCs did not answer within the RPC deadline of %s, in the order sent: %s", len(hung), s.cfg.RPCTimeout.Duration, firstFew(hung))
		})

		table(s, "TIME-002", func(ctx context.Context, method string) {
			trials := s.trialsOf(method)
			// Wait until late work has had time to land: the window after
			// each trial, and after every Fence of the run that missed its
			// deadline (their rules' cleanups unfenced the blocks since).
			var until time.Time
			for _, p := range trials {
				if p.tested {
					until = maxTime(until, p.sentAt.Add(s.lateWindow(method)))
				}
			}
			var late []lateFence
			if method == "FenceClusterNetwork" {
				s.mu.Lock()
				late = slices.Clone(s.late)
				s.mu.Unlock()
				for _, l := range late {
					until = maxTime(until, l.at.Add(3*s.cfg.RPCTimeout.Duration))
				}
			}
			if wait := time.Until(until); wait > 0 {
				if wait > s.left() {
					s.cutNow(fmt.Sprintf("late work needs %s more to land, and the run's time budget does not leave it", wait.Round(time.Millisecond)))
				}
				GinkgoWriter.Printf("waiting %s for late work to land\n", wait.Round(time.Millisecond))
				select {
				case <-time.After(wait):
				case <-ctx.Done():
				}
			}
			s.checkProbes(ctx, true)
			found, tested, untested, summary := lateVerdict(trials)
			check(len(found) == 0, "%d of %d trials showed late work: %s", len(found), tested, strings.Join(found, "\n"))
			if len(late) > 0 {
				v := s.readFences(ctx, "after the late-work window")
				var after []string
				for _, l := range late {
					for _, c := range l.cidrs {
						if v.has(c) && !s.preSet[blockKey(c)] {
							after = append(after, c)
						}
					}
				}
				check(len(after) == 0, "blocks of a Fence that missed its deadline were fenced afterwards, behind the client's back: %s", showAll(after))
			}
			if tested == 0 {
				notRun("no %s could be abandoned while the driver worked on it and then checked: %s", method, strings.Join(untested, "; "))
			}
			note("%d of %d trials abandoned while the driver worked and checked, no late work (%s)%s", tested, len(trials), strings.Join(summary, "; "), untestedNote(untested))
		}, Entry("Fence", "FenceClusterNetwork"), Entry("Unfence", "UnfenceClusterNetwork"))

		s.it("SUITE-001", func(ctx context.Context) {
			s.budget.enterFinal()
			problems, read := s.finalCheck(ctx)
			check(len(problems) == 0, "%s", strings.Join(problems, "\n"))
			if !read {
				notRun("cleanup succeeded; the fences after the run could not be read: %s", s.stateGap())
			}
		})

		s.it("SUITE-002", func(context.Context) {
			var leaks []string
			for _, c := range s.Calls() {
				if len(c.Echoed) > 0 {
					leaks = append(leaks, fmt.Sprintf("%s (%s): %s", c.Method, specName(c.Code), strings.Join(c.Echoed, "; ")))
				}
			}
			note("%s", s.secrets.scope)
			check(len(leaks) == 0, "%d answers of the driver contained a secret value (redacted in this report): %s", len(leaks), firstFew(leaks))
		})

		s.it("SUITE-003", func(context.Context) {
			seen := map[string]int{}
			for _, c := range s.Calls() {
				if !c.Probe {
					seen[c.Method+" "+specName(c.Code)]++
				}
			}
			for _, k := range slices.Sorted(maps.Keys(seen)) {
				note("%s x%d", k, seen[k])
			}
		})
	})
}

func untestedNote(untested []string) string {
	if len(untested) == 0 {
		return ""
	}
	return "; not tested: " + strings.Join(untested, "; ")
}

// finalCheck undoes every fence the run made and compares the fences with
// those before the run, as CIDR sets: SUITE-001's check, also run after a
// cut run. It returns the problems, as sentences, and whether the fences
// could be read.
func (s *State) finalCheck(ctx context.Context) (problems []string, read bool) {
	if err := s.undo(ctx, 0); err != nil {
		s.cleanupFailed(err.Error())
	}
	if errs := s.cleanupFailures(); len(errs) > 0 {
		problems = append(problems, fmt.Sprintf("cleanup failed to undo fences the driver had acknowledged: %s", strings.Join(errs[:min(len(errs), 5)], "; ")))
	}
	if s.stateSource() == SourceNone {
		return problems, false
	}
	listed, err := s.observed(ctx)
	if err != nil {
		return append(problems, fmt.Sprintf("reading the fences after cleanup answered %s: %s", codeSpec(err), errText(err))), true
	}
	before := map[string]bool{}
	for _, c := range s.Preexisting {
		before[blockKey(c)] = true
	}
	now := map[string]bool{}
	for _, c := range listed {
		now[blockKey(c)] = true
	}
	var extra, missing []string
	for k := range now {
		if !before[k] {
			extra = append(extra, k)
		}
	}
	for k := range before {
		if !now[k] {
			missing = append(missing, k)
		}
	}
	slices.Sort(extra)
	slices.Sort(missing)
	if len(extra) > 0 {
		problems = append(problems, fmt.Sprintf("%d fences are listed after cleanup that were not before the run (left behind): %s%s", len(extra), showFew(extra), s.clearLeftovers(ctx, extra)))
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%d fences that existed before the run are gone: %s", len(missing), showFew(missing)))
	}
	return problems, true
}

// clearLeftovers unfences the fences left behind that overlap a block the
// suite asked for (a driver that made a wider block of the suite's, or kept
// one its Unfence acknowledged): the suite made them, so it undoes them,
// and says how that went. Others (another actor's) are left alone.
func (s *State) clearLeftovers(ctx context.Context, extra []string) string {
	ctx = context.WithValue(ctx, cleanupKey{}, true)
	asked := s.tracker.requestedBlocks()
	var ours []string
	for _, k := range extra {
		p, ok := blockOf(k)
		if !ok {
			continue
		}
		for _, a := range asked {
			if a.Overlaps(p) {
				ours = append(ours, k)
				break
			}
		}
	}
	if len(ours) == 0 {
		return ""
	}
	if err := s.unfence(ctx, ours); err != nil {
		return fmt.Sprintf("; the suite's Unfence of the %d that overlap its blocks answered %s: %s", len(ours), codeSpec(err), errText(err))
	}
	return fmt.Sprintf("; the suite unfenced the %d that overlap its blocks", len(ours))
}

// cutNow ends the current case as NOT RUN for the budget, with the reason.
func (s *State) cutNow(why string) {
	GinkgoHelper()
	settleCut(&cutError{kind: "budget", why: why})
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// firstFew names up to ten entries and how many more there are.
func firstFew(xs []string) string {
	if len(xs) <= 10 {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:10], ", "), len(xs)-10)
}

// showFew is firstFew of driver-supplied strings, each quoted by show.
func showFew(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	out := make([]string, min(len(xs), 10))
	for i := range out {
		out[i] = show(xs[i])
	}
	if len(xs) > 10 {
		return fmt.Sprintf("%s and %d more", strings.Join(out, ", "), len(xs)-10)
	}
	return strings.Join(out, ", ")
}
