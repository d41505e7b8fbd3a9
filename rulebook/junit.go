package rulebook

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// The JUnit XML report: one testcase per rule, with the rule's verdict, and
// one more for a run that is INCOMPLETE or UNREACHABLE, so that a CI reading
// JUnit the way Jenkins and GitLab do (failures + errors > 0 is red) shows
// exactly what the exit status says:
//
//	FAIL                                  failure
//	NOT RUN that keeps the run INCOMPLETE error (the rule could not be run)
//	NOT RUN otherwise (filtered out, ...)  skipped
//	SKIP, NOT SUPPORTED                   skipped
//	PASS, INFO, WARN                      passed, the reason in system-out
//	an INCOMPLETE or UNREACHABLE run      a failing testcase of its own

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Status    string        `xml:"status,attr"`
	Failure   *junitMessage `xml:"failure"`
	Error     *junitMessage `xml:"error"`
	Skipped   *junitMessage `xml:"skipped"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// junitCaseOf is a rule's testcase: its verdict as a JUnit outcome.
func junitCaseOf(suite string, rr RuleResult) junitCase {
	c := junitCase{Name: rr.Text(), Classname: suite, Time: seconds(rr.Duration), Status: "passed"}
	if rr.Area != "" {
		c.Classname += "." + rr.Area
	}
	word := string(rr.Verdict)
	if rr.Verdict == VerdictNotRun {
		word += " (" + string(rr.NotRun) + ")"
	}
	msg := &junitMessage{Type: word, Message: rr.Reason, Text: caseDetails(rr)}
	switch {
	case rr.Verdict == VerdictFail:
		c.Status, c.Failure = "failed", msg
	case rr.Verdict == VerdictNotRun && rr.Incomplete != "" && rr.NotRun != NotRunFiltered:
		c.Status, c.Error = "error", msg
	case rr.Verdict == VerdictNotRun || rr.Verdict == VerdictSkip || rr.Verdict == VerdictNotSup:
		c.Status, c.Skipped = "skipped", msg
	default:
		c.SystemOut = strings.TrimSpace(strings.Join(append([]string{rr.Reason}, rr.Notes...), "\n"))
		if c.SystemOut != "" {
			c.SystemOut = word + ": " + c.SystemOut
		}
	}
	if c.SystemOut == "" && rr.Incomplete != "" {
		c.SystemOut = "keeps the run from CONFORMS: " + rr.Incomplete
	}
	return c
}

// caseDetails lists a rule's cases that did not pass, with their messages.
func caseDetails(rr RuleResult) string {
	var b strings.Builder
	for _, c := range rr.Cases {
		if c.Verdict == VerdictPass || c.Verdict == VerdictInfo {
			continue
		}
		fmt.Fprintf(&b, "%s: %s", c.Verdict, c.Name)
		if c.Location != "" {
			fmt.Fprintf(&b, " (%s)", c.Location)
		}
		if c.Message != "" {
			fmt.Fprintf(&b, "\n  %s", strings.ReplaceAll(c.Message, "\n", "\n  "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// runCase is the testcase of a run whose verdict no rule's testcase shows:
// INCOMPLETE (nothing failed, yet the run cannot vouch for conformance) or
// UNREACHABLE (nothing could be tested); nil otherwise.
func (r *Result) runCase() *junitCase {
	c := junitCase{Classname: r.Suite, Time: seconds(r.Duration), Status: "failed"}
	switch r.Verdict {
	case Incomplete:
		c.Name = "[VERDICT] INCOMPLETE: a rule that must run did not, so the run does not vouch for conformance"
		c.Failure = &junitMessage{Type: string(Incomplete), Message: fmt.Sprintf("%d rules keep the run from CONFORMS", len(r.IncompleteBecause)),
			Text: strings.Join(r.IncompleteBecause, "\n")}
	case Unreachable:
		c.Name = "[VERDICT] UNREACHABLE: the implementation could not be reached, nothing was tested"
		c.Failure = &junitMessage{Type: string(Unreachable), Message: r.SetupError}
	default:
		return nil
	}
	return &c
}

// WriteJUnit writes the JUnit XML report of the result.
func (r *Result) WriteJUnit(w io.Writer) error {
	r = r.shown()
	s := junitSuite{Name: r.Suite, Time: seconds(r.Duration), Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05")}
	s.Properties = append(s.Properties, junitProperty{"verdict", string(r.Verdict)}, junitProperty{"endpoint", r.Endpoint})
	for _, l := range r.header() {
		if l.Name != "endpoint" && l.Name != "verdict" {
			s.Properties = append(s.Properties, junitProperty{l.Name, l.Value})
		}
	}
	for _, rr := range r.Rules {
		s.Cases = append(s.Cases, junitCaseOf(r.Suite, rr))
	}
	if c := r.runCase(); c != nil {
		s.Cases = append(s.Cases, *c)
	}
	for _, c := range s.Cases {
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
	all := junitSuites{Name: r.Suite, Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Time: s.Time, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
