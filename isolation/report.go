package isolation

// The report: the results of the matrix cases as JUnit XML (one testcase
// per case) and as a Markdown page with the expected, observed and
// difference tables of every case.

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// CaseResult is the outcome of one matrix case.
type CaseResult struct {
	// ID is the e2e case's stable ID (a case may measure several
	// matrices); empty outside a suite.
	ID          string
	Name        string
	Description string
	// Expected and Observed matrices; Observed is nil if probing never ran.
	Expected, Observed *Matrix
	// WantMismatches, when not nil, makes the case one that must show
	// exactly these mismatches (Mismatch.String()), e.g. a deliberately
	// wrong policy.
	WantMismatches []string
	// Failures are other problems: a pinned cell that does not hold, an
	// error while setting up.
	Failures []string
	// Notes are shown in the report (policies applied, probe stats).
	Notes []string
	// Duration of the case; MatrixTime of its first full probing pass.
	Duration, MatrixTime time.Duration
}

// Mismatches diffs Expected against Observed; a shape error is reported
// as a failure by Passed.
func (c CaseResult) Mismatches() ([]Mismatch, error) {
	if c.Expected == nil || c.Observed == nil {
		return nil, nil
	}
	return Diff(c.Expected, c.Observed)
}

// Problems lists why the case failed; empty when it passed.
func (c CaseResult) Problems() []string {
	out := slices.Clone(c.Failures)
	if c.Expected == nil || c.Observed == nil {
		return append(out, "no matrix measured")
	}
	ms, err := c.Mismatches()
	if err != nil {
		return append(out, err.Error())
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.String())
	}
	if c.WantMismatches != nil {
		if !slices.Equal(got, c.WantMismatches) {
			out = append(out, fmt.Sprintf("want exactly the mismatches %q, got %q", c.WantMismatches, got))
		}
		return out
	}
	for _, g := range got {
		out = append(out, "mismatch: "+g)
	}
	return out
}

// Passed reports whether the case has no problem.
func (c CaseResult) Passed() bool { return len(c.Problems()) == 0 }

// Report is a suite run.
type Report struct {
	Suite   string
	Target  string
	Started time.Time
	// Notes about the whole run, shown under the target (e.g. which source
	// address each side of a connection from outside the cluster saw).
	Notes []string
	Cases []CaseResult
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes one testsuite with one testcase per case; a failed
// case carries its problems and the difference tables.
func (r Report) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: r.Suite, Tests: len(r.Cases), Timestamp: r.Started.UTC().Format(time.RFC3339)}
	var total time.Duration
	for _, c := range r.Cases {
		total += c.Duration
		jc := junitCase{Name: c.title(), Classname: r.Suite, Time: seconds(c.Duration), SystemOut: c.tables()}
		if p := c.Problems(); len(p) > 0 {
			s.Failures++
			jc.Failure = &junitFailure{Message: p[0], Text: strings.Join(p, "\n") + "\n\n" + c.diffTables()}
		}
		s.Cases = append(s.Cases, jc)
	}
	s.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteMarkdown writes a summary table and, per case, its problems, notes
// and the expected, observed and difference tables.
func (r Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	passed := 0
	for _, c := range r.Cases {
		if c.Passed() {
			passed++
		}
	}
	fmt.Fprintf(&b, "# %s\n\n", r.Suite)
	fmt.Fprintf(&b, "Target: %s. Started %s. **%d/%d cases passed.**\n\n", r.Target, r.Started.UTC().Format(time.RFC3339), passed, len(r.Cases))
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("Cells: `.` allowed, `X` blocked, `?` not measured; in a difference table `.` same, `X` differs. Rows are sources, columns destinations.\n\n")
	b.WriteString("| case | result | matrix time | case time |\n| --- | --- | --- | --- |\n")
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "| %s[%s](#%s) %s | %s | %s | %s |\n", idPrefix(c), c.Name, c.Name, c.Description, verdict(c), c.MatrixTime.Round(time.Millisecond), c.Duration.Round(time.Millisecond))
	}
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "\n<a id=\"%s\"></a>\n## %s\n\n**%s**\n\n", c.Name, c.title(), verdict(c))
		for _, p := range c.Problems() {
			fmt.Fprintf(&b, "- %s\n", p)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "- note: %s\n", n)
		}
		if c.WantMismatches != nil {
			fmt.Fprintf(&b, "- this case must show exactly: %q\n", c.WantMismatches)
		}
		b.WriteString("\n```\n" + c.tables() + c.diffTables() + "```\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFiles writes <dir>/<base>.xml and <dir>/<base>.md and returns their
// paths.
func (r Report) WriteFiles(dir, base string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	for ext, write := range map[string]func(io.Writer) error{".xml": r.WriteJUnit, ".md": r.WriteMarkdown} {
		p := filepath.Join(dir, base+ext)
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		if err := write(f); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths, nil
}

// title is "[ID ]name: description".
func (c CaseResult) title() string { return idPrefix(c) + c.Name + ": " + c.Description }

func idPrefix(c CaseResult) string {
	if c.ID == "" {
		return ""
	}
	return c.ID + " "
}

func (c CaseResult) tables() string {
	var b strings.Builder
	if c.Expected != nil {
		b.WriteString("EXPECTED\n" + c.Expected.Tables() + "\n")
	}
	if c.Observed != nil {
		b.WriteString("OBSERVED\n" + c.Observed.Tables() + "\n")
	}
	return b.String()
}

func (c CaseResult) diffTables() string {
	if c.Expected == nil || c.Observed == nil {
		return ""
	}
	if _, err := Diff(c.Expected, c.Observed); err != nil {
		return ""
	}
	return "DIFFERENCE\n" + DiffTables(c.Expected, c.Observed)
}

func verdict(c CaseResult) string {
	switch {
	case !c.Passed():
		return "FAIL"
	case c.WantMismatches != nil:
		return "PASS (mismatch caught as expected)"
	}
	return "PASS"
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
