package sanity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Rules checked at the end of the run over everything the suite did. They
// are registered last in an ordered container, so they see the whole run.
func describeHygiene(s *State) {
	Describe("Run hygiene", func() {
		s.it("TIME-001", func(ctx context.Context) {
			b := s.v4(1, 32)
			for _, call := range []func() error{
				func() error { _, err := s.getIdentity(ctx); return err },
				func() error { _, err := s.getCapabilities(ctx); return err },
				func() error { _, err := s.probe(ctx); return err },
				func() error { return s.fence(ctx, b) },
				func() error { _, err := s.list(ctx); return err },
				func() error { _, err := s.clients(ctx); return err },
				func() error { return s.unfence(ctx, b) },
			} {
				_ = call()
			}
			var hung []string
			var slowest Call
			for _, c := range s.Calls() {
				if c.Code == "DeadlineExceeded" {
					hung = append(hung, c.Method)
				}
				if c.Duration > slowest.Duration {
					slowest = c
				}
			}
			note("slowest RPC: %s in %s (deadline %s)", slowest.Method, slowest.Duration.Round(time.Millisecond), s.cfg.RPCTimeout.Duration)
			Expect(hung).To(BeEmpty(), "RPCs that did not answer within %s: %s", s.cfg.RPCTimeout.Duration, countWords(hung))
		})

		s.it("TIME-002", func(ctx context.Context) {
			s.mu.Lock()
			late := slices.Clone(s.late)
			s.mu.Unlock()
			if len(late) == 0 {
				note("no Fence missed its deadline")
				return
			}
			s.needList()
			// A probe of its own: the cleanups of the specs whose Fence
			// was late may land after the driver's late work (a loaded
			// machine) and hide it; the probe unfences its block at once.
			if l, ok := s.lateWorkProbe(ctx); ok {
				late = append(late, l)
			}
			// Give the driver three more RPC deadlines to finish what it
			// was doing, then look: every spec's cleanup has run, so a
			// block of a late Fence that is fenced now was fenced after
			// the suite gave up and unfenced it.
			last := late[len(late)-1].at
			select {
			case <-time.After(time.Until(last.Add(3 * s.cfg.RPCTimeout.Duration))):
			case <-ctx.Done():
			}
			listed, err := s.observed(ctx)
			expectOK(err, "reading the fences")
			now := map[string]bool{}
			for _, c := range canonicalAll(listed) {
				now[c] = true
			}
			var after []string
			for _, l := range late {
				for _, c := range l.cidrs {
					if k := canonical(c); now[k] && !s.preSet[k] {
						after = append(after, c)
					}
				}
			}
			Expect(after).To(BeEmpty(), "blocks of a Fence that missed its deadline were fenced afterwards, behind the client's back")
		})

		s.it("SUITE-001", func(ctx context.Context) {
			if err := s.undo(ctx, 0); err != nil {
				s.cleanupFailed(err.Error())
			}
			var problems []string
			if errs := s.cleanupFailures(); len(errs) > 0 {
				problems = append(problems, fmt.Sprintf("%d cleanup failures: %s", len(errs), strings.Join(errs[:min(len(errs), 5)], "; ")))
			}
			if s.stateSource() == SourceNone {
				if len(problems) > 0 {
					Fail(strings.Join(problems, "\n"))
				}
				s.needList()
			}
			listed, err := s.observed(ctx)
			expectOK(err, "reading the fences after cleanup")
			extra, missing := setDiff(canonicalAll(listed), canonicalAll(s.Preexisting))
			if len(extra) > 0 {
				problems = append(problems, fmt.Sprintf("%d fences are listed after cleanup that were not before the run (left behind): %s", len(extra), firstFew(extra)))
			}
			if len(missing) > 0 {
				problems = append(problems, fmt.Sprintf("%d fences that existed before the run are gone: %s", len(missing), firstFew(missing)))
			}
			if len(problems) > 0 {
				Fail(strings.Join(problems, "\n"))
			}
		})

		s.it("SUITE-002", func(context.Context) {
			var leaks []string
			var short []string
			for _, c := range s.Calls() {
				echoed, sh := echoedSecrets(c.raw, s.cfg.Secrets)
				short = sh
				if len(echoed) > 0 {
					leaks = append(leaks, fmt.Sprintf("%s (%s) echoed %v", c.Method, c.Code, echoed))
				}
			}
			if len(short) > 0 {
				note("secrets %v are shorter than %d characters and were not looked for in error messages", short, minSecretLen)
			}
			if len(leaks) > 0 {
				Fail(fmt.Sprintf("%d error messages contained a secret value (redacted in this report): %s", len(leaks), strings.Join(leaks[:min(len(leaks), 5)], "; ")))
			}
		})

		s.it("SUITE-003", func(context.Context) {
			seen := map[string]int{}
			for _, c := range s.Calls() {
				seen[c.Method+" "+c.Code]++
			}
			for _, k := range slices.Sorted(maps.Keys(seen)) {
				note("%s x%d", k, seen[k])
			}
		})
	})
}

// countWords folds repeated names into "name xN".
func countWords(words []string) string {
	n := map[string]int{}
	for _, w := range words {
		n[w]++
	}
	var out []string
	for _, w := range slices.Sorted(maps.Keys(n)) {
		out = append(out, fmt.Sprintf("%s x%d", w, n[w]))
	}
	return strings.Join(out, ", ")
}

// setDiff returns the elements of a not in b and of b not in a, each sorted
// and once.
func setDiff(a, b []string) (onlyA, onlyB []string) {
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, x := range a {
		inA[x] = true
	}
	for _, x := range b {
		inB[x] = true
	}
	for x := range inA {
		if !inB[x] {
			onlyA = append(onlyA, x)
		}
	}
	for x := range inB {
		if !inA[x] {
			onlyB = append(onlyB, x)
		}
	}
	slices.Sort(onlyA)
	slices.Sort(onlyB)
	return onlyA, onlyB
}

// firstFew names up to ten entries and how many more there are.
func firstFew(xs []string) string {
	if len(xs) <= 10 {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:10], ", "), len(xs)-10)
}

// lateWorkProbe fences a fresh block and, when the Fence misses its
// deadline, unfences the block at once, so that only work the driver did
// after the client gave up can make it listed. It reports the late Fence;
// ok is false when the Fence answered in time or no block was free.
func (s *State) lateWorkProbe(ctx context.Context) (l lateFence, ok bool) {
	defer func() {
		if recover() != nil { // the allocator panics when its pools are exhausted
			ok = false
		}
	}()
	block := s.alloc.block(false, 32).String()
	if err := s.fence(ctx, []string{block}); status.Code(err) != codes.DeadlineExceeded {
		note("the probe Fence of %s answered %s within its deadline", block, codeName(err))
		return lateFence{}, false
	}
	l = lateFence{cidrs: []string{block}, at: time.Now()}
	expectOK(s.unfence(ctx, []string{block}), "UnfenceClusterNetwork of the probe block "+block+" right after its Fence missed the deadline")
	return l, true
}
