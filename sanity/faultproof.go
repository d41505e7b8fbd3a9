package sanity

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fenceproof/fenceproof/rulebook"
)

// FaultProof is one deliberately broken reference driver (a fault of
// driver/fault, with suite flags) and the exact set of rules the suite must
// fail against it: no more, no fewer. The suite's own tests run every entry;
// the README's rule table is generated from this table and the rules.
type FaultProof struct {
	Fault string
	Args  []string
	Fails []string
	// Why explains a set wider than the fault's own rule.
	Why string
}

// listRules are the rules that observe state through List: a required List
// that is missing or broken fails them all, and nothing else.
var listRules = []string{"CIDR-002", "CIDR-003", "CIDR-005", "CIDR-006", "CIDR-007", "CIDR-008", "CIDR-009", "CIDR-011", "CIDR-012", "CIDR-013",
	"CLIENT-003", "CONC-001", "CONC-002", "CONC-003", "EXPIRE-001", "FENCE-001", "FENCE-002", "FENCE-005", "FENCE-006", "FENCE-007", "LIST-001", "LIST-002", "SCALE-001", "SUITE-001"}

func plus(a []string, b ...string) []string { return append(slices.Clone(a), b...) }

// FaultProofs is the table of faults and the rules each must fail.
var FaultProofs = []FaultProof{
	{Fault: "accept-empty", Fails: []string{"ERR-001", "ERR-006"}},
	{Fault: "accept-malformed", Fails: []string{"CIDR-001", "CIDR-002", "ERR-006"}},
	{Fault: "accept-bare-ip", Fails: []string{"CIDR-003"}},
	{Fault: "partial-apply", Fails: []string{"CIDR-002"}},
	{Fault: "no-auth", Fails: []string{"ERR-003", "ERR-004"}},
	{Fault: "auth-fence-only", Fails: []string{"ERR-003", "ERR-004"}, Why: "the Unfence, List and GetFenceClients cases"},
	{Fault: "wrong-auth-code", Fails: []string{"ERR-003", "ERR-004", "ERR-006"}, Why: "PERMISSION_DENIED is not in the error table"},
	{Fault: "leak-secret", Args: []string{"--secret", "userKey=fenceproof-test-secret-value"}, Fails: []string{"ERR-005", "SUITE-002"}},
	{Fault: "ignore-params", Fails: []string{"ERR-002", "ERR-007"}, Why: "no parameter is checked at all"},
	{Fault: "ignore-param-values", Fails: []string{"ERR-007"}},
	{Fault: "no-normalise", Fails: []string{"CIDR-005", "CIDR-007", "CIDR-011", "CIDR-012"}},
	{Fault: "reject-ipv6", Fails: []string{"CIDR-007", "CIDR-011", "CIDR-013", "FENCE-001", "FENCE-004", "FENCE-005", "FENCE-008"}, Why: "every rule with an IPv6 case, under profile ipv6=required"},
	{Fault: "no-dedupe", Fails: []string{"CIDR-007", "CIDR-008", "CIDR-011", "CONC-001", "FENCE-002", "FENCE-007"}},
	{Fault: "first-only", Fails: []string{"CIDR-013", "FENCE-005", "FENCE-007", "SCALE-001"}, Why: "every rule that fences several blocks in one request"},
	{Fault: "mixed-first-family", Fails: []string{"CIDR-013", "FENCE-005"}},
	{Fault: "drop-list", Fails: []string{"CIDR-002", "CIDR-005", "CIDR-006", "CIDR-007", "CIDR-008", "CIDR-009", "CIDR-011", "CIDR-012", "CIDR-013", "CONC-001", "CONC-002", "EXPIRE-001", "FENCE-001", "FENCE-002", "FENCE-005", "FENCE-006", "FENCE-007", "SCALE-001"}, Why: "List lies about the newest fence, which every state rule reads"},
	{Fault: "list-storage-native", Fails: []string{"CIDR-002", "CIDR-005", "CIDR-006", "CIDR-007", "CIDR-008", "CIDR-009", "CIDR-011", "CIDR-012", "CIDR-013", "CONC-001", "CONC-002", "EXPIRE-001", "FENCE-001", "FENCE-002", "FENCE-005", "FENCE-006", "FENCE-007", "LIST-002", "SCALE-001"}, Why: "no listed entry names a block, so every state rule sees its fences missing"},
	{Fault: "unfence-noop", Fails: []string{"CIDR-007", "CIDR-011", "CIDR-012", "CONC-003", "FENCE-001", "FENCE-003", "FENCE-005", "FENCE-006", "FENCE-007", "SUITE-001"}},
	{Fault: "unfence-overlap", Fails: []string{"CIDR-009", "FENCE-007"}},
	{Fault: "unfence-neighbour", Fails: []string{"CIDR-009", "EXPIRE-001", "FENCE-006", "FENCE-007"}, Why: "it also removes the sentinel when that is the neighbour"},
	{Fault: "unfence-verbatim", Fails: []string{"CIDR-007", "CIDR-011", "SUITE-001"}, Why: "the expanded IPv6 spelling and the host-bit spelling; cleanup leaves them"},
	{Fault: "not-idempotent", Fails: []string{"CIDR-007", "CIDR-008", "CIDR-011", "CONC-001", "FENCE-002", "FENCE-003", "FENCE-004", "FENCE-007", "SUITE-001"}},
	{Fault: "race", Fails: []string{"CONC-002", "CONC-003"}},
	{Fault: "internal-on-contention", Fails: []string{"CONC-001", "CONC-002", "CONC-003"}},
	{Fault: "concurrent-dup", Fails: []string{"CONC-001"}},
	{Fault: "no-fence-capability", Fails: []string{"IDENT-003"}},
	{Fault: "get-clients-unimplemented", Fails: []string{"CLIENT-001", "CLIENT-002", "CLIENT-003", "ERR-002", "ERR-003", "ERR-004", "IDENT-004"}, Why: "the GetFenceClients cases of the error table"},
	{Fault: "clients-unstable", Fails: []string{"CLIENT-002"}},
	{Fault: "clients-bad-address", Fails: []string{"CLIENT-001"}},
	{Fault: "clients-empty-id", Fails: []string{"CLIENT-001"}},
	{Fault: "clients-mutate", Fails: []string{"CLIENT-003", "EXPIRE-001"}, Why: "the mutation also removes the sentinel"},
	{Fault: "empty-identity", Fails: []string{"IDENT-001"}},
	{Fault: "probe-not-ready", Fails: []string{"IDENT-002"}},
	{Fault: "list-unimplemented", Fails: plus(listRules, "ERR-002", "ERR-003", "ERR-004"), Why: "profile listClusterFence=required: every rule that reads List, and the List cases of the error table"},
	{Fault: "code=List:INTERNAL", Fails: plus(listRules, "ERR-002", "ERR-003", "ERR-004", "ERR-006"), Why: "ceph-csi's panicking List: the rules that read List and its error-table cases, nothing else"},
	{Fault: "code=List:INTERNAL", Args: []string{"--list", "optional"}, Fails: []string{"ERR-002", "ERR-003", "ERR-004", "ERR-006", "LIST-001"}, Why: "profile listClusterFence=optional: the state rules are skipped, List's own answers still fail"},
	{Fault: "code=Fence:INTERNAL", Fails: []string{"CIDR-001", "CIDR-002", "CIDR-003", "CIDR-005", "CIDR-006", "CIDR-007", "CIDR-008", "CIDR-009", "CIDR-011", "CIDR-012", "CIDR-013", "CLIENT-003", "CONC-001", "CONC-002", "CONC-003", "ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-006", "ERR-007", "EXPIRE-001", "FENCE-001", "FENCE-002", "FENCE-003", "FENCE-005", "FENCE-006", "FENCE-007", "FENCE-008", "LIST-002", "SCALE-001"}, Why: "every rule that fences"},
	{Fault: "code=Unfence:INTERNAL", Fails: []string{"CIDR-001", "CIDR-002", "CIDR-007", "CIDR-009", "CIDR-011", "CIDR-012", "CONC-003", "ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-006", "ERR-007", "FENCE-001", "FENCE-003", "FENCE-004", "FENCE-005", "FENCE-006", "FENCE-007", "FENCE-008", "SCALE-001", "SUITE-001"}, Why: "every rule that unfences; cleanup fails once, under SUITE-001"},
	{Fault: "list-storage-native", Args: []string{"--label-filter", "LIST-002"}, Fails: []string{"LIST-002"}},
	{Fault: "silent-capacity", Fails: []string{"SCALE-001"}},
	{Fault: "expire-fences", Fails: []string{"EXPIRE-001"}},
	{Fault: "keep-mapped", Fails: []string{"CIDR-012"}},
	{Fault: "reject-ipv4-31", Fails: []string{"CIDR-006"}},
	{Fault: "fail-wide-ipv6", Fails: []string{"CIDR-005", "CIDR-007", "CIDR-011", "CIDR-013", "FENCE-005", "FENCE-008", "SUITE-001"}, Why: "every rule that fences an IPv6 /64 or wider; cleanup of them fails once, under SUITE-001"},
	{Fault: "reject-host-bits", Args: []string{"--host-bits", "normalise"}, Fails: []string{"CIDR-005", "CIDR-011"}},
	{Fault: "delay=Fence:10m", Args: []string{"--rpc-timeout", "1s"}, Fails: []string{"CIDR-001", "CIDR-002", "CIDR-003", "CIDR-005", "CIDR-006", "CIDR-007", "CIDR-008", "CIDR-009", "CIDR-011", "CIDR-012", "CIDR-013", "CLIENT-003", "CONC-001", "CONC-002", "CONC-003", "ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-006", "ERR-007", "EXPIRE-001", "FENCE-001", "FENCE-002", "FENCE-003", "FENCE-005", "FENCE-006", "FENCE-007", "FENCE-008", "LIST-002", "SCALE-001", "TIME-001"}, Why: "a hung Fence: every rule that fences, in bounded time"},
	{Fault: "delay=Fence:3s", Args: []string{"--rpc-timeout", "2s"}, Fails: []string{"CIDR-001", "CIDR-002", "CIDR-003", "CIDR-005", "CIDR-006", "CIDR-007", "CIDR-008", "CIDR-009", "CIDR-011", "CIDR-012", "CIDR-013", "CLIENT-003", "CONC-001", "CONC-002", "CONC-003", "ERR-001", "ERR-002", "ERR-003", "ERR-004", "ERR-006", "ERR-007", "EXPIRE-001", "FENCE-001", "FENCE-002", "FENCE-003", "FENCE-005", "FENCE-006", "FENCE-007", "FENCE-008", "LIST-002", "SCALE-001", "TIME-001", "TIME-002"}, Why: "a slow Fence that goes on after the deadline: the sentinel appears behind the client's back"},
}

// ProvenOtherwise are the MUST rules no fault of the reference driver's
// table breaks, with what shows they can fail.
var ProvenOtherwise = map[string]string{
	"CIDR-010":    "needs `--destructive` (TestReferenceDriverConformsNftablesDestructive runs it); any fault that breaks CIDR-006 breaks it the same way",
	"RESTART-001": "`forget-on-restart` under `--restart-command` (TestRestartCommand; vault driver variant `forget`)",
	"CIDR-004":    "`lenient-cidrs` (WARN; FAIL with `--strict`, TestProfiles)",
	"IDENT-005":   "none yet: the reference driver serves GetFenceClients only when it advertises it",
}

// ProvenBy returns, for each rule ID, the faults whose exact set contains it,
// narrowest first (the fault that fails fewest rules).
func ProvenBy() map[string][]string {
	byRule := map[string][]FaultProof{}
	for _, fp := range FaultProofs {
		for _, id := range fp.Fails {
			byRule[id] = append(byRule[id], fp)
		}
	}
	out := map[string][]string{}
	for id, fps := range byRule {
		slices.SortStableFunc(fps, func(a, b FaultProof) int { return len(a.Fails) - len(b.Fails) })
		for _, fp := range fps {
			out[id] = append(out[id], fp.Spec())
		}
	}
	return out
}

// Spec is the fault with its suite flags, as a user would type it.
func (fp FaultProof) Spec() string {
	if len(fp.Args) == 0 {
		return fp.Fault
	}
	return fp.Fault + " " + strings.Join(fp.Args, " ")
}

// RuleTableMarkdown is the README's table: every rule, its level and the
// narrowest fault that proves it can fail (or how it is proven otherwise).
func RuleTableMarkdown(rules []Rule) string {
	otherwise := ProvenOtherwise
	proven := ProvenBy()
	var b strings.Builder
	b.WriteString("| rule | level | what a conforming driver does | fault that fails it |\n|---|---|---|---|\n")
	for _, r := range rules {
		how := ""
		if fs := proven[r.ID]; len(fs) > 0 {
			how = "`" + fs[0] + "`"
		} else if o, ok := otherwise[r.ID]; ok {
			how = o
		} else if r.Level == Info {
			how = "— (observations only)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.ID, r.Level, rulebook.MarkdownCell(r.Title), how)
	}
	return b.String()
}
