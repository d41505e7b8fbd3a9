package sanity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Rules checked at the end of the run over everything the suite did. They
// are registered last in an ordered container, so they see the whole run.
var (
	ruleDeadline = Rule{ID: "TIME-001", Level: Must, Labels: []string{"deadline"},
		Title: "every RPC answers within the RPC deadline",
		Spec:  "A CO calls every RPC with a deadline; a driver that does not answer blocks fencing of a failed node."}
	ruleCleanup = Rule{ID: "SUITE-001", Level: Must, Labels: []string{"cleanup", "ListClusterFence"},
		Title: "after cleanup none of the suite's blocks is fenced, and every fence that existed before the run is still there",
		Spec:  "UnfenceClusterNetwork RPC call to remove a list of CIDR blocks from the list of blocklisted/fenced clients."}
	ruleSecretsRun = Rule{ID: "SUITE-002", Level: Must, Labels: []string{"errors", "secrets"},
		Title: "no error message during the whole run contained a secret value",
		Spec:  "map<string, string> secrets = 2 [(csi.v1.csi_secret) = true];"}
	ruleCodesSeen = Rule{ID: "SUITE-003", Level: Info, Labels: []string{"errors"},
		Title: "the gRPC codes the driver answered with during the run",
		Spec:  "Error is Unknown | 2 UNKNOWN | Caller MUST study the logs before retrying."}
)

func describeHygiene(s *State) {
	Describe("Run hygiene", func() {
		ruleDeadline.It(s, func(ctx context.Context) {
			b := s.v4(1, 32)
			for _, call := range []func() error{
				func() error { _, err := s.getIdentity(ctx); return err },
				func() error { _, err := s.getCapabilities(ctx); return err },
				func() error { _, err := s.probe(ctx); return err },
				func() error { return s.fence(ctx, b) },
				func() error { _, err := s.list(ctx); return err },
				func() error { _, err := s.clients(ctx); return err },
				func() error { return s.unfence(ctx, b) },
			} {
				_ = call()
			}
			var hung []string
			var slowest Call
			for _, c := range s.Calls() {
				if c.Code == "DeadlineExceeded" {
					hung = append(hung, c.Method)
				}
				if c.Duration > slowest.Duration {
					slowest = c
				}
			}
			note("slowest RPC: %s in %s (deadline %s)", slowest.Method, slowest.Duration.Round(time.Millisecond), s.cfg.RPCTimeout.Duration)
			Expect(hung).To(BeEmpty(), "RPCs that did not answer within %s: %s", s.cfg.RPCTimeout.Duration, countWords(hung))
		})

		ruleCleanup.It(s, func(ctx context.Context) {
			if err := s.undo(ctx, 0); err != nil {
				Fail(err.Error())
			}
			s.needList()
			listed, err := s.list(ctx)
			expectOK(err, "ListClusterFence after cleanup")
			got := canonicalAll(listed)
			var left []string
			for _, b := range s.tracker.everFenced() {
				if slices.Contains(got, canonical(strings.TrimSpace(b))) && !slices.Contains(s.Preexisting, b) {
					left = append(left, b)
				}
			}
			Expect(left).To(BeEmpty(), "blocks the suite fenced are still fenced after cleanup")
			for _, p := range s.Preexisting {
				Expect(listed).To(ContainElement(p), "the fence %s that existed before the run is gone", p)
			}
		})

		ruleSecretsRun.It(s, func(context.Context) {
			values := []string{sentinel}
			for _, v := range s.cfg.Secrets {
				values = append(values, v)
			}
			for _, c := range s.Calls() {
				for _, v := range values {
					Expect(c.Message).NotTo(ContainSubstring(v), "a %s error message (%s) contained a secret value", c.Method, c.Code)
				}
			}
		})

		ruleCodesSeen.It(s, func(context.Context) {
			seen := map[string]int{}
			for _, c := range s.Calls() {
				seen[c.Method+" "+c.Code]++
			}
			for _, k := range slices.Sorted(maps.Keys(seen)) {
				note("%s x%d", k, seen[k])
			}
		})
	})
}

// countWords folds repeated names into "name xN".
func countWords(words []string) string {
	n := map[string]int{}
	for _, w := range words {
		n[w]++
	}
	var out []string
	for _, w := range slices.Sorted(maps.Keys(n)) {
		out = append(out, fmt.Sprintf("%s x%d", w, n[w]))
	}
	return strings.Join(out, ", ")
}
