package reportindex

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// conformance is what the front page reads of a conformance suite's JSON
// report (sanity.json, csiproxy.json): the run's verdict, computed once by
// the suite (the one its exit status, terminal, reports and JUnit say), and
// the rules' verdicts for the figure.
type conformance struct {
	Verdict   string        `json:"verdict"`
	Driver    string        `json:"driverName"`
	Duration  time.Duration `json:"duration"`
	Setup     string        `json:"setupError"`
	Selection struct {
		LabelFilter string   `json:"labelFilter"`
		Focus       []string `json:"focus"`
		Skip        []string `json:"skip"`
	} `json:"selection"`
	Rules []struct {
		ID      string `json:"id"`
		Level   string `json:"level"`
		Verdict string `json:"verdict"`
		NotRun  string `json:"notRun"`
	} `json:"rules"`
}

// runStates colour a run verdict: a run that cannot vouch for conformance
// (INCOMPLETE: cut, filtered, missing what a rule needs) is never green.
var runStates = map[string]State{"CONFORMS": Passed, "DOES NOT CONFORM": Failed, "INCOMPLETE": Incomplete, "UNREACHABLE": Failed}

// readConformance reads the run verdict of a conformance report, with the
// MUST rules' verdicts, how the run was narrowed and what it ran against as
// its figure.
func readConformance(data []byte) (Line, error) {
	var c conformance
	if err := json.Unmarshal(data, &c); err != nil {
		return Line{}, err
	}
	st, ok := runStates[c.Verdict]
	if !ok {
		return Line{}, fmt.Errorf("no run verdict (verdict %q)", c.Verdict)
	}
	var mustFailed, mustOther []string
	must, mustPassed, filtered := 0, 0, 0
	for _, r := range c.Rules {
		if r.Verdict == "NOT RUN" && r.NotRun == "filtered" {
			filtered++
		}
		if r.Level != "MUST" {
			continue
		}
		must++
		switch r.Verdict {
		case "PASS":
			mustPassed++
		case "FAIL":
			mustFailed = append(mustFailed, r.ID)
		default:
			mustOther = append(mustOther, r.ID+" "+r.Verdict)
		}
	}
	var parts []string
	if c.Setup != "" {
		parts = append(parts, "setup: "+c.Setup)
	}
	parts = append(parts, fmt.Sprintf("%d of %d MUST rules pass", mustPassed, must))
	if len(mustFailed) > 0 {
		parts = append(parts, "failed: "+strings.Join(mustFailed, ", "))
	}
	if filtered > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d rules selected (%s)", len(c.Rules)-filtered, len(c.Rules), selectionText(c.Selection.LabelFilter, c.Selection.Focus, c.Selection.Skip)))
	} else if len(mustOther) > 0 {
		parts = append(parts, "not passed: "+clipList(mustOther, 8))
	}
	if c.Driver != "" {
		parts = append(parts, "driver "+c.Driver)
	}
	if c.Duration > 0 {
		parts = append(parts, "in "+c.Duration.Round(time.Millisecond).String())
	}
	return Line{Verdict: c.Verdict, State: st, Figure: strings.Join(parts, "; ")}, nil
}

// selectionText says how a run was narrowed, as the flags spell it.
func selectionText(filter string, focus, skip []string) string {
	var out []string
	if filter != "" {
		out = append(out, fmt.Sprintf("--label-filter %q", filter))
	}
	for _, f := range focus {
		out = append(out, fmt.Sprintf("--focus %q", f))
	}
	for _, f := range skip {
		out = append(out, fmt.Sprintf("--skip %q", f))
	}
	return strings.Join(out, " ")
}

// clipList joins at most n items and says how many more there are.
func clipList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// caseID finds a stable case ID (FENCING-003, ISOLATION-014) in a test name.
var caseID = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(-[A-Z][A-Z0-9]*)*-[0-9]{3}\b`)

type junitCases struct {
	Suites []struct {
		Time  float64 `xml:"time,attr"`
		Cases []struct {
			Name    string    `xml:"name,attr"`
			Status  string    `xml:"status,attr"`
			Failure *struct{} `xml:"failure"`
			Error   *struct{} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// readJUnit reads a JUnit report's testcases, counted as unit ("cases",
// "suites"). Testcases sharing a case ID count once (failed if any failed,
// skipped if all were skipped); Ginkgo's suite nodes ([BeforeSuite], ...)
// count only when they failed.
func readJUnit(unit string) func([]byte) (Line, error) {
	return func(data []byte) (Line, error) {
		var j junitCases
		// A lone <testsuite> has no <testsuites> around it.
		if !strings.Contains(string(data), "<testsuites") {
			data = []byte("<testsuites>" + string(data) + "</testsuites>")
		}
		if err := xml.Unmarshal(data, &j); err != nil {
			return Line{}, err
		}
		type outcome struct{ failed, ran bool }
		byKey := map[string]*outcome{}
		var keys []string
		var seconds float64
		for _, s := range j.Suites {
			seconds += s.Time
			for _, c := range s.Cases {
				failed := c.Failure != nil || c.Error != nil ||
					(c.Status != "" && c.Status != "passed" && c.Status != "skipped" && c.Status != "pending")
				skipped := c.Skipped != nil || c.Status == "skipped" || c.Status == "pending"
				key := caseID.FindString(c.Name)
				if key == "" {
					key = c.Name
					if strings.HasPrefix(key, "[") && !failed {
						continue // a Ginkgo suite node that passed
					}
				}
				o := byKey[key]
				if o == nil {
					o = &outcome{}
					byKey[key] = o
					keys = append(keys, key)
				}
				o.failed = o.failed || failed
				o.ran = o.ran || !skipped
			}
		}
		if len(keys) == 0 {
			return Line{}, fmt.Errorf("no testcases")
		}
		var failed, skipped []string
		passed := 0
		for _, k := range keys {
			switch o := byKey[k]; {
			case o.failed:
				failed = append(failed, k)
			case !o.ran:
				skipped = append(skipped, k)
			default:
				passed++
			}
		}
		l := Line{Verdict: "PASS", State: Passed}
		if len(failed) > 0 {
			l.Verdict, l.State = "FAIL", Failed
		}
		parts := []string{fmt.Sprintf("%d of %d %s passed", passed, len(keys), unit)}
		if len(failed) > 0 {
			parts = append(parts, "failed: "+strings.Join(failed, ", "))
		}
		if len(skipped) > 0 {
			parts = append(parts, "skipped: "+strings.Join(skipped, ", "))
		}
		if seconds >= 1 {
			parts = append(parts, fmt.Sprintf("in %.0f s", seconds))
		}
		l.Figure = strings.Join(parts, "; ")
		return l, nil
	}
}

// simCompare is sim-compare.json (cmd/fenceproof simcompare_json.go).
type simCompare struct {
	Scenarios  int `json:"scenarios"`
	RandomRuns int `json:"randomRuns"`
	Policies   []struct {
		Policy        string `json:"policy"`
		Runs          int    `json:"runs"`
		ViolatingRuns int    `json:"violatingRuns"`
	} `json:"policies"`
	Unexpected []string `json:"unexpected"`
}

// readSimCompare: the comparison passes when every scripted verdict is the
// expected one and the safe policy broke nothing; the figure is each
// policy's runs that broke an invariant, best first.
func readSimCompare(data []byte) (Line, error) {
	var c simCompare
	if err := json.Unmarshal(data, &c); err != nil {
		return Line{}, err
	}
	if len(c.Policies) == 0 {
		return Line{}, fmt.Errorf("no policies")
	}
	var ps []string
	for _, p := range c.Policies {
		ps = append(ps, fmt.Sprintf("%s %d/%d", p.Policy, p.ViolatingRuns, p.Runs))
	}
	l := Line{Verdict: "PASS", State: Passed,
		Figure: fmt.Sprintf("runs that broke an invariant (%d scenarios + %d random schedules): %s", c.Scenarios, c.RandomRuns, strings.Join(ps, ", "))}
	if len(c.Unexpected) > 0 {
		l.Verdict, l.State = "FAIL", Failed
		l.Figure = fmt.Sprintf("%d unexpected: %s; %s", len(c.Unexpected), strings.Join(c.Unexpected, "; "), l.Figure)
	}
	return l, nil
}
