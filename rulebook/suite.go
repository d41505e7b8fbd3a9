package rulebook

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

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

// Outcomes of a skipped spec, besides a plain skip: NOT SUPPORTED, or NOT
// RUN for a missing dependency ("not run") or another kind ("not run
// (budget)"); the skip message is the outcome's prefix and the reason.
const (
	outcomeNotSupported = "not supported"
	outcomeDependency   = "not run"
)

// notRunOutcome is the outcome of a case that did not run for kind.
func notRunOutcome(kind NotRunKind) string {
	if kind == NotRunDependency || kind == "" {
		return outcomeDependency
	}
	return outcomeDependency + " (" + string(kind) + ")"
}

// notRunKindOf parses an outcome back; ok is false for other outcomes.
func notRunKindOf(outcome string) (NotRunKind, bool) {
	for _, k := range notRunKinds {
		if outcome == notRunOutcome(k) {
			return k, true
		}
	}
	return "", false
}

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
	// Redact cleans every message, note and reason the result keeps, and
	// the JUnit report (the suite's secrets); nil keeps them as they are.
	Redact func(string) string
	// Gate, when set, is asked before each rule's body: a kind other than
	// "" ends the case as NOT RUN of that kind with the reason (the run's
	// budget is spent, the run was interrupted, the setup failed).
	Gate func(Rule) (NotRunKind, string)
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
	if s.o.Gate != nil {
		if kind, why := s.o.Gate(r); kind != "" {
			Cut(kind, "%s", why)
		}
	}
	if s.o.Before != nil {
		s.o.Before()
	}
	if r.Level == Must || (r.Level == Should && s.o.Strict) {
		body(ctx)
		return
	}
	soft.Store(true)
	defer soft.Store(false)
	var msg string
	err := gomega.InterceptGomegaFailure(func() {
		defer func() {
			switch f := recover().(type) {
			case nil:
			case softFailure:
				msg = string(f)
			default:
				panic(f)
			}
		}()
		body(ctx)
	})
	if err != nil {
		msg = err.Error()
	}
	if msg != "" {
		ginkgo.AddReportEntry(entryWarning, fmt.Sprintf("%s not met: %s", r.Level, msg))
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

// soft is set while a SHOULD (not strict) or INFO rule's body runs: a
// failure there is a warning, not a failed spec. Ginkgo runs one spec at a
// time.
var soft atomic.Bool

// softFailure carries a failure out of a SHOULD or INFO body.
type softFailure string

// Fail ends the current case as failed with the message, or, in a SHOULD
// (not strict) or INFO rule, as not met (WARN) with it. A suite's checks
// call it instead of ginkgo.Fail so that its rules' levels hold.
func Fail(message string) {
	ginkgo.GinkgoHelper()
	if soft.Load() {
		panic(softFailure(message))
	}
	ginkgo.Fail(message)
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
	Cut(NotRunDependency, format, a...)
}

// Cut ends the current case as NOT RUN of the kind (the budget ran out, the
// run was interrupted, a dependency is missing), with the reason. A case cut
// while it ran is not judged on what it saw before.
func Cut(kind NotRunKind, format string, a ...any) {
	ginkgo.GinkgoHelper()
	ginkgo.AddReportEntry(entryOutcome, notRunOutcome(kind), ginkgo.ReportEntryVisibilityNever)
	ginkgo.Skip(outcomeDependency + ": " + strings.TrimSpace(fmt.Sprintf(format, a...)))
}
