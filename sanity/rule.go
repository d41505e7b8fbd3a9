package sanity

import (
	"context"
	"strings"

	"github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/rulebook"
)

// The engine's names, kept here for the suite's users (they moved to
// package rulebook, which csi-proxy's conformance suite shares).
type (
	// Level says how much a rule weighs in the verdict.
	Level = rulebook.Level
	// Rule is one conformance check: the unit of the verdict and of the report.
	Rule = rulebook.Rule
	// Verdict is the outcome of one rule.
	Verdict = rulebook.Verdict
	// RuleResult is the verdict of one rule with its cases.
	RuleResult = rulebook.RuleResult
	// CaseResult is one Ginkgo spec of a rule (a table rule has several).
	CaseResult = rulebook.CaseResult
)

// Levels, after RFC 2119. Only MUST failures fail a run (unless Strict).
const (
	Must   = rulebook.Must
	Should = rulebook.Should
	Info   = rulebook.Info
)

// Verdicts of one rule, from worst to best.
const (
	VerdictFail   = rulebook.VerdictFail
	VerdictWarn   = rulebook.VerdictWarn
	VerdictPass   = rulebook.VerdictPass
	VerdictInfo   = rulebook.VerdictInfo
	VerdictSkip   = rulebook.VerdictSkip
	VerdictNotSup = rulebook.VerdictNotSup
	VerdictNotRun = rulebook.VerdictNotRun
)

// Verdicts lists every verdict, worst first, for summaries.
var Verdicts = rulebook.Verdicts

// Run-verdict words.
const (
	ConformsWord   = string(rulebook.Conforms)
	NotConformWord = string(rulebook.DoesNotConform)
	IncompleteWord = string(rulebook.Incomplete)
)

// Rules returns every rule of the suite, in report order, from the rule
// table (no spec runs).
func Rules() []Rule { return book.Rules() }

// it registers the body of rule id as one spec.
func (s *State) it(id string, body func(ctx context.Context)) { s.suite.It(id, body) }

// table registers the body of rule id as one spec per entry.
func table[C any](s *State, id string, body func(ctx context.Context, c C), entries ...ginkgo.TableEntry) {
	rulebook.Table(s.suite, id, body, entries...)
}

// note records an observation in the report (shown for INFO rules).
func note(format string, a ...any) { rulebook.Note(format, a...) }

// notSupported skips a rule the driver's profile legitimately opts out of.
func notSupported(format string, a ...any) {
	ginkgo.GinkgoHelper()
	rulebook.NotSupported(format, a...)
}

// skipBecause skips with a reason that the report shows.
func skipBecause(format string, a ...any) {
	ginkgo.GinkgoHelper()
	rulebook.Skip(format, a...)
}

// expectCode asserts that err is a gRPC status with one of the codes.
func expectCode(err error, what string, codes ...string) {
	ginkgo.GinkgoHelper()
	Expect(err).To(HaveOccurred(), "%s: expected %s, got OK", what, strings.Join(codes, " or "))
	got := codeName(err)
	Expect(codes).To(ContainElement(got), "%s: expected %s, got %s: %s", what, strings.Join(codes, " or "), got, errMessage(err))
}

// expectOK asserts that the RPC succeeded, naming the call.
func expectOK(err error, what string) {
	ginkgo.GinkgoHelper()
	Expect(err).NotTo(HaveOccurred(), "%s: expected OK, got %s: %s", what, codeName(err), errMessage(err))
}

// SelectRules returns the rules a Ginkgo label filter selects, in report
// order, from the rule table (no spec runs).
func SelectRules(labelFilter string) ([]Rule, error) { return book.Select(labelFilter) }
