// Package reportindex writes reports/index.html: one page that links every
// report a run left in the reports directory (sanity, simulator, e2e) with
// its verdict, read from the report itself.
package reportindex

import (
	"encoding/xml"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Entry is one report in the index.
type Entry struct {
	// Group is the kind of report (sanity, sim, e2e, other).
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
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return groupOrder(out[i].Group) < groupOrder(out[j].Group)
		}
		return out[i].Path < out[j].Path
	})
	return out, err
}

func groupOrder(g string) int {
	return strings.Index("sanity sim e2e other", g)
}

func classify(p, rel string) (Entry, bool, error) {
	base := filepath.Base(rel)
	ext := filepath.Ext(base)
	e := Entry{Group: "other", Path: filepath.ToSlash(rel)}
	switch {
	case strings.HasPrefix(rel, "sanity"):
		e.Group = "sanity"
	case strings.HasPrefix(rel, "sim"):
		e.Group = "sim"
	case strings.HasPrefix(rel, "e2e"):
		e.Group = "e2e"
	}
	switch ext {
	case ".xml":
		v, failed, err := junitVerdict(p)
		if err != nil {
			return e, false, nil // not JUnit: listed without a verdict below
		}
		e.Verdict, e.Failed = v, failed
		if e.Group == "other" {
			e.Group = "e2e"
		}
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
	case ".md", ".json", ".yaml":
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

// HTML renders the index page.
func HTML(entries []Entry) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>fenceproof reports</title>
<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}td.bad{background:#ffebee}td.ok{background:#e8f5e9}</style></head><body>
<h1>fenceproof reports</h1>
`)
	failed := 0
	for _, e := range entries {
		if e.Failed {
			failed++
		}
	}
	fmt.Fprintf(&b, "<p>%d reports, %d with a verdict other than pass (a simulator verdict other than pass can be what the scenario expects: see sim-compare.html).</p>\n", len(entries), failed)
	group := ""
	for _, e := range entries {
		if e.Group != group {
			if group != "" {
				b.WriteString("</table>\n")
			}
			group = e.Group
			fmt.Fprintf(&b, "<h2>%s</h2>\n<table><tr><th>report</th><th>verdict</th></tr>\n", html.EscapeString(group))
		}
		cls := ""
		switch {
		case e.Verdict == "":
		case e.Failed:
			cls = ` class="bad"`
		default:
			cls = ` class="ok"`
		}
		fmt.Fprintf(&b, "<tr><td><a href=\"%s\">%s</a></td><td%s>%s</td></tr>\n", html.EscapeString(e.Path), html.EscapeString(e.Path), cls, html.EscapeString(e.Verdict))
	}
	if group != "" {
		b.WriteString("</table>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// Write scans dir and writes dir/index.html; it returns the entries.
func Write(dir string) ([]Entry, error) {
	es, err := Scan(dir)
	if err != nil {
		return nil, err
	}
	return es, os.WriteFile(filepath.Join(dir, "index.html"), []byte(HTML(es)), 0o644)
}
