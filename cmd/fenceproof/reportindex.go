package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fenceproof/fenceproof/internal/reportindex"
)

func init() {
	register("report-index", "write reports/index.html linking every report of the run with its verdict", reportIndexMain)
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
	es, err := reportindex.Write(*dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fenceproof report-index: %v\n", err)
		return 1
	}
	fmt.Printf("report-index: %d reports linked from %s\n", len(es), filepath.Join(*dir, "index.html"))
	return 0
}
