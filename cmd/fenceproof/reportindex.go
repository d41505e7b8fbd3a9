package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fenceproof/fenceproof/internal/reportindex"
)

func init() {
	register("report-index", "write reports/index.html: the verdicts (failures first), then every report file by producer", reportIndexMain)
}

func reportIndexMain(args []string) int {
	fs := flag.NewFlagSet("report-index", flag.ContinueOnError)
	dir := fs.String("reports", "reports", "reports directory")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fenceproof report-index: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		fmt.Fprintf(os.Stderr, "fenceproof report-index: %s is not a directory\n", *dir)
		return 2
	}
	lines, es, err := reportindex.Write(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof report-index: %v\n", err)
		return 1
	}
	printIndexLines(lines)
	fmt.Printf("report-index: %d verdicts and %d report files on %s\n", len(lines), len(es), filepath.Join(*dir, "index.html"))
	return 0
}

// writeReportIndex brings dir/index.html up to date after a suite's run
// wrote its reports there and returns its path; a failure is said on
// stderr, and the run's verdict stands.
func writeReportIndex(dir string) []string {
	if _, _, err := reportindex.Write(dir); err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof: reports index: %v\n", err)
		return nil
	}
	return []string{filepath.Join(dir, "index.html")}
}

func printIndexLines(lines []reportindex.Line) {
	for _, l := range lines {
		fmt.Printf("  %-42s %-16s %s\n", l.Name, l.Verdict, l.Figure)
	}
}
