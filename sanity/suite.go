package sanity

import (
	"context"
	"testing"

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
			GinkgoWriter.Printf("fenceproof sanity: endpoint %s, seed %d (replay with --seed %d)\n", s.cfg.Endpoint, s.Seed, s.Seed)
			s.setupErr = s.connect(ctx)
			if s.setupErr != nil {
				GinkgoWriter.Printf("fenceproof sanity: setup failed: %v\n", s.setupErr)
				return
			}
			GinkgoWriter.Printf("fenceproof sanity: state read from %s\n", s.stateSource())
			s.makeSentinel(ctx)
		})
		AfterAll(func(ctx SpecContext) {
			if s.fc != nil {
				if err := s.undo(ctx, 0); err != nil {
					GinkgoWriter.Printf("fenceproof sanity: final cleanup: %v\n", err)
				}
			}
			s.close()
		})
		describeIdentity(s)
		Describe("FenceController", func() {
			describeErrorTable(s)
			describeCIDRs(s)
			describeSpellings(s)
			describeListing(s)
			describeLifecycle(s)
			describeClients(s)
			describeConcurrency(s)
			describeCapacity(s)
		})
		describeDurability(s)
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
	// JUnitPath, when set, is where the JUnit XML report is written.
	JUnitPath string
	// Verbose prints every spec, not only failures.
	Verbose bool
	// NoColor turns off ANSI colours.
	NoColor bool
	// DryRun walks the specs without running them (no driver needed).
	DryRun bool
}

// Run runs the suite in this process against cfg and returns the verdict per
// rule. It may be called once per process (a Ginkgo limit).
func Run(ctx context.Context, cfg Config, opts RunOptions) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := GinkgoTest(&cfg)
	base, err := s.suite.Run(rulebook.RunOptions{
		Selection: rulebook.Selection{LabelFilter: opts.LabelFilter, Focus: opts.Focus, Skip: opts.Skip},
		JUnitPath: opts.JUnitPath, Verbose: opts.Verbose, NoColor: opts.NoColor, DryRun: opts.DryRun,
		Seed: s.Seed, Timeout: cfg.RunBudget(),
	})
	if err != nil {
		return nil, err
	}
	return buildResult(s, base), ctx.Err()
}
