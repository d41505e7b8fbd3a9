package rulebook

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Selection is how a run was narrowed, as Ginkgo's --label-filter, --focus
// and --skip do.
type Selection struct {
	LabelFilter string
	Focus, Skip []string
}

// Check refuses a label filter or a focus/skip expression that does not
// parse, before anything runs (Ginkgo would otherwise end the run).
func (sel Selection) Check() error {
	_, err := sel.compile("")
	return err
}

// compile returns whether a spec is selected, the way Ginkgo decides it:
// its labels pass the filter, its text (after the suite description)
// matches a focus and no skip.
func (sel Selection) compile(description string) (func(types.SpecReport) bool, error) {
	labels := func([]string) bool { return true }
	if sel.LabelFilter != "" {
		f, err := types.ParseLabelFilter(sel.LabelFilter)
		if err != nil {
			return nil, fmt.Errorf("--label-filter %q: %v", sel.LabelFilter, err)
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
func (s *Suite) Fold(rep types.Report, sel Selection) *Result {
	b := s.book
	res := &Result{Suite: b.Title, Strict: s.o.Strict, Started: rep.StartTime, Duration: rep.RunTime}
	res.Rules = make([]RuleResult, len(b.rules))
	for i, r := range b.rules {
		res.Rules[i].Rule = r
	}
	selected, err := sel.compile(rep.SuiteDescription)
	if err != nil {
		selected = func(types.SpecReport) bool { return true }
	}
	cut := notRunCause(rep)
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

// notRunCause is why the selected specs that never started did not: the run
// was interrupted, or its time budget ran out.
func notRunCause(rep types.Report) NotRunKind {
	for _, why := range rep.SpecialSuiteFailureReasons {
		switch {
		case strings.Contains(why, "Interrupted"):
			return NotRunInterrupted
		case strings.Contains(why, "Timeout"):
			return NotRunBudget
		}
	}
	return NotRunFiltered
}

// foldCase turns one spec report into a case of its rule.
func (s *Suite) foldCase(sp types.SpecReport, selected func(types.SpecReport) bool, cut NotRunKind) CaseResult {
	c := CaseResult{Name: sp.LeafNodeText, State: sp.State.String(), Duration: sp.RunTime}
	started, outcome, warning := false, "", ""
	for _, e := range sp.ReportEntries {
		switch e.Name {
		case entryRule:
			started = true
		case entryOutcome:
			outcome = e.StringRepresentation()
		case entryWarning:
			warning = e.StringRepresentation()
		}
	}
	msg := s.redact(strings.TrimSpace(sp.Failure.Message))
	switch {
	case warning != "":
		c.Verdict, c.Message, c.State = VerdictWarn, s.redact(warning), "warned"
	case sp.State.Is(types.SpecStateFailureStates):
		c.Verdict, c.Message, c.Location = VerdictFail, msg, sp.Failure.Location.String()
	case sp.State == types.SpecStatePassed:
		c.Verdict = VerdictPass
	case sp.State == types.SpecStateSkipped && outcome == outcomeNotSupported:
		c.Verdict, c.Message = VerdictNotSup, strings.TrimPrefix(msg, outcomeNotSupported+": ")
	case sp.State == types.SpecStateSkipped && outcome == outcomeDependency:
		c.Verdict, c.NotRun, c.Message = VerdictNotRun, NotRunDependency, strings.TrimPrefix(msg, outcomeDependency+": ")
	case sp.State == types.SpecStateSkipped && msg != "":
		c.Verdict, c.Message = VerdictSkip, msg
	default: // never started: filtered out, or cut by the budget or a signal
		c.Verdict, c.NotRun = VerdictNotRun, NotRunFiltered
		if !started && selected(sp) {
			c.NotRun = cut
		}
	}
	return c
}

// decide folds a rule's cases into one verdict and its reason.
func decide(rr *RuleResult) {
	var failed, warned, passed, skipped, notRun []CaseResult
	for _, c := range rr.Cases {
		switch c.Verdict {
		case VerdictFail:
			failed = append(failed, c)
		case VerdictWarn:
			warned = append(warned, c)
		case VerdictPass:
			passed = append(passed, c)
		case VerdictNotRun:
			if c.NotRun == NotRunDependency {
				skipped = append(skipped, c)
			} else {
				notRun = append(notRun, c)
			}
		default:
			skipped = append(skipped, c)
		}
	}
	first := func(cs []CaseResult) string {
		if len(rr.Cases) > 1 {
			return cs[0].Name + ": " + cs[0].Message
		}
		return cs[0].Message
	}
	switch {
	case len(failed) > 0:
		rr.Verdict, rr.Reason = VerdictFail, first(failed)
	case len(warned) > 0:
		rr.Verdict, rr.Reason = VerdictWarn, first(warned)
	case len(passed) > 0 && rr.Level == Info:
		rr.Verdict, rr.Reason = VerdictInfo, strings.Join(rr.Notes, "; ")
	case len(passed) > 0:
		rr.Verdict = VerdictPass
		if len(skipped) > 0 {
			rr.Reason = "some cases skipped: " + first(skipped)
		}
	case len(skipped) > 0:
		rr.Verdict, rr.NotRun, rr.Reason = skipped[0].Verdict, skipped[0].NotRun, first(skipped)
	default:
		rr.Verdict, rr.NotRun = VerdictNotRun, NotRunFiltered
		if len(notRun) > 0 {
			rr.NotRun = notRun[0].NotRun
		}
		rr.Reason = rr.NotRun.Reason()
	}
}
