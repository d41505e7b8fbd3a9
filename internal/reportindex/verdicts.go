package reportindex

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// State is where a verdict line stands; the page lists the lines in this
// order, so what failed comes first.
type State int

// The states.
const (
	Failed     State = iota // the verdict is a failure
	Unreadable              // the report exists but could not be read
	Incomplete              // passed as far as it went (rules skipped or not run)
	Passed                  // the verdict is a pass
	NotRun                  // no report: the producer did not run
)

func (s State) String() string {
	return [...]string{"failed", "unreadable", "incomplete", "passed", "not run"}[s]
}

// Line is one verdict of the front page.
type Line struct {
	// Name says whose verdict it is ("fence conformance (fenceproof sanity)").
	Name string
	// State orders and colours the line.
	State State
	// Verdict is the producer's own word (CONFORMS, PASS, FAIL, ...).
	Verdict string
	// Figure is the line's key figure ("40 of 40 MUST rules pass").
	Figure string
	// Link is the report page to read next, relative to the reports
	// directory; empty when it does not exist.
	Link string
}

// Source is where one verdict line comes from: a machine-readable report
// and a reader for it.
type Source struct {
	Name string
	// File is the machine-readable report (JSON or JUnit XML), relative to
	// the reports directory.
	File string
	// Page is the human-readable report the line links to (the first of
	// them that exists; File when none does).
	Page []string
	// Run is the command that writes File, shown when it is missing.
	Run string
	// Read turns File's content into the verdict, figure and state.
	Read func(data []byte) (Line, error)
}

// Sources are the front page's verdict lines, declared once, in page order
// within each state. A producer joins the page with one entry here: its
// machine-readable report and a reader (readJUnit for any JUnit file). The
// simulator's calibration against real Ceph adds, say, {Name: "simulator
// calibration", File: "sim-calibration.json", Read: ...} once it writes a
// verdict there.
var Sources = []Source{
	{Name: "fence conformance (fenceproof sanity)", File: "sanity.json", Page: []string{"sanity.html", "sanity.md"}, Run: "make sanity", Read: readConformance},
	{Name: "csi-proxy conformance", File: "csiproxy.json", Page: []string{"csiproxy.html", "csiproxy.md"}, Run: "make csiproxy-sanity", Read: readConformance},
	{Name: "make e2e (every kind suite)", File: "e2e-summary.xml", Page: []string{"e2e-summary.md"}, Run: "make e2e", Read: readJUnit("suites")},
	{Name: "fencing end to end (refstore)", File: "fencing.xml", Page: []string{"fencing.md"}, Run: "make e2e-fencing", Read: readJUnit("cases")},
	{Name: "fencing end to end (Ceph)", File: "fencing-ceph.xml", Page: []string{"fencing-ceph.md"}, Run: "make e2e-fencing FENCING_STORAGE=ceph", Read: readJUnit("cases")},
	{Name: "data-plane isolation", File: "isolation.xml", Page: []string{"isolation.md"}, Run: "make e2e-isolation", Read: readJUnit("matrix cases")},
	{Name: "simulator: policies compared", File: "sim-compare.json", Page: []string{"sim-compare.html", "sim-compare.md"}, Run: "make rehearse", Read: readSimCompare},
}

// Verdicts reads every source under dir: failed first, then unreadable,
// incomplete, passed and not run, each in Sources order.
func Verdicts(dir string) []Line {
	var out []Line
	for _, s := range Sources {
		out = append(out, s.line(dir))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].State < out[j].State })
	return out
}

func (s Source) line(dir string) Line {
	data, err := os.ReadFile(filepath.Join(dir, s.File))
	if errors.Is(err, fs.ErrNotExist) {
		return Line{Name: s.Name, State: NotRun, Verdict: "not run", Figure: "no " + s.File + "; " + s.Run + " writes it"}
	}
	var l Line
	if err == nil {
		l, err = s.Read(data)
	}
	if err != nil {
		l = Line{State: Unreadable, Verdict: "unreadable", Figure: fmt.Sprintf("%s: %v", s.File, err)}
	}
	l.Name, l.Link = s.Name, s.File
	for _, p := range s.Page {
		if fileExists(filepath.Join(dir, p)) {
			l.Link = p
			break
		}
	}
	return l
}
