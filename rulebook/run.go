package rulebook

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// RunOptions are the Ginkgo settings of a command-line run.
type RunOptions struct {
	// Selection narrows the run the way Ginkgo's flags do.
	Selection
	// JUnitPath, when set, is where Ginkgo writes the JUnit XML report.
	JUnitPath string
	// Verbose prints every spec, not only failures.
	Verbose bool
	// NoColor turns off ANSI colours.
	NoColor bool
	// DryRun walks the specs without running them.
	DryRun bool
	// Seed is Ginkgo's random seed (the specs run in order either way).
	Seed int64
	// Timeout bounds the whole run; 0 is Ginkgo's default (one hour).
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
	if rep == nil {
		return nil, errors.New("the suite did not produce a report")
	}
	if opts.JUnitPath != "" {
		// Written here rather than by Ginkgo, from a copy of the report
		// with the suite's secrets redacted and unprintable bytes escaped.
		if err := writeJUnit(s.cleanReport(*rep), opts.JUnitPath); err != nil {
			return nil, fmt.Errorf("JUnit report: %w", err)
		}
	}
	if missing := s.Missing(); len(missing) > 0 {
		return nil, fmt.Errorf("rules without a spec body: %s", strings.Join(missing, ", "))
	}
	return s.Fold(*rep, opts.Selection), nil
}

func writeJUnit(rep types.Report, path string) error {
	return reporters.GenerateJUnitReportWithConfig(rep, path, reporters.JunitReportConfig{
		OmitTimelinesForSpecState: types.SpecStatePassed | types.SpecStateSkipped | types.SpecStatePending,
	})
}

// cleanReport is a copy of rep with every text a driver may have put in it
// (failure messages, panics, report entries, captured output, progress
// reports) redacted by the suite and passed through Printable.
func (s *Suite) cleanReport(rep types.Report) types.Report {
	clean := func(t string) string { return Printable(s.redact(t)) }
	rep.SpecialSuiteFailureReasons = mapStrings(rep.SpecialSuiteFailureReasons, clean)
	specs := make(types.SpecReports, len(rep.SpecReports))
	for i, sp := range rep.SpecReports {
		sp.LeafNodeText = clean(sp.LeafNodeText)
		sp.ContainerHierarchyTexts = mapStrings(sp.ContainerHierarchyTexts, clean)
		sp.Failure = cleanFailure(sp.Failure, clean)
		var more []types.AdditionalFailure
		for _, af := range sp.AdditionalFailures {
			af.Failure = cleanFailure(af.Failure, clean)
			more = append(more, af)
		}
		sp.AdditionalFailures = more
		sp.CapturedGinkgoWriterOutput = clean(sp.CapturedGinkgoWriterOutput)
		sp.CapturedStdOutErr = clean(sp.CapturedStdOutErr)
		var entries types.ReportEntries
		for _, e := range sp.ReportEntries {
			e.Value = types.WrapEntryValue(clean(e.StringRepresentation()))
			entries = append(entries, e)
		}
		sp.ReportEntries = entries
		sp.ProgressReports = nil
		sp.SpecEvents = nil
		specs[i] = sp
	}
	rep.SpecReports = specs
	return rep
}

func cleanFailure(f types.Failure, clean func(string) string) types.Failure {
	f.Message, f.ForwardedPanic = clean(f.Message), clean(f.ForwardedPanic)
	f.ProgressReport = types.ProgressReport{}
	return f
}

func mapStrings(in []string, f func(string) string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, x := range in {
		out[i] = f(x)
	}
	return out
}
