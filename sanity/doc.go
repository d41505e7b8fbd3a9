// Package sanity is the fenceproof conformance suite for CSI-Addons network
// fencing: Ginkgo v2 specs that check any fence.FenceController endpoint and
// its Identity service against the fence spec and its error table.
//
// Every check is a Rule with an ID (e.g. CIDR-001), a level (MUST, SHOULD,
// INFO), the spec text it enforces and where that text comes from, an area,
// labels and the RPCs it calls, so a run can be narrowed with --label-filter,
// focus and skip. The rules are declared once, in the table of rules.go; each
// spec file registers the bodies of its rules by ID. The suite fences only
// documentation ranges unless Config.Destructive is set, undoes every fence
// it made (newest first) and ends by checking that none of its blocks is
// still fenced.
//
// The engine underneath (rule table, verdicts, folding the Ginkgo report,
// the JSON, Markdown and HTML writers) is package rulebook, shared with the
// csi-proxy suite. This package keeps its exported API for vendors: Test,
// GinkgoTest, Run and RunOptions, Config, Defaults, LoadFile and
// LoadSecretsFile, Result, RuleResult, CaseResult, Rule, Level, Verdict and
// their constants; the names that moved to rulebook are type aliases here.
//
// Use it from the command line (fenceproof sanity), from a plain Go test
// (sanity.Test) or inside an existing Ginkgo suite (sanity.GinkgoTest).
package sanity
