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
	for _, l := range lines {
		fmt.Printf("  %-42s %-16s %s\n", l.Name, l.Verdict, l.Figure)
	}
	fmt.Printf("report-index: %d verdicts and %d report files on %s\n", len(lines), len(es), filepath.Join(*dir, "index.html"))
	return 0
}
