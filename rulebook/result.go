package rulebook

import (
	"fmt"
	"strings"
	"time"
)

// CaseResult is one Ginkgo spec of a rule (a table rule has several).
type CaseResult struct {
	Name string `json:"name"`
	// State is Ginkgo's state of the spec (passed, failed, skipped, ...),
	// or "warned" for a SHOULD or INFO case that was not met.
	State   string     `json:"state"`
	Verdict Verdict    `json:"verdict"`
	NotRun  NotRunKind `json:"notRun,omitempty"`
	Message string     `json:"message,omitempty"`
	// Location is where a failed case failed.
	Location string        `json:"location,omitempty"`
	Duration time.Duration `json:"duration"`
}

// RuleResult is the verdict of one rule with its cases.
type RuleResult struct {
	Rule
	Verdict Verdict `json:"verdict"`
	// NotRun says why, when Verdict is NOT RUN.
	NotRun NotRunKind `json:"notRun,omitempty"`
	Reason string     `json:"reason,omitempty"`
	// Incomplete says why this rule's result keeps a run that failed
	// nothing from CONFORMS (the book's Incomplete policy); "" when it
	// does not.
	Incomplete string        `json:"incomplete,omitempty"`
	Notes      []string      `json:"notes,omitempty"`
	Cases      []CaseResult  `json:"cases"`
	Duration   time.Duration `json:"duration"`
}

// Fact is one line of a report's header that a suite adds (the driver, its
// capabilities, the served API versions, ...).
type Fact struct{ Name, Value string }

// Result is the verdict of a whole run: what the reports are made from. A
// suite's own result type embeds it and adds what it knows about the run.
type Result struct {
	// Suite is the book's title.
	Suite      string        `json:"suite"`
	Endpoint   string        `json:"endpoint"`
	Seed       int64         `json:"seed,omitempty"`
	SetupError string        `json:"setupError,omitempty"`
	Strict     bool          `json:"strict"`
	Started    time.Time     `json:"started"`
	Duration   time.Duration `json:"duration"`
	// Selection is how the run was narrowed (empty: every rule).
	Selection Selection    `json:"selection"`
	Rules     []RuleResult `json:"rules"`
	// Verdict is the run's verdict, computed once (conclude) from the
	// rules: the one the exit status, the terminal, every report, JUnit
	// and the reports index show.
	Verdict RunVerdict `json:"verdict"`
	// IncompleteBecause are the reasons of an INCOMPLETE verdict, one per
	// rule whose Incomplete is set ("ID: why").
	IncompleteBecause []string `json:"incompleteBecause,omitempty"`
	// Facts are the suite's header lines of the Markdown and HTML reports.
	Facts []Fact `json:"-"`
}

// Base returns r: the generic part of a suite's result, for the writers.
func (r *Result) Base() *Result { return r }

// Passed reports whether no MUST rule failed (and, when strict, no SHOULD
// rule either).
func (r *Result) Passed() bool {
	for _, rr := range r.Rules {
		if rr.Verdict == VerdictFail && (rr.Level == Must || r.Strict) {
			return false
		}
	}
	return true
}

// Count returns how many rules have the verdict.
func (r *Result) Count(v Verdict) int {
	n := 0
	for _, rr := range r.Rules {
		if rr.Verdict == v {
			n++
		}
	}
	return n
}

// Rule returns the result of one rule by ID.
func (r *Result) Rule(id string) (RuleResult, bool) {
	for _, rr := range r.Rules {
		if rr.ID == id {
			return rr, true
		}
	}
	return RuleResult{}, false
}

// Failed lists the IDs of the rules that failed, in report order.
func (r *Result) Failed() []string {
	var out []string
	for _, rr := range r.Rules {
		if rr.Verdict == VerdictFail {
			out = append(out, rr.ID)
		}
	}
	return out
}

// Summary is a one-line count of verdicts, e.g. "54 PASS, 1 FAIL".
func (r *Result) Summary() string {
	var parts []string
	for _, v := range Verdicts {
		if n := r.Count(v); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	return strings.Join(parts, ", ")
}

// Ran counts the rules the run selected: every rule but those filtered
// out by its Selection.
func (r *Result) Ran() int {
	n := 0
	for _, rr := range r.Rules {
		if rr.Verdict != VerdictNotRun || rr.NotRun != NotRunFiltered {
			n++
		}
	}
	return n
}

// Attention are the rules that failed or warned, in report order.
func (r *Result) Attention() []RuleResult {
	var out []RuleResult
	for _, rr := range r.Rules {
		if rr.Verdict == VerdictFail || rr.Verdict == VerdictWarn {
			out = append(out, rr)
		}
	}
	return out
}

// conclude computes the run's verdict from the rules: DOES NOT CONFORM when
// a MUST rule (or, when strict, a SHOULD rule) failed; else INCOMPLETE when
// the book's policy says some rule's result keeps the run from vouching for
// conformance; else CONFORMS.
func (r *Result) conclude(incomplete func(RuleResult) string) {
	r.IncompleteBecause = nil
	for i := range r.Rules {
		rr := &r.Rules[i]
		rr.Incomplete = ""
		if incomplete != nil {
			rr.Incomplete = incomplete(*rr)
		}
		if rr.Incomplete != "" {
			r.IncompleteBecause = append(r.IncompleteBecause, rr.ID+": "+rr.Incomplete)
		}
	}
	switch {
	case !r.Passed():
		r.Verdict = DoesNotConform
	case len(r.IncompleteBecause) > 0:
		r.Verdict = Incomplete
	default:
		r.Verdict = Conforms
	}
}

// MustRulesRun is the Incomplete policy of a suite that vouches for
// conformance only when every MUST rule ran: a MUST rule, or a case of one,
// that did not run (cut by the budget or a signal, filtered out, missing a
// dependency) keeps a run that failed nothing from CONFORMS. SKIP (not
// asked for) and NOT SUPPORTED (a choice the profile allows) do not.
func MustRulesRun(rr RuleResult) string {
	if rr.Level != Must {
		return ""
	}
	if rr.Verdict == VerdictNotRun {
		return fmt.Sprintf("NOT RUN (%s): %s", rr.NotRun, rr.Reason)
	}
	for _, c := range rr.Cases {
		if c.Verdict == VerdictNotRun {
			return fmt.Sprintf("case %q NOT RUN (%s): %s", c.Name, c.NotRun, c.Message)
		}
	}
	return ""
}

// SetUnreachable gives the run the UNREACHABLE verdict: the implementation
// could not be reached, why says so, and nothing was tested (no rule is a
// reason for INCOMPLETE then: none could run).
func (r *Result) SetUnreachable(why string) {
	r.Verdict, r.SetupError, r.IncompleteBecause = Unreachable, why, nil
	for i := range r.Rules {
		r.Rules[i].Incomplete = ""
	}
}

// Settle gives a rule that did not run the verdict of a check the suite ran
// outside its specs (e.g. the cleanup check of a run cut by a signal): the
// case replaces the rule's cases, the rule is decided again and the run
// concluded again with the book's policy. A rule that ran keeps its
// verdict.
func (b *Book) Settle(r *Result, id string, c CaseResult) {
	for i := range r.Rules {
		rr := &r.Rules[i]
		if rr.ID != id || rr.Verdict != VerdictNotRun {
			continue
		}
		rr.Cases = []CaseResult{c}
		rr.Duration = c.Duration
		rr.NotRun, rr.Reason = "", ""
		decide(rr)
		if rr.Reason == "" {
			rr.Reason = c.Name
		}
		r.conclude(b.Incomplete)
	}
}
