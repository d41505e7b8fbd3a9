package sanity

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/rulebook"
)

// GinkgoTest registers every rule of the suite in the caller's Ginkgo tree,
// for a vendor that already has a Ginkgo suite. Call it at tree-construction
// time (top level or inside a container). The returned State is filled in as
// the specs run; it is what the report is built from.
//
// The specs run in one ordered container: one connection, identity read
// once, the end-of-run rules last. A failed rule does not stop the others.
func GinkgoTest(cfg *Config) *State {
	s := newState(*cfg)
	Describe("fenceproof sanity", Ordered, ContinueOnFailure, func() {
		BeforeAll(func(ctx SpecContext) {
			s.budget.begin(cfg.RunBudget())
			GinkgoWriter.Printf("fenceproof sanity: endpoint %s, seed %d (replay with --seed %d)\n", clean(s.cfg.Endpoint), s.Seed, s.Seed)
			s.setupErr = s.connect(ctx)
			switch {
			case s.unreachable != nil:
				GinkgoWriter.Printf("fenceproof sanity: %s\n", clean(s.unreachable.Error()))
				return
			case s.setupErr != nil:
				GinkgoWriter.Printf("fenceproof sanity: setup failed: %s\n", clean(s.setupErr.Error()))
				return
			}
			GinkgoWriter.Printf("fenceproof sanity: state read from %s\n", s.stateSource())
			// The sentinels and the late-work trials are the rules'
			// that read them; a run narrowed to others spares them.
			var took time.Duration
			if s.runs("EXPIRE-001", "RESTART-001", "TIME-002") {
				took = s.makeSentinels(ctx)
			}
			if s.runs("TIME-002") {
				s.probeLateWork(ctx, took)
			}
		})
		AfterAll(func(ctx SpecContext) {
			if s.fc != nil {
				s.budget.enterFinal()
				if err := s.undo(ctx, 0); err != nil {
					GinkgoWriter.Printf("fenceproof sanity: final cleanup: %s\n", clean(err.Error()))
				}
			}
		})
		describeIdentity(s)
		Describe("FenceController", func() {
			describeErrorTable(s)
			describeCIDRs(s)
			describeSpellings(s)
			describeListing(s)
			describeLifecycle(s)
			describeSequences(s)
			describeClients(s)
			describeConcurrency(s)
			describeCapacity(s)
		})
		describeRunWide(s)
		describeDurability(s)
		describeEnforcement(s)
		describeExpiry(s)
		describeHygiene(s)
	})
	return s
}

// Test runs the whole suite as one Go test, for a vendor without a Ginkgo
// suite of its own:
//
//	func TestFenceConformance(t *testing.T) {
//		cfg := sanity.Defaults()
//		cfg.Endpoint = "unix:///tmp/driver.sock"
//		sanity.Test(t, &cfg)
//	}
//
// Ginkgo allows one RunSpecs per test binary, so call Test once per package.
func Test(t *testing.T, cfg *Config) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("sanity config: %v", err)
	}
	GinkgoTest(cfg)
	RegisterFailHandler(Fail)
	RunSpecs(t, "fenceproof sanity")
}

// RunOptions are the Ginkgo settings of a command-line run.
type RunOptions struct {
	// LabelFilter, Focus and Skip narrow the run the way Ginkgo's flags do.
	LabelFilter string
	Focus, Skip []string
	// Verbose prints every spec, not only failures.
	Verbose bool
	// NoColor turns off ANSI colours.
	NoColor bool
	// DryRun walks the specs without running them (no driver needed).
	DryRun bool
}

// Run runs the suite in this process against cfg and returns the verdict per
// rule. It may be called once per process (a Ginkgo limit). When ctx ends
// (a signal) the run is cut: the rules not yet run are NOT RUN
// (interrupted), every fence the run made is undone, and the result is
// returned all the same; so it is when the budget (Config.Timeout) runs
// out. An endpoint that does not answer gives the UNREACHABLE verdict.
func Run(ctx context.Context, cfg Config, opts RunOptions) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := GinkgoTest(&cfg)
	if rules, err := SelectRules(opts.LabelFilter); err == nil && opts.LabelFilter != "" {
		s.selected = map[string]bool{}
		for _, r := range rules {
			s.selected[r.ID] = true
		}
	}
	stop := context.AfterFunc(ctx, s.budget.interrupt)
	defer stop()
	defer s.close()
	base, err := s.suite.Run(rulebook.RunOptions{
		Selection: rulebook.Selection{LabelFilter: opts.LabelFilter, Focus: opts.Focus, Skip: opts.Skip}, Interrupt: ctx,
		Verbose: opts.Verbose, NoColor: opts.NoColor, DryRun: opts.DryRun,
		Seed: s.Seed, Timeout: cfg.RunBudget() + 3*cfg.RPCTimeout.Duration + cfg.ConnectTimeout.Duration + time.Minute,
	})
	if err != nil {
		return nil, err
	}
	s.settleAfterCut(base)
	return buildResult(s, base), nil
}

// runs reports whether one of the rules may run: a label filter may leave
// them out (--focus and --skip are not read: they may select any).
func (s *State) runs(ids ...string) bool {
	if s.selected == nil {
		return true
	}
	for _, id := range ids {
		if s.selected[id] {
			return true
		}
	}
	return false
}

// settleAfterCut undoes what a cut run left fenced (the specs that would
// have done it did not run) and, when SUITE-001 did not run, gives it the
// verdict of the same check made now.
func (s *State) settleAfterCut(res *rulebook.Result) {
	if s.fc == nil || (s.tracker.mark() == 0 && !s.suiteCheckMissing(res)) {
		return
	}
	s.budget.enterFinal()
	ctx, cancel := context.WithTimeout(context.Background(), 3*s.cfg.RPCTimeout.Duration)
	defer cancel()
	start := time.Now()
	problems, read := s.finalCheck(ctx)
	if !s.suiteCheckMissing(res) || (!read && len(problems) == 0) {
		return
	}
	c := rulebook.CaseResult{Name: "checked after the run was cut", State: "passed", Verdict: rulebook.VerdictPass, Duration: time.Since(start)}
	if len(problems) > 0 {
		c.State, c.Verdict, c.Message = "failed", rulebook.VerdictFail, clean(strings.Join(problems, "\n"))
	}
	book.Settle(res, "SUITE-001", c)
}

// suiteCheckMissing reports whether SUITE-001 was cut.
func (s *State) suiteCheckMissing(res *rulebook.Result) bool {
	rr, ok := res.Rule("SUITE-001")
	return ok && rr.Verdict == rulebook.VerdictNotRun && rr.NotRun != rulebook.NotRunFiltered
}
