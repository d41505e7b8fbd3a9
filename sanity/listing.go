package sanity

import (
	"context"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// ListClusterFence rules, and the rule that checks fences without it.
var (
	ruleListAnswers = Rule{ID: "LIST-001", Level: Must, Labels: []string{"list", "ListClusterFence"},
		Title: "ListClusterFence answers OK (or UNIMPLEMENTED when the profile makes it optional)",
		Spec:  "ListClusterFence RPC call to provide a list of blocklisted/fenced clients."}
	ruleListCIDRs = Rule{ID: "LIST-002", Level: Must, Labels: []string{"list", "cidr", "ListClusterFence"},
		Title: "every listed entry, including those the suite did not make, is a CIDR block",
		Spec:  "message ListClusterFenceResponse { repeated CIDR cidrs = 1; } (storage-native address:port/nonce entries are not CIDR blocks)"}
	ruleBlindFences = Rule{ID: "FENCE-008", Level: Must, Labels: []string{"lifecycle", "FenceClusterNetwork", "UnfenceClusterNetwork"},
		Title: "valid fences and unfences (IPv4 and IPv6, narrow and wide, in the safe ranges) answer OK within the deadline, with or without List",
		Spec:  "FenceClusterNetwork RPC call to perform a fencing operation. (ceph-csi ran out of memory on an IPv6 /64)"}
)

func describeListing(s *State) {
	Context("ListClusterFence", func() {
		ruleListAnswers.It(s, func(ctx context.Context) {
			if s.listErr != nil {
				Fail(s.listErr.Error())
			}
			_, err := s.list(ctx)
			if codeName(err) == "Unimplemented" && s.cfg.Profile.ListClusterFence == Optional {
				notSupported("ListClusterFence is not implemented (profile listClusterFence: optional); state is read from: %s", s.stateSource())
			}
			expectOK(err, "ListClusterFence")
		})

		ruleListCIDRs.It(s, func(ctx context.Context) {
			s.needList()
			b := s.v4(1, 32)
			expectOK(s.fence(ctx, b), "FenceClusterNetwork of "+b[0])
			if v6 := s.v6(1, 128); s.fence(ctx, v6) != nil {
				note("IPv6 %s was not fenced: only IPv4 entries were made by the suite", v6[0])
			}
			listed, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			var bad []string
			for _, c := range listed {
				if _, perr := netip.ParsePrefix(c); perr != nil {
					bad = append(bad, quote(c))
				}
			}
			Expect(bad).To(BeEmpty(), "%d of %d listed entries are not CIDR blocks: %s", len(bad), len(listed), firstFew(bad))
		})

		Table(s, ruleBlindFences, func(ctx context.Context, c blockShape) {
			if c.v6 {
				s.needIPv6(ctx)
			}
			b := s.alloc.block(c.v6, c.bits).String()
			expectOK(s.fence(ctx, []string{b}), "FenceClusterNetwork of "+b)
			expectOK(s.unfence(ctx, []string{b}), "UnfenceClusterNetwork of "+b)
		},
			Entry("IPv4 /32", blockShape{false, 32}), Entry("IPv4 /25", blockShape{false, 25}),
			Entry("IPv6 /128", blockShape{true, 128}), Entry("IPv6 /64", blockShape{true, 64}), Entry("IPv6 /48", blockShape{true, 48}))
	})
}

// blockShape is the family and length of a block to allocate.
type blockShape struct {
	v6   bool
	bits int
}
