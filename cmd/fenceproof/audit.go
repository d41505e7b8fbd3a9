package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fenceproof/fenceproof/audit"
)

func init() {
	register("audit", "the write-audit oracle: audit check --audit FILE --driver-log FILE", runAudit)
}

func runAudit(args []string) int {
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(os.Stderr, "usage: fenceproof audit check --audit FILE --driver-log FILE [--writer-log FILE ...] [--enforce-log FILE] [--report DIR] [--skew DURATION] [--since UNIX_NS]")
		return helpOrUsageError(args)
	}
	fs := flag.NewFlagSet("audit check", flag.ContinueOnError)
	var f audit.Files
	var audits, drivers, writers listFlag
	fs.Var(&audits, "audit", "refstore audit log (repeatable; required)")
	fs.Var(&drivers, "driver-log", "reference driver JSON log (repeatable, e.g. one per driver pod; required)")
	fs.Var(&writers, "writer-log", "writer attempt log (repeatable)")
	fs.StringVar(&f.EnforceLog, "enforce-log", "", "refstore enforcement log (default: enforce.log next to the first --audit, if present)")
	report := fs.String("report", "", "write NAME.md, NAME.json and NAME-timeline.txt into this directory")
	name := fs.String("name", "audit", "report file name prefix")
	title := fs.String("title", "Write audit", "report title")
	skew := fs.Duration("skew", 0, "tolerated clock skew between driver and storage (0 on one host)")
	timeline := fs.Bool("timeline", false, "also print the timeline")
	since := fs.Int64("since", 0, "judge only what happened from this unix time in ns on (earlier fences still count); 0 judges everything")
	if code, ok := parseFlags(fs, args[1:]); !ok {
		return code
	}
	if *since < 0 {
		fmt.Fprintln(os.Stderr, "fenceproof audit check: --since must not be negative")
		return 2
	}
	if *skew < 0 {
		fmt.Fprintln(os.Stderr, "fenceproof audit check: --skew must not be negative")
		return 2
	}
	f.Audit, f.DriverLogs, f.WriterLogs = audits, drivers, writers
	if f.EnforceLog == "" && len(audits) > 0 {
		if p := filepath.Join(filepath.Dir(audits[0]), "enforce.log"); fileExists(p) {
			f.EnforceLog = p
		}
	}
	in, err := audit.Load(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceproof audit check:", err)
		return 2
	}
	res := audit.Check(in, audit.Options{Skew: *skew, Since: *since})
	fmt.Println(res.Summary())
	for _, e := range res.Episodes {
		enf := "enforcement time unknown (no enforcement log)"
		if e.EnforceNs > 0 {
			enf = fmt.Sprintf("enforced %+.1f ms relative to the ack", e.EnforceDeltaMs)
		}
		fmt.Printf("fence %v: %s\n", e.CIDRs, enf)
	}
	for _, c := range res.Clients {
		fmt.Printf("client %s %v: audited %d, writer ok %d refused %d error %d, lost %d, failed while unfenced %d\n",
			c.Client, c.Addresses, c.Accepted, c.OK, c.Refused, c.Errors, c.Lost, c.FailedUnfenced)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	if *timeline {
		fmt.Print(res.TimelineText())
	}
	if *report != "" {
		if err := res.WriteReports(*report, *name, *title); err != nil {
			fmt.Fprintln(os.Stderr, "fenceproof audit check:", err)
			return 2
		}
	}
	if !res.OK() {
		return 1
	}
	return 0
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
