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
	NotRun   NotRunKind    `json:"notRun,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Notes    []string      `json:"notes,omitempty"`
	Cases    []CaseResult  `json:"cases"`
	Duration time.Duration `json:"duration"`
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
	Rules      []RuleResult  `json:"rules"`
	// Core is the verdict over the MUST rules; Extended also needs every
	// SHOULD rule met and every rule run.
	Core     string `json:"core"`
	Extended string `json:"extended"`
	// Verdict is the run's verdict, the one the exit status reports.
	Verdict RunVerdict `json:"verdict"`
	// IncompleteBecause are the reasons of an INCOMPLETE verdict.
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

// conclude computes the core, extended and run verdicts from the rules.
func (r *Result) conclude(incomplete func(RuleResult) string) {
	r.Core, r.Extended = string(Conforms), string(Conforms)
	var unmet, notRun []string
	for _, rr := range r.Rules {
		switch {
		case rr.Verdict == VerdictFail && rr.Level == Must:
			r.Core = string(DoesNotConform)
		case rr.Verdict == VerdictFail || rr.Verdict == VerdictWarn:
			unmet = append(unmet, rr.ID)
		case rr.Verdict == VerdictSkip || rr.Verdict == VerdictNotRun:
			notRun = append(notRun, rr.ID)
		}
	}
	switch {
	case r.Core != string(Conforms) || len(unmet) > 0:
		r.Extended = string(DoesNotConform)
		if len(unmet) > 0 {
			r.Extended += " (" + strings.Join(unmet, ", ") + ")"
		}
	case len(notRun) > 0:
		r.Extended = string(Incomplete) + " (skipped or not run: " + strings.Join(notRun, ", ") + ")"
	}
	r.IncompleteBecause = nil
	if incomplete != nil {
		for _, rr := range r.Rules {
			if why := incomplete(rr); why != "" {
				r.IncompleteBecause = append(r.IncompleteBecause, rr.ID+": "+why)
			}
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
