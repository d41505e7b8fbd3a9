package rulebook

// Verdict is the outcome of one rule (or of one case of a rule).
type Verdict string

// Verdicts, from worst to best.
const (
	VerdictFail   Verdict = "FAIL"          // a MUST (or, when strict, a SHOULD) was not met
	VerdictWarn   Verdict = "WARN"          // a SHOULD (or INFO) was not met
	VerdictPass   Verdict = "PASS"          // every case that ran met the rule
	VerdictInfo   Verdict = "INFO"          // an INFO rule: observations only
	VerdictSkip   Verdict = "SKIP"          // every case was skipped, with a reason
	VerdictNotSup Verdict = "NOT SUPPORTED" // the implementation legitimately lacks what the rule needs (its profile says so)
	VerdictNotRun Verdict = "NOT RUN"       // the rule did not run; NotRunKind says why
)

// Verdicts lists every verdict, worst first, for summaries.
var Verdicts = []Verdict{VerdictFail, VerdictWarn, VerdictPass, VerdictInfo, VerdictNotSup, VerdictSkip, VerdictNotRun}

// NotRunKind says why a rule did not run.
type NotRunKind string

// Reasons a rule did not run.
const (
	NotRunFiltered    NotRunKind = "filtered"    // not selected by the label filter, focus or skip
	NotRunBudget      NotRunKind = "budget"      // the run's time budget ran out before it
	NotRunInterrupted NotRunKind = "interrupted" // the run was interrupted (a signal) before it
	NotRunDependency  NotRunKind = "dependency"  // something it needs is missing; the reason names it
)

// Reason is the sentence a report shows for a rule that did not run for
// this kind, when the rule itself gave none.
func (k NotRunKind) Reason() string {
	switch k {
	case NotRunBudget:
		return "the run's time budget (--timeout) ran out before this rule ran"
	case NotRunInterrupted:
		return "the run was interrupted before this rule ran"
	case NotRunDependency:
		return "something this rule needs is missing"
	}
	return "not selected by the label filter, focus or skip"
}

// During is the sentence a report shows for a case this kind cut while it
// ran.
func (k NotRunKind) During() string {
	switch k {
	case NotRunBudget:
		return "the run's time budget (--timeout) ran out while this rule ran"
	case NotRunInterrupted:
		return "the run was interrupted while this rule ran"
	}
	return k.Reason()
}

// RunVerdict is the verdict of a whole run.
type RunVerdict string

// Run verdicts.
const (
	Conforms       RunVerdict = "CONFORMS"         // no MUST rule (nor, when strict, SHOULD rule) failed
	DoesNotConform RunVerdict = "DOES NOT CONFORM" // some did
	Incomplete     RunVerdict = "INCOMPLETE"       // none failed, but the book says the run cannot vouch for conformance
	Unreachable    RunVerdict = "UNREACHABLE"      // the implementation could not be reached: nothing was tested
)

// Exit statuses of the suites' commands.
const (
	ExitConforms   = 0 // CONFORMS
	ExitNotConform = 1 // DOES NOT CONFORM
	ExitUsage      = 2 // bad flags or configuration: nothing ran
	ExitIncomplete = 3 // INCOMPLETE
	// ExitUnreachable: UNREACHABLE, the endpoint did not answer.
	ExitUnreachable = 4
)

// ExitCode is the command's exit status for the verdict.
func (v RunVerdict) ExitCode() int {
	switch v {
	case Conforms:
		return ExitConforms
	case Incomplete:
		return ExitIncomplete
	case Unreachable:
		return ExitUnreachable
	}
	return ExitNotConform
}
