package rulebook

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// Report-entry names the engine attaches to each spec.
const (
	entryCase = "fenceproof.case" // the case's run state (*caseRun), once its body starts
	entryNote = "fenceproof.note" // an observation (shown for INFO rules)
)

// caseRun is the run state of one case (one spec) of a rule: whether a
// failure there fails it or only warns (its rule's level and the run's
// strictness), and how it ended when that was not a plain pass or a failed
// expectation. The engine attaches it to the spec when its body starts;
// Fail and the outcome calls (Skip, NotSupported, NotRun, Cut) record into
// it; Fold reads it back. Nothing is parsed from a message.
type caseRun struct {
	suite *Suite
	rule  Rule
	soft  bool // a failure is a warning: a SHOULD rule (not strict) or an INFO rule

	mu      sync.Mutex
	outcome *outcome
}

// outcome is how a case ended besides passing or failing an expectation:
// WARN (a soft failure), SKIP, NOT SUPPORTED or NOT RUN of a kind, with the
// reason the report shows.
type outcome struct {
	Verdict Verdict
	NotRun  NotRunKind
	Reason  string
}

// String is what Ginkgo shows for the entry (it is never shown: its
// visibility is never).
func (c *caseRun) String() string { return c.rule.ID }

func (c *caseRun) record(o outcome) {
	if o.Verdict == VerdictNotRun {
		c.suite.noteCut(o.NotRun)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outcome == nil {
		c.outcome = &o
	}
}

func (c *caseRun) ended() *outcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outcome
}

// currentCase is the run state of the case whose body runs now, found
// through the spec Ginkgo runs (one at a time per process); nil outside a
// rule's body.
func currentCase() *caseRun {
	for _, e := range ginkgo.CurrentSpecReport().ReportEntries {
		if c, ok := e.GetRawValue().(*caseRun); ok && e.Name == entryCase {
			return c
		}
	}
	return nil
}

// Suite registers the spec bodies of a book's rules in a Ginkgo tree, one
// body per rule ID, and folds the run's report into a Result.
type Suite struct {
	book   *Book
	o      SuiteOptions
	bodies map[string]bool

	mu  sync.Mutex
	cut NotRunKind // why the run was cut (budget, interrupted); "" while it was not
}

// SuiteOptions configure a Suite: the run's settings the rules' verdicts
// depend on.
type SuiteOptions struct {
	// Strict makes SHOULD rules fail instead of warn.
	Strict bool
	// Before runs first in every spec (a setup check, a cleanup to defer).
	Before func()
	// Redact cleans every message, note and reason the result keeps (the
	// suite's secrets); nil keeps them as they are.
	Redact func(string) string
	// Gate, when set, is asked before each rule's body: a kind other than
	// "" ends the case as NOT RUN of that kind with the reason (the run's
	// budget is spent, the run was interrupted, the setup failed). A gate
	// that lets Rule.Always rules through a spent budget reads the flag.
	Gate func(Rule) (NotRunKind, string)
	// OptedIn says whether the run was given a rule's Rule.OptIn; a rule
	// whose opt-in was not given is SKIP. Nil: none was given.
	OptedIn func(optIn string) bool
}

// Suite starts the registration of one run of the book's rules.
func (b *Book) Suite(o SuiteOptions) *Suite {
	return &Suite{book: b, o: o, bodies: map[string]bool{}}
}

// noteCut records why the run is cut; the first cause stays.
func (s *Suite) noteCut(kind NotRunKind) {
	if kind != NotRunBudget && kind != NotRunInterrupted {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cut == "" {
		s.cut = kind
	}
}

// cutKind is why the run was cut, "" when it was not.
func (s *Suite) cutKind() NotRunKind {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut
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
	c := &caseRun{suite: s, rule: r, soft: r.Level == Info || (r.Level == Should && !s.o.Strict)}
	ginkgo.AddReportEntry(entryCase, c, ginkgo.ReportEntryVisibilityNever)
	if s.o.Gate != nil {
		if kind, why := s.o.Gate(r); kind != "" {
			Cut(kind, "%s", why)
		}
	}
	if r.OptIn != "" && (s.o.OptedIn == nil || !s.o.OptedIn(r.OptIn)) {
		Skip("not asked for: this rule runs with %s, which this run was not given", r.OptIn)
	}
	if s.o.Before != nil {
		s.o.Before()
	}
	if !c.soft {
		body(ctx)
		return
	}
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
		c.record(outcome{Verdict: VerdictWarn, Reason: fmt.Sprintf("%s not met: %s", r.Level, msg)})
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

// softFailure carries a failure out of a SHOULD or INFO body.
type softFailure string

// Fail ends the current case as failed with the message, or, in a SHOULD
// (not strict) or INFO rule, as not met (WARN) with it. A suite's checks
// call it instead of ginkgo.Fail so that its rules' levels hold.
func Fail(message string) {
	ginkgo.GinkgoHelper()
	if c := currentCase(); c != nil && c.soft {
		panic(softFailure(message))
	}
	ginkgo.Fail(message)
}

// Note records an observation in the report (shown for INFO rules).
func Note(format string, a ...any) {
	ginkgo.AddReportEntry(entryNote, fmt.Sprintf(format, a...), ginkgo.ReportEntryVisibilityFailureOrVerbose)
}

// end records how the current case ends and ends it (a Ginkgo skip; the
// outcome, not the skip, is what Fold reads).
func end(o outcome) {
	ginkgo.GinkgoHelper()
	o.Reason = strings.TrimSpace(o.Reason)
	if c := currentCase(); c != nil {
		c.record(o)
	}
	ginkgo.Skip(o.Reason)
}

// Skip ends the current case as SKIP, with a reason the report shows: what
// was not asked for.
func Skip(format string, a ...any) {
	ginkgo.GinkgoHelper()
	end(outcome{Verdict: VerdictSkip, Reason: fmt.Sprintf(format, a...)})
}

// NotSupported ends the current case as NOT SUPPORTED: the implementation
// legitimately lacks what the rule needs (its profile says so).
func NotSupported(format string, a ...any) {
	ginkgo.GinkgoHelper()
	end(outcome{Verdict: VerdictNotSup, Reason: fmt.Sprintf(format, a...)})
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
	end(outcome{Verdict: VerdictNotRun, NotRun: kind, Reason: fmt.Sprintf(format, a...)})
}
