package sanity

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Level says how much a rule weighs in the verdict.
type Level string

// Levels, after RFC 2119. Only MUST failures fail a run (unless Strict).
const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	Info   Level = "INFO"
)

// Rule is one conformance check: the unit of the verdict and of the report.
type Rule struct {
	// ID is stable across releases, e.g. CIDR-001.
	ID string `json:"id"`
	// Level is MUST, SHOULD or INFO.
	Level Level `json:"level"`
	// Title says what a conforming driver does.
	Title string `json:"title"`
	// Spec is the text of the spec (or of the error table) the rule enforces.
	Spec string `json:"spec"`
	// Labels select the rule with --label-filter, in addition to the ID,
	// the level and the RPCs the rule calls.
	Labels []string `json:"labels"`
}

// Report-entry names the suite attaches to each spec; the report reads them.
const (
	entryRule    = "fenceproof.rule"
	entryWarning = "fenceproof.warning"
	entryNote    = "fenceproof.note"
)

func (r Rule) text() string { return fmt.Sprintf("[%s] %s", r.ID, r.Title) }

func (r Rule) labels() Labels {
	l := Labels{r.ID, string(r.Level)}
	return append(l, r.Labels...)
}

// run executes a rule body. MUST rules fail the spec on the first failed
// expectation. SHOULD rules record a warning instead (or fail when strict);
// INFO rules only record what they observed.
func (r Rule) run(s *State, ctx context.Context, body func(ctx context.Context)) {
	AddReportEntry(entryRule, r, ReportEntryVisibilityNever)
	if r.Level == Must || (r.Level == Should && s.cfg.Strict) {
		body(ctx)
		return
	}
	if err := InterceptGomegaFailure(func() { body(ctx) }); err != nil {
		AddReportEntry(entryWarning, fmt.Sprintf("%s not met: %s", r.Level, err.Error()))
	}
}

// It registers the rule as one Ginkgo spec.
func (r Rule) It(s *State, body func(ctx context.Context)) {
	s.rules = append(s.rules, r)
	It(r.text(), r.labels(), func(ctx SpecContext) {
		s.mustBeReady()
		s.cleanupAfterSpec()
		r.run(s, ctx, body)
	})
}

// Table registers the rule as a Ginkgo DescribeTable, one spec per case; the
// rule fails if any case fails.
func Table[C any](s *State, r Rule, body func(ctx context.Context, c C), entries ...TableEntry) {
	s.rules = append(s.rules, r)
	args := []any{r.labels(), func(ctx SpecContext, c C) {
		s.mustBeReady()
		s.cleanupAfterSpec()
		r.run(s, ctx, func(ctx context.Context) { body(ctx, c) })
	}}
	for _, e := range entries {
		args = append(args, e)
	}
	DescribeTable(r.text(), args...)
}

// note records an observation in the report (shown for INFO rules).
func note(format string, a ...any) {
	AddReportEntry(entryNote, fmt.Sprintf(format, a...), ReportEntryVisibilityFailureOrVerbose)
}

// notSupportedPrefix marks a skip for a capability the driver legitimately
// lacks; the verdict is NOT SUPPORTED rather than SKIP.
const notSupportedPrefix = "not supported: "

// notSupported skips a rule the driver's profile legitimately opts out of.
func notSupported(format string, a ...any) {
	Skip(notSupportedPrefix + strings.TrimSpace(fmt.Sprintf(format, a...)))
}

// skipBecause skips with a reason that the report shows.
func skipBecause(format string, a ...any) {
	Skip(strings.TrimSpace(fmt.Sprintf(format, a...)))
}

// expectCode asserts that err is a gRPC status with one of the codes.
func expectCode(err error, what string, codes ...string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "%s: expected %s, got OK", what, strings.Join(codes, " or "))
	got := codeName(err)
	Expect(codes).To(ContainElement(got), "%s: expected %s, got %s: %s", what, strings.Join(codes, " or "), got, errMessage(err))
}

// expectOK asserts that the RPC succeeded, naming the call.
func expectOK(err error, what string) {
	GinkgoHelper()
	Expect(err).NotTo(HaveOccurred(), "%s: expected OK, got %s: %s", what, codeName(err), errMessage(err))
}
