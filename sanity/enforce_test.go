package sanity_test

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/rulebook"
	"github.com/fenceproof/fenceproof/rulebook/clitest"
	"github.com/fenceproof/fenceproof/sanity"
)

// fakeEnforcerEnv makes this test binary an enforce command (TestMain):
// "MODE:STATE" answers for the address in its last argument from the
// vault driver's state file (the fences it stores, one per line), as MODE
// says a storage would.
const fakeEnforcerEnv = "FP_FAKE_ENFORCER"

// fakeEnforcer is the enforce command of the contract tests: faithful
// refuses a write from inside any stored fence and allows the rest;
// first-address refuses only the first address of each; allowed allows
// everything; refused refuses everything; exit3 answers nothing with exit
// status 3; untestable-v6 is faithful for IPv4 and says untestable for
// IPv6.
func fakeEnforcer(spec string, args []string) int {
	mode, state, _ := strings.Cut(spec, ":")
	addr, err := netip.ParseAddr(args[len(args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	b, err := os.ReadFile(state)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fenced, first := false, false
	for _, l := range strings.Fields(string(b)) {
		if p, err := netip.ParsePrefix(l); err == nil {
			fenced = fenced || p.Contains(addr)
			first = first || p.Masked().Addr() == addr
		}
	}
	answer := map[string]bool{"faithful": fenced, "first-address": first, "allowed": false, "refused": true, "untestable-v6": fenced}[mode]
	switch {
	case mode == "exit3":
		fmt.Println("wrote nothing")
		return 3
	case mode == "untestable-v6" && addr.Is6():
		fmt.Println("untestable")
		return 0
	case answer:
		fmt.Println("the write was refused:\nrefused")
		return 0 // the stated line decides, whatever the status
	}
	return 0 // allowed, by exit status alone
}

// TestEnforceCommandContract runs ENFORCE-001 against a driver that stores
// what it is asked (the vault driver) through enforce commands that answer
// as storages would: one that enforces what is stored passes; one that
// refuses only a block's first address, or nothing, fails; one that
// refuses everything, or answers with an unknown status, leaves the rule
// NOT RUN naming why; one that cannot write from IPv6 passes on IPv4, its
// IPv6 case NOT SUPPORTED when the profile makes IPv6 optional, and NOT RUN
// when it does not, which keeps the run from CONFORMS.
func TestEnforceCommandContract(t *testing.T) {
	for _, c := range []struct {
		mode     string
		args     []string
		want     sanity.Verdict
		contains string
	}{
		{"faithful", nil, sanity.VerdictPass, ""},
		{"first-address", nil, sanity.VerdictFail, "its last address) was allowed"},
		{"allowed", nil, sanity.VerdictFail, "its first address) was allowed"},
		{"refused", nil, sanity.VerdictNotRun, "before any fence of this rule, a write from"},
		{"exit3", nil, sanity.VerdictNotRun, `exited 3 for`},
		{"untestable-v6", []string{"--ipv6", "optional"}, sanity.VerdictPass, "IPv6: the enforce command cannot write from IPv6 addresses"},
		{"untestable-v6", nil, sanity.VerdictPass, "cannot write from IPv6 addresses"},
	} {
		t.Run(strings.Join(append([]string{c.mode}, c.args...), " "), func(t *testing.T) {
			t.Parallel()
			args, state := vaultDirect(t, vaultSecret, nil)
			cmd := fmt.Sprintf("%s=%s:%s %s", fakeEnforcerEnv, c.mode, state, os.Args[0])
			r := sanityRun(t, 2*time.Minute, append(append(args, "--label-filter", "ENFORCE-001", "--enforce-command", cmd), c.args...)...)
			rr, _ := r.result.Rule("ENFORCE-001")
			if rr.Verdict != c.want || !strings.Contains(rr.Reason, c.contains) {
				t.Errorf("ENFORCE-001 is %s (%s), want %s saying %q:\n%s", rr.Verdict, rr.Reason, c.want, c.contains, clitest.Tail(r.Out))
			}
			// A case NOT RUN keeps the run from CONFORMS; NOT SUPPORTED does not.
			notRun := rr.Verdict == sanity.VerdictNotRun || slices.ContainsFunc(rr.Cases, func(c sanity.CaseResult) bool { return c.Verdict == sanity.VerdictNotRun })
			if (rr.Incomplete != "") != notRun {
				t.Errorf("ENFORCE-001 keeps the run from CONFORMS: %q; a case did not run: %v", rr.Incomplete, notRun)
			}
		})
	}
}

// TestEnforceCommandIsOptIn: without --enforce-command the rule is SKIP,
// which keeps no run from CONFORMS, and says how to run it.
func TestEnforceCommandIsOptIn(t *testing.T) {
	r := sanityRun(t, time.Minute, "--driver-backend", "memory", "--label-filter", "ENFORCE-001 || IDENT-001")
	rr, _ := r.result.Rule("ENFORCE-001")
	if rr.Verdict != sanity.VerdictSkip || !strings.Contains(rr.Reason, "--enforce-command") || rr.Incomplete != "" {
		t.Errorf("ENFORCE-001 is %s (%s, incomplete %q), want SKIP naming --enforce-command", rr.Verdict, rr.Reason, rr.Incomplete)
	}
}

// TestEnforcementFaults runs the reference driver on nftables, whose write
// probe is the enforce command, with each fault that lists what was asked
// but enforces something else: each fails ENFORCE-001 and nothing else
// (the faithful driver passes it in TestReferenceDriverConformsNftablesDestructive).
func TestEnforcementFaults(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the nftables backend and its write probe run in network namespaces")
	}
	// ack-before-enforce with 5 s: the writes after the acknowledgement
	// start well within it, however loaded the machine.
	for _, f := range []string{"enforce-first-address", "enforce-neighbour", "ack-before-enforce=5s"} {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			r := sanityRun(t, 3*time.Minute, "--driver-backend", "nftables", "--driver-fault", f, "--label-filter", "ENFORCE-001 || FENCE-001 || FENCE-005")
			if got := r.result.Failed(); r.Exit != 1 || !slices.Equal(got, []string{"ENFORCE-001"}) {
				t.Errorf("fault %s (seed %d): exit %d, failing %v; want exit 1 failing ENFORCE-001 only:\n%s", f, r.result.Seed, r.Exit, got, clitest.Tail(r.Out))
			}
			if r.result.Verdict != rulebook.DoesNotConform {
				t.Errorf("verdict %s", r.result.Verdict)
			}
		})
	}
}
