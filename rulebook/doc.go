// Package rulebook is the conformance engine that fenceproof's suites share
// (the FenceController suite in package sanity, the csi-proxy suite in
// csiproxy/conformance).
//
// A suite declares its rules once, in one table: a Book of Rules, each with
// an ID, a Level (MUST, SHOULD, INFO, after RFC 2119), a title, the spec text
// it enforces and where that text comes from, an area, labels, the RPCs it
// calls, and its run policy: whether it runs whatever is left of the run's
// budget (Always) and what a user gives to run it at all (OptIn). Listing
// the rules, selecting them with a Ginkgo label filter and generating a
// rule table read the book; nothing runs.
//
// The suite's spec files register one body per rule ID (Suite.It, or Table
// for a rule with several cases); every spec carries its rule's ID, level and
// tags as Ginkgo labels, so --label-filter, focus and skip narrow a run.
// Suite.Run runs the specs in this process (Ginkgo allows one run per
// process) and Suite.Fold turns the Ginkgo report into a Result, keyed by the
// rule ID in each spec's labels. A body ends a case with a typed outcome
// (Fail, Skip, NotSupported, NotRun, Cut) recorded in the case's run state;
// Fold reads those and Ginkgo's typed spec states, never a message, and the
// suite itself records why a run was cut (its budget, an interrupt). A
// rule's cases are folded into one verdict,
//
//	PASS, FAIL, WARN (a SHOULD not met; FAIL in a strict run), INFO,
//	SKIP (with the suite's reason), NOT SUPPORTED (a legitimate choice the
//	implementation made, see NotSupported) and NOT RUN, with its kind:
//	filtered out, the run's time budget, an interrupt, or a missing
//	dependency (NotRun),
//
// and the run into one RunVerdict: CONFORMS, DOES NOT CONFORM, or INCOMPLETE
// when the book's Incomplete policy says a rule's result keeps the run from
// vouching for conformance. Each verdict has its exit status (ExitCode).
//
// The verdict is computed once, in the Result; the writers only render it:
// the terminal (WriteVerdicts), the JSON report of the suite's own result
// type (which embeds Result), Markdown, HTML and JUnit XML (one testcase per
// rule, and a failing one for an INCOMPLETE or UNREACHABLE run). Package
// clitest holds the harness the suites' tests use to run the fenceproof
// command.
package rulebook
