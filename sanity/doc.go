// Package sanity is the fenceproof conformance suite for CSI-Addons network
// fencing: Ginkgo v2 specs that check any fence.FenceController endpoint and
// its Identity service against the fence spec and its error table.
//
// Every check is a Rule with an ID (e.g. CIDR-001), a level (MUST, SHOULD,
// INFO), the spec text it enforces and Ginkgo labels, so a run can be narrowed
// with --label-filter, focus and skip. The suite fences only documentation
// ranges unless Config.Destructive is set, undoes every fence it made (newest
// first) and ends by checking that none of its blocks is still fenced.
//
// Use it from the command line (fenceproof sanity), from a plain Go test
// (sanity.Test) or inside an existing Ginkgo suite (sanity.GinkgoTest).
package sanity
