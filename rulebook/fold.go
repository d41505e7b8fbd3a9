package rulebook

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Selection is how a run was narrowed, as Ginkgo's --label-filter, --focus
// and --skip do.
type Selection struct {
	LabelFilter string   `json:"labelFilter,omitempty"`
	Focus       []string `json:"focus,omitempty"`
	Skip        []string `json:"skip,omitempty"`
}

// String says how the run was narrowed, as the flags spell it; "" for a
// run of every rule.
func (sel Selection) String() string {
	var parts []string
	if sel.LabelFilter != "" {
		parts = append(parts, fmt.Sprintf("--label-filter %q", sel.LabelFilter))
	}
	for _, f := range sel.Focus {
		parts = append(parts, fmt.Sprintf("--focus %q", f))
	}
	for _, f := range sel.Skip {
		parts = append(parts, fmt.Sprintf("--skip %q", f))
	}
	return strings.Join(parts, " ")
}

// Check refuses a label filter or a focus/skip expression that does not
// parse, before anything runs (Ginkgo would otherwise end the run).
func (sel Selection) Check() error {
	_, err := sel.compile("")
	return err
}

// ansi matches a terminal colour sequence.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// compile returns whether a spec is selected, the way Ginkgo decides it:
// its labels pass the filter, its text (after the suite description)
// matches a focus and no skip.
func (sel Selection) compile(description string) (func(types.SpecReport) bool, error) {
	labels := func([]string) bool { return true }
	if sel.LabelFilter != "" {
		f, err := types.ParseLabelFilter(sel.LabelFilter)
		if err != nil {
			// Ginkgo colours its parse errors; a flag's error is plain text.
			return nil, fmt.Errorf("--label-filter %q: %s", sel.LabelFilter, ansi.ReplaceAllString(err.Error(), ""))
		}
		labels = f
	}
	for _, re := range append(append([]string{}, sel.Focus...), sel.Skip...) {
		if _, err := regexp.Compile(re); err != nil {
			return nil, fmt.Errorf("--focus/--skip %q: %v", re, err)
		}
	}
	var focus, skip *regexp.Regexp
	if len(sel.Focus) > 0 {
		focus = regexp.MustCompile(strings.Join(sel.Focus, "|"))
	}
	if len(sel.Skip) > 0 {
		skip = regexp.MustCompile(strings.Join(sel.Skip, "|"))
	}
	return func(sp types.SpecReport) bool {
		text := description + " " + sp.FullText()
		return labels(sp.Labels()) && (focus == nil || focus.MatchString(text)) && (skip == nil || !skip.MatchString(text))
	}, nil
}

// Fold builds the result of a run from its Ginkgo report: every rule of the
// book in table order, with the specs labelled with its ID as its cases.
// How a case ended is read from its run state (the typed outcome its body
// recorded) and Ginkgo's typed spec state; why a run was cut, from the
// suite's own record of it.
func (s *Suite) Fold(rep types.Report, sel Selection) *Result {
	b := s.book
	res := &Result{Suite: b.Title, Strict: s.o.Strict, Started: rep.StartTime, Duration: rep.RunTime, Selection: sel}
	res.Rules = make([]RuleResult, len(b.rules))
	for i, r := range b.rules {
		res.Rules[i].Rule = r
	}
	selected, err := sel.compile(rep.SuiteDescription)
	if err != nil {
		selected = func(types.SpecReport) bool { return true }
	}
	cut := s.cutKind()
	for _, sp := range rep.SpecReports {
		if sp.LeafNodeType != types.NodeTypeIt {
			continue
		}
		i, ok := s.ruleOf(sp.Labels())
		if !ok {
			continue
		}
		rr := &res.Rules[i]
		c := s.foldCase(sp, selected, cut)
		for _, e := range sp.ReportEntries {
			if e.Name == entryNote {
				rr.Notes = append(rr.Notes, s.redact(e.StringRepresentation()))
			}
		}
		rr.Cases = append(rr.Cases, c)
		rr.Duration += sp.RunTime
	}
	for i := range res.Rules {
		decide(&res.Rules[i])
	}
	res.conclude(b.Incomplete)
	return res
}

// ruleOf finds the rule a spec belongs to by its labels.
func (s *Suite) ruleOf(labels []string) (int, bool) {
	for _, l := range labels {
		if i, ok := s.book.index[l]; ok {
			return i, true
		}
	}
	return 0, false
}

func (s *Suite) redact(msg string) string {
	if s.o.Redact == nil {
		return msg
	}
	return s.o.Redact(msg)
}

// caseOf is the run state the engine attached to a spec, nil when its body
// never started.
func caseOf(sp types.SpecReport) *caseRun {
	for _, e := range sp.ReportEntries {
		if c, ok := e.GetRawValue().(*caseRun); ok && e.Name == entryCase {
			return c
		}
	}
	return nil
}

// notStarted is the reason of a selected case the suite never started in a
// run that was not cut.
const notStarted = "the suite did not start this case: a setup step before it failed"

// foldCase turns one spec report into a case of its rule.
func (s *Suite) foldCase(sp types.SpecReport, selected func(types.SpecReport) bool, cut NotRunKind) CaseResult {
	c := CaseResult{Name: sp.LeafNodeText, State: sp.State.String(), Duration: sp.RunTime}
	run := caseOf(sp)
	var o *outcome
	if run != nil {
		o = run.ended()
	}
	switch {
	case sp.State == types.SpecStateInterrupted || sp.State == types.SpecStateTimedout:
		// Cut while it ran by the run's timeout or a signal: what it saw
		// before is no verdict.
		kind := cut
		switch {
		case kind != "":
		case sp.State == types.SpecStateTimedout:
			kind = NotRunBudget
		default:
			kind = NotRunInterrupted
		}
		c.Verdict, c.NotRun, c.Message = VerdictNotRun, kind, kind.During()
	case o != nil && o.Verdict == VerdictWarn:
		c.Verdict, c.Message, c.State = VerdictWarn, s.redact(o.Reason), "warned"
	case sp.State.Is(types.SpecStateFailureStates):
		c.Verdict, c.Message, c.Location = VerdictFail, s.redact(strings.TrimSpace(sp.Failure.Message)), sp.Failure.Location.String()
	case sp.State == types.SpecStatePassed:
		c.Verdict = VerdictPass
	case o != nil:
		c.Verdict, c.NotRun, c.Message = o.Verdict, o.NotRun, s.redact(o.Reason)
	case run != nil: // a body that called ginkgo.Skip itself
		c.Verdict, c.Message = VerdictSkip, s.redact(strings.TrimSpace(sp.Failure.Message))
	case !selected(sp):
		c.Verdict, c.NotRun = VerdictNotRun, NotRunFiltered
	case cut != "":
		c.Verdict, c.NotRun = VerdictNotRun, cut
	default:
		c.Verdict, c.NotRun, c.Message = VerdictNotRun, NotRunDependency, notStarted
	}
	return c
}

// decide folds a rule's cases into one verdict and its reason: any failed
// case fails it, then any warned case warns it; a rule with passed cases
// passes (naming the cases that did not run); otherwise it takes the
// verdict of its most telling case that did not run.
func decide(rr *RuleResult) {
	var failed, warned, passed, others []CaseResult
	for _, c := range rr.Cases {
		switch c.Verdict {
		case VerdictFail:
			failed = append(failed, c)
		case VerdictWarn:
			warned = append(warned, c)
		case VerdictPass:
			passed = append(passed, c)
		default:
			others = append(others, c)
		}
	}
	// The cases that did not run, most telling first: cut or missing a
	// dependency, then skipped, not supported, filtered out.
	rank := func(c CaseResult) int {
		switch {
		case c.Verdict == VerdictNotRun && c.NotRun != NotRunFiltered:
			return 0
		case c.Verdict == VerdictSkip:
			return 1
		case c.Verdict == VerdictNotSup:
			return 2
		}
		return 3
	}
	slices.SortStableFunc(others, func(a, b CaseResult) int { return rank(a) - rank(b) })
	why := func(c CaseResult) string {
		msg := c.Message
		if msg == "" && c.Verdict == VerdictNotRun {
			msg = c.NotRun.Reason()
		}
		if len(rr.Cases) > 1 {
			return c.Name + ": " + msg
		}
		return msg
	}
	switch {
	case len(failed) > 0:
		rr.Verdict, rr.Reason = VerdictFail, why(failed[0])
	case len(warned) > 0:
		rr.Verdict, rr.Reason = VerdictWarn, why(warned[0])
	case len(passed) > 0 && rr.Level == Info:
		rr.Verdict, rr.Reason = VerdictInfo, strings.Join(rr.Notes, "; ")
	case len(passed) > 0:
		rr.Verdict = VerdictPass
		if len(others) > 0 {
			rr.Reason = fmt.Sprintf("%d of %d cases did not run; %s", len(others), len(rr.Cases), why(others[0]))
		}
	case len(others) > 0:
		rr.Verdict, rr.NotRun, rr.Reason = others[0].Verdict, others[0].NotRun, why(others[0])
	default:
		rr.Verdict, rr.NotRun = VerdictNotRun, NotRunFiltered
		rr.Reason = rr.NotRun.Reason()
	}
}
