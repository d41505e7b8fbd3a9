package rulebook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// RunOptions are the Ginkgo settings of a command-line run.
type RunOptions struct {
	// Selection narrows the run the way Ginkgo's flags do.
	Selection
	// Interrupt, when set, cuts the run when it is done (a signal): the
	// rules not run yet are NOT RUN (interrupted).
	Interrupt context.Context
	// Verbose prints every spec, not only failures.
	Verbose bool
	// NoColor turns off ANSI colours.
	NoColor bool
	// DryRun walks the specs without running them.
	DryRun bool
	// Seed is Ginkgo's random seed (the specs run in order either way).
	Seed int64
	// Timeout bounds the whole run; 0 is Ginkgo's default (one hour). The
	// rules it does not reach are NOT RUN (budget).
	Timeout time.Duration
}

// failRecorder is the minimal testing.T Ginkgo needs outside go test.
type failRecorder struct{ failed bool }

func (f *failRecorder) Fail() { f.failed = true }

// Run runs the specs registered in this process's Ginkgo tree (the caller
// has declared, at the top level, the containers whose bodies register the
// suite's rules) and folds the report. It may be called once per process,
// a Ginkgo limit. A rule of the book left without a body is an error.
func (s *Suite) Run(opts RunOptions) (*Result, error) {
	if err := opts.Selection.Check(); err != nil {
		return nil, err
	}
	var rep *types.Report
	ginkgo.ReportAfterSuite(s.book.Title+" report", func(r types.Report) { rep = &r })
	sc, rc := ginkgo.GinkgoConfiguration()
	sc.LabelFilter = opts.LabelFilter
	sc.FocusStrings = opts.Focus
	sc.SkipStrings = opts.Skip
	sc.DryRun = opts.DryRun
	if opts.Seed != 0 {
		sc.RandomSeed = opts.Seed
	}
	if opts.Timeout > 0 {
		sc.Timeout = opts.Timeout
		t := time.AfterFunc(opts.Timeout, func() { s.noteCut(NotRunBudget) })
		defer t.Stop()
	}
	if opts.Interrupt != nil {
		stop := context.AfterFunc(opts.Interrupt, func() { s.noteCut(NotRunInterrupted) })
		defer stop()
	}
	rc.NoColor = opts.NoColor
	if opts.NoColor {
		// Ginkgo's own errors (a bad tree, a filter it refuses) are
		// formatted before the reporter config applies.
		formatter.SingletonFormatter = formatter.New(formatter.ColorModeNone)
	}
	rc.Verbose = opts.Verbose
	rc.Succinct = !opts.Verbose
	rc.ShowNodeEvents = false
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(&failRecorder{}, s.book.Title, sc, rc)
	if opts.Interrupt != nil && opts.Interrupt.Err() != nil {
		s.noteCut(NotRunInterrupted) // also when its AfterFunc has not run yet
	}
	if rep == nil {
		return nil, errors.New("the suite did not produce a report")
	}
	if missing := s.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("rules without a spec body: %s", strings.Join(missing, ", "))
	}
	return s.Fold(*rep, opts.Selection), nil
}
