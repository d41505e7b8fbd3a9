package rulebook

import (
	"context"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// Report-entry names the engine attaches to each spec and reads back.
const (
	entryRule    = "fenceproof.rule"    // the rule, once its body starts
	entryWarning = "fenceproof.warning" // a SHOULD or INFO rule not met
	entryNote    = "fenceproof.note"    // an observation (shown for INFO rules)
	entryOutcome = "fenceproof.outcome" // why a skipped spec did not run: one of the outcome values
)

// Outcomes of a skipped spec, besides a plain skip.
const (
	outcomeNotSupported = "not supported"
	outcomeDependency   = "not run"
)

// Suite registers the spec bodies of a book's rules in a Ginkgo tree, one
// body per rule ID, and folds the run's report into a Result.
type Suite struct {
	book   *Book
	o      SuiteOptions
	bodies map[string]bool
}

// SuiteOptions configure a Suite.
type SuiteOptions struct {
	// Strict makes SHOULD rules fail instead of warn.
	Strict bool
	// Before runs first in every spec (a setup check, a cleanup to defer).
	Before func()
	// Redact cleans every message, note and reason the result keeps (the
	// suite's secrets); nil keeps them as they are.
	Redact func(string) string
}

// Suite starts the registration of one run of the book's rules.
func (b *Book) Suite(o SuiteOptions) *Suite {
	return &Suite{book: b, o: o, bodies: map[string]bool{}}
}

// rule claims the body of one rule; an unknown or already claimed ID is a
// bug of the suite and panics at tree construction.
func (s *Suite) rule(id string) Rule {
	r, ok := s.book.Rule(id)
	if !ok {
		panic(fmt.Sprintf("rulebook %s: no rule %s in the table", s.book.Title, id))
	}
	if s.bodies[id] {
		panic(fmt.Sprintf("rulebook %s: rule %s has two bodies", s.book.Title, id))
	}
	s.bodies[id] = true
	return r
}

// Missing lists the rules of the book that have no registered body.
func (s *Suite) Missing() []string {
	var out []string
	for _, r := range s.book.rules {
		if !s.bodies[r.ID] {
			out = append(out, r.ID)
		}
	}
	return out
}

// run executes a rule body. MUST rules (and SHOULD rules when strict) fail
// the spec on the first failed expectation; the others record a warning
// instead.
func (s *Suite) run(r Rule, ctx context.Context, body func(ctx context.Context)) {
	ginkgo.AddReportEntry(entryRule, r, ginkgo.ReportEntryVisibilityNever)
	if s.o.Before != nil {
		s.o.Before()
	}
	if r.Level == Must || (r.Level == Should && s.o.Strict) {
		body(ctx)
		return
	}
	if err := gomega.InterceptGomegaFailure(func() { body(ctx) }); err != nil {
		ginkgo.AddReportEntry(entryWarning, fmt.Sprintf("%s not met: %s", r.Level, err.Error()))
	}
}

// It registers the body of rule id as one Ginkgo spec.
func (s *Suite) It(id string, body func(ctx context.Context)) {
	r := s.rule(id)
	ginkgo.It(r.Text(), ginkgo.Label(r.Selectors()...), func(ctx ginkgo.SpecContext) { s.run(r, ctx, body) })
}

// Table registers the body of rule id as a Ginkgo DescribeTable, one spec
// per entry; the rule fails if any case fails.
func Table[C any](s *Suite, id string, body func(ctx context.Context, c C), entries ...ginkgo.TableEntry) {
	r := s.rule(id)
	args := []any{ginkgo.Label(r.Selectors()...), func(ctx ginkgo.SpecContext, c C) {
		s.run(r, ctx, func(ctx context.Context) { body(ctx, c) })
	}}
	for _, e := range entries {
		args = append(args, e)
	}
	ginkgo.DescribeTable(r.Text(), args...)
}

// Note records an observation in the report (shown for INFO rules).
func Note(format string, a ...any) {
	ginkgo.AddReportEntry(entryNote, fmt.Sprintf(format, a...), ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// Skip ends the current case as SKIP, with a reason the report shows.
func Skip(format string, a ...any) {
	ginkgo.GinkgoHelper()
	ginkgo.Skip(strings.TrimSpace(fmt.Sprintf(format, a...)))
}

// NotSupported ends the current case as NOT SUPPORTED: the implementation
// legitimately lacks what the rule needs (its profile says so).
func NotSupported(format string, a ...any) {
	ginkgo.GinkgoHelper()
	ginkgo.AddReportEntry(entryOutcome, outcomeNotSupported, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip(outcomeNotSupported + ": " + strings.TrimSpace(fmt.Sprintf(format, a...)))
}

// NotRun ends the current case as NOT RUN because something it needs is
// missing; the reason names it.
func NotRun(format string, a ...any) {
	ginkgo.GinkgoHelper()
	ginkgo.AddReportEntry(entryOutcome, outcomeDependency, ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip(outcomeDependency + ": " + strings.TrimSpace(fmt.Sprintf(format, a...)))
}
