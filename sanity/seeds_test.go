package sanity_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/rulebook/clitest"
	"github.com/fenceproof/fenceproof/sanity"
)

// No verdict may depend on the seed: the rules check by construction, and
// the rules that depend on timing decide by a fixed schedule.

// TestTimingVerdictIsTheSameOnEverySeed pins TIME-002 failing a driver that
// ignores client cancellation in 3 runs of 16 and passing it in the rest:
// the same driver run 20 times with 20 seeds gets one verdict, the
// faithful driver PASS and the one that ignores cancellation FAIL, in both
// of its cases.
func TestTimingVerdictIsTheSameOnEverySeed(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault []string
		want  sanity.Verdict
	}{
		{"faithful", nil, sanity.VerdictPass},
		{"ignore-cancel", []string{"--driver-fault", "ignore-cancel"}, sanity.VerdictFail},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			seeds := make([]int, 20)
			for i := range seeds {
				seeds[i] = i + 1
			}
			eachAtOnce(t, seeds, func(seed int) string { return fmt.Sprint("seed ", seed) }, func(t *testing.T, seed int) {
				args := append([]string{"--driver-backend", "memory", "--label-filter", "TIME-002", "--seed", fmt.Sprint(seed)}, c.fault...)
				r := sanityRun(t, time.Minute, args...)
				rr, _ := r.result.Rule("TIME-002")
				for _, cs := range rr.Cases {
					if cs.Verdict != c.want {
						t.Errorf("seed %d: TIME-002 %s is %s, want %s: %s %v", seed, cs.Name, cs.Verdict, c.want, cs.Message, rr.Notes)
					}
				}
			})
		})
	}
}

// byConstruction are the faults of the defect classes the suite once
// caught on some seeds only, or not at all, and now checks by
// construction: the rule of each must fail on every seed.
var byConstruction = []string{
	"unfence-lifts-around", "fence-replaces-inside", "fence-absorbed", "one-fence-per-address",
	"ipv6-wide-as-64", "ipv6-nibble", "keep-mapped-wide", "unmap-keeps-length",
	"auth-any-key", "auth-key-fold-case", "auth-trim", "param-fold-case", "param-trim", "param-prefix", "param-any-key", "leak-near-miss",
	"capacity", "clients-mapped", "clients-ipv6",
}

// TestEveryClassFailsOnEverySeed runs the proofs of those faults again
// with more seeds (TestEveryFaultFailsItsRules runs each with one), each
// narrowed to the rules the proof fails: every one of them fails on every
// seed.
func TestEveryClassFailsOnEverySeed(t *testing.T) {
	t.Parallel()
	type run struct {
		fault.Proof
		seed int
	}
	var runs []run
	for i, f := range fault.All() {
		if !slices.Contains(byConstruction, f.Name) {
			continue
		}
		for j, p := range f.Proofs {
			runs = append(runs, run{p, 7*i + j + 2}, run{p, 7*i + j + 3})
		}
	}
	eachAtOnce(t, runs, func(r run) string { return fmt.Sprintf("%s seed %d", r.Run(), r.seed) }, func(t *testing.T, p run) {
		args := append([]string{"--driver-backend", "memory", "--driver-fault", p.Spec, "--seed", fmt.Sprint(p.seed), "--label-filter", strings.Join(p.Fails, " || ")}, p.Flags...)
		r := sanityRun(t, 2*time.Minute, args...)
		if r.Exit != 1 {
			t.Fatalf("exit %d, want 1:\n%s", r.Exit, clitest.Tail(r.Out))
		}
		for _, id := range p.Fails {
			if rr, _ := r.result.Rule(id); rr.Verdict != sanity.VerdictFail {
				t.Errorf("%s is %s, want FAIL: %s", id, rr.Verdict, rr.Reason)
			}
		}
	})
}
