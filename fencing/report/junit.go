package report

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/fenceproof/fenceproof/fencing/judge"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit is junit.xml: a test case "setup" (the run reached the judge) and
// one per check; a broken promise is a failure, an undecidable or
// incomplete one an error, a check that does not apply skipped.
func JUnit(r *Run) ([]byte, error) {
	s := junitSuite{Name: "fenceproof fencing " + r.Meta.Mode, Time: strconv.FormatFloat(float64(r.Meta.EndNs-r.Meta.StartNs)/1e9, 'f', 3, 64)}
	setup := junitCase{Name: "setup: writers, clocks, fence, read-back", Classname: "fencing"}
	if r.Result == nil {
		setup.Error = &junitMessage{Message: r.Status + ": " + r.Reason, Type: r.Status, Text: strings.Join(r.Leftovers, "\n")}
	}
	s.Cases = append(s.Cases, setup)
	for _, c := range judge.Checks {
		jc := junitCase{Name: c.ID + ": " + c.Title, Classname: "fencing." + c.ID}
		switch {
		case r.Result == nil:
			jc.Skipped = &junitMessage{Message: "not judged: the run ended before the judge"}
		case c.ID == "workload-moved" && r.Input.Moved == "":
			jc.Skipped = &junitMessage{Message: "the DR rehearsal only"}
		default:
			sev := r.Result.Checks[c.ID]
			var lines []string
			for _, f := range r.Result.Findings {
				if f.Check == c.ID && f.Severity == sev && len(lines) < 50 {
					lines = append(lines, f.String()+"\n  "+f.Evidence)
				}
			}
			msg := &junitMessage{Message: fmt.Sprintf("%s: %d findings", strings.ToUpper(string(sev)), len(lines)), Type: string(sev), Text: strings.Join(lines, "\n")}
			switch sev {
			case judge.SevFail:
				jc.Failure = msg
			case judge.SevUndecidable, judge.SevIncomplete:
				jc.Error = msg
			}
		}
		s.Cases = append(s.Cases, jc)
	}
	if len(r.Leftovers) > 0 {
		s.Cases = append(s.Cases, junitCase{Name: "cleanup: nothing left behind", Classname: "fencing",
			Failure: &junitMessage{Message: "cleanup left things behind", Text: strings.Join(r.Leftovers, "\n")}})
	}
	for _, c := range s.Cases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Error != nil {
			s.Errors++
		}
	}
	b, err := xml.MarshalIndent(junitSuites{Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Suites: []junitSuite{s}}, "", "  ")
	return append([]byte(xml.Header), b...), err
}
