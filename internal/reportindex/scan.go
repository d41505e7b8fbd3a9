package reportindex

import (
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Entry is one report file in the index.
type Entry struct {
	// Group is the producer that wrote it (a producers name).
	Group string
	// Path is the report's path relative to the reports directory.
	Path string
	// Verdict is read from the report ("pass", "inv5", "2 failures", ...;
	// "" when the report has none).
	Verdict string
	// Failed marks a verdict that is not a pass.
	Failed bool
}

// Scan lists the reports under dir. Per-run simulator timelines count once
// (their .txt carries the verdict and links the .html beside it); SVGs and
// files under sim-compare-traces are reached from the pages that link them.
func Scan(dir string) ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == "sim-compare-traces" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "index.html" || rel == "README.md" {
			return nil
		}
		e, ok, err := classify(p, rel)
		if err != nil {
			return err
		}
		if ok {
			out = append(out, e)
		}
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if gi, gj := producerIndex(out[i].Group), producerIndex(out[j].Group); gi != gj {
			return gi < gj
		}
		return out[i].Path < out[j].Path
	})
	return out, err
}

// producer is who wrote a report file, known by the start of its path.
type producer struct {
	name     string
	prefixes []string
}

// producers group the files on the page, in page order; a file belongs to
// the first whose prefix its path has, else to "other". A new producer
// adds a line here.
var producers = []producer{
	{"sanity (conformance suite)", []string{"sanity"}},
	{"csi-proxy conformance", []string{"csiproxy"}},
	{"make e2e", []string{"e2e-"}},
	{"fencing end to end", []string{"fencing"}},
	{"data-plane isolation", []string{"isolation"}},
	{"simulator comparison", []string{"sim-compare"}},
	{"simulator scenario runs", []string{"sim/"}},
	{"simulator exploration", []string{"sim-explore"}},
	{"write-audit oracle", []string{"audit-"}},
	{"benchmarks", []string{"bench"}},
	{"other", nil},
}

// producerOf names the producer of the file at rel (slash-separated).
func producerOf(rel string) string {
	for _, p := range producers {
		for _, pre := range p.prefixes {
			if strings.HasPrefix(rel, pre) {
				return p.name
			}
		}
	}
	return "other"
}

func producerIndex(name string) int {
	for i, p := range producers {
		if p.name == name {
			return i
		}
	}
	return len(producers)
}

func classify(p, rel string) (Entry, bool, error) {
	base := filepath.Base(rel)
	ext := filepath.Ext(base)
	e := Entry{Path: filepath.ToSlash(rel)}
	e.Group = producerOf(e.Path)
	switch ext {
	case ".xml":
		v, failed, err := junitVerdict(p)
		if err != nil {
			return e, false, nil // not JUnit: listed without a verdict below
		}
		e.Verdict, e.Failed = v, failed
		return e, true, nil
	case ".txt":
		b, err := os.ReadFile(p)
		if err != nil {
			return e, false, err
		}
		e.Verdict, e.Failed = textVerdict(string(b))
		if html := strings.TrimSuffix(p, ".txt") + ".html"; fileExists(html) && !strings.HasSuffix(rel, "-minimal.txt") {
			e.Path = filepath.ToSlash(strings.TrimSuffix(rel, ".txt") + ".html")
		}
		return e, true, nil
	case ".html":
		if fileExists(strings.TrimSuffix(p, ".html") + ".txt") {
			return e, false, nil // listed through its .txt
		}
		return e, true, nil
	case ".md", ".json", ".yaml", ".log":
		if ext == ".md" && fileExists(strings.TrimSuffix(p, ".md")+".html") {
			return e, false, nil
		}
		return e, true, nil
	}
	return e, false, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// textVerdict reads a simulator verdict ("# verdict: X") or an exploration's
// last line ("... N of M random schedules broke an invariant").
func textVerdict(s string) (string, bool) {
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(l, "# verdict: "); ok {
			return v, v != "pass"
		}
	}
	lines := strings.Split(strings.TrimSpace(s), "\n")
	last := lines[len(lines)-1]
	if i := strings.Index(last, "random schedules broke an invariant"); i > 0 {
		f := strings.Fields(last[:i])
		if len(f) >= 3 {
			n := f[len(f)-3]
			return n + " of " + f[len(f)-1] + " schedules broke an invariant", n != "0"
		}
	}
	return "", false
}

type junitSuites struct {
	XMLName  xml.Name
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
}

// junitVerdict reads a JUnit XML file's totals.
func junitVerdict(p string) (string, bool, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false, err
	}
	var s junitSuites
	if err := xml.Unmarshal(b, &s); err != nil {
		return "", false, err
	}
	if s.XMLName.Local != "testsuites" && s.XMLName.Local != "testsuite" {
		return "", false, fmt.Errorf("not JUnit")
	}
	tests, bad := s.Tests, s.Failures+s.Errors
	if s.XMLName.Local == "testsuites" && len(s.Suites) > 0 {
		tests, bad = 0, 0
		for _, t := range s.Suites {
			tests += t.Tests
			bad += t.Failures + t.Errors
		}
	}
	if bad > 0 {
		return fmt.Sprintf("%d of %d failed", bad, tests), true, nil
	}
	return fmt.Sprintf("pass (%d tests)", tests), false, nil
}
