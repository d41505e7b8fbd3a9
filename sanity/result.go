package sanity

import (
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// Verdict is the outcome of one rule.
type Verdict string

// Verdicts, from worst to best.
const (
	VerdictFail   Verdict = "FAIL"          // a MUST (or, when strict, a SHOULD) was not met
	VerdictWarn   Verdict = "WARN"          // a SHOULD was not met
	VerdictPass   Verdict = "PASS"          // every case met the rule
	VerdictInfo   Verdict = "INFO"          // an INFO rule: observations only
	VerdictSkip   Verdict = "SKIP"          // every case was skipped, with a reason
	VerdictNotSup Verdict = "NOT SUPPORTED" // the driver legitimately lacks what the rule needs (its profile says so)
	VerdictNotRun Verdict = "NOT RUN"       // filtered out by labels, focus or skip
)

// Result is the verdict of a whole run, what the reports are made from.
type Result struct {
	Endpoint     string            `json:"endpoint"`
	Seed         int64             `json:"seed"`
	DriverName   string            `json:"driverName"`
	DriverVer    string            `json:"driverVersion"`
	Manifest     map[string]string `json:"manifest,omitempty"`
	Capabilities []string          `json:"capabilities"`
	SetupError   string            `json:"setupError,omitempty"`
	Profile      Profile           `json:"profile"`
	Strict       bool              `json:"strict"`
	Started      time.Time         `json:"started"`
	Duration     time.Duration     `json:"duration"`
	Rules        []RuleResult      `json:"rules"`
	Calls        int               `json:"calls"`
	// StateSource is where the state rules read the fences from:
	// ListClusterFence, the observe command, or none.
	StateSource string `json:"stateSource"`
	// Core is the verdict over the MUST rules; Extended also needs every
	// SHOULD rule met and the opt-in rules (restart, destructive) run.
	Core     string `json:"core"`
	Extended string `json:"extended"`
}

// Profile-report verdict words.
const (
	ConformsWord   = "CONFORMS"
	NotConformWord = "DOES NOT CONFORM"
	IncompleteWord = "INCOMPLETE"
)

// rollUp computes the core and extended verdicts.
func (r *Result) rollUp() {
	r.Core, r.Extended = ConformsWord, ConformsWord
	var unmet, notRun []string
	for _, rr := range r.Rules {
		switch {
		case rr.Verdict == VerdictFail && rr.Level == Must:
			r.Core = NotConformWord
		case rr.Verdict == VerdictFail || rr.Verdict == VerdictWarn:
			unmet = append(unmet, rr.ID)
		case rr.Verdict == VerdictSkip || rr.Verdict == VerdictNotRun:
			notRun = append(notRun, rr.ID)
		}
	}
	switch {
	case r.Core != ConformsWord || len(unmet) > 0:
		r.Extended = NotConformWord
		if len(unmet) > 0 {
			r.Extended += " (" + strings.Join(unmet, ", ") + ")"
		}
	case len(notRun) > 0:
		r.Extended = IncompleteWord + " (skipped or not run: " + strings.Join(notRun, ", ") + ")"
	}
}

// RuleResult is the verdict of one rule with its cases.
type RuleResult struct {
	Rule
	Verdict  Verdict       `json:"verdict"`
	Reason   string        `json:"reason,omitempty"`
	Notes    []string      `json:"notes,omitempty"`
	Cases    []CaseResult  `json:"cases"`
	Duration time.Duration `json:"duration"`
}

// CaseResult is one Ginkgo spec of a rule (a table rule has several).
type CaseResult struct {
	Name     string        `json:"name"`
	State    string        `json:"state"`
	Message  string        `json:"message,omitempty"`
	Location string        `json:"location,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Passed reports whether the run conforms: no MUST rule failed (and, when
// strict, no SHOULD rule either).
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

func buildResult(s *State, rep types.Report) *Result {
	res := &Result{
		Endpoint: s.cfg.Endpoint, Seed: s.Seed, Profile: s.cfg.Profile, Strict: s.cfg.Strict,
		Started: rep.StartTime, Duration: rep.RunTime, Calls: len(s.Calls()),
		Capabilities: capNames(s.Caps),
	}
	if s.Identity != nil {
		res.DriverName, res.DriverVer, res.Manifest = s.Identity.GetName(), s.Identity.GetVendorVersion(), s.Identity.GetManifest()
	}
	if s.setupErr != nil {
		res.SetupError = redact(s.setupErr.Error())
	} else if s.fc != nil {
		res.StateSource = s.stateSource()
	}
	index := map[string]int{}
	for _, r := range s.rules {
		if _, dup := index[r.ID]; !dup {
			index[r.ID] = len(res.Rules)
			res.Rules = append(res.Rules, RuleResult{Rule: r})
		}
	}
	for _, sp := range rep.SpecReports {
		if sp.LeafNodeType != types.NodeTypeIt {
			continue
		}
		var rr *RuleResult
		for _, l := range sp.Labels() {
			if i, ok := index[l]; ok {
				rr = &res.Rules[i]
				break
			}
		}
		if rr == nil {
			continue
		}
		c := CaseResult{Name: sp.LeafNodeText, State: sp.State.String(), Duration: sp.RunTime}
		if sp.State.Is(types.SpecStateFailureStates) || sp.State == types.SpecStateSkipped {
			c.Message = redact(strings.TrimSpace(sp.Failure.Message))
			if sp.State.Is(types.SpecStateFailureStates) {
				c.Location = sp.Failure.Location.String()
			}
		}
		for _, e := range sp.ReportEntries {
			switch e.Name {
			case entryWarning:
				c.Message = redact(e.StringRepresentation())
				c.State = "warned"
			case entryNote:
				rr.Notes = append(rr.Notes, redact(e.StringRepresentation()))
			}
		}
		rr.Cases = append(rr.Cases, c)
		rr.Duration += sp.RunTime
	}
	for i := range res.Rules {
		res.Rules[i].Verdict, res.Rules[i].Reason = verdict(&res.Rules[i])
	}
	res.rollUp()
	return res
}

// verdict folds a rule's cases into one verdict and its reason.
func verdict(rr *RuleResult) (Verdict, string) {
	var failed, warned, skipped, ran []CaseResult
	for _, c := range rr.Cases {
		switch {
		case c.State == "warned":
			warned = append(warned, c)
		case c.State == "skipped" && c.Message == "":
		case c.State == "skipped":
			skipped = append(skipped, c)
		case c.State == "passed":
			ran = append(ran, c)
		default:
			failed = append(failed, c)
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
		return VerdictFail, first(failed)
	case len(warned) > 0:
		return VerdictWarn, first(warned)
	case len(ran) > 0 && rr.Level == Info:
		return VerdictInfo, strings.Join(rr.Notes, "; ")
	case len(ran) > 0:
		if len(skipped) > 0 {
			return VerdictPass, "some cases skipped: " + first(skipped)
		}
		return VerdictPass, ""
	case len(skipped) > 0 && strings.HasPrefix(skipped[0].Message, notSupportedPrefix):
		return VerdictNotSup, strings.TrimPrefix(first(skipped), notSupportedPrefix)
	case len(skipped) > 0:
		return VerdictSkip, first(skipped)
	}
	return VerdictNotRun, "not selected by the label filter, focus or skip"
}

// Verdicts lists every verdict, worst first, for summaries.
var Verdicts = []Verdict{VerdictFail, VerdictWarn, VerdictPass, VerdictInfo, VerdictNotSup, VerdictSkip, VerdictNotRun}
