package sanity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The spec's error table, one rule per row that a client can provoke, and the
// rule that secrets never leak into errors. This file is where a reader finds
// every error-table check.

// tableCodes are the codes of the spec's error table.
var tableCodes = []string{"InvalidArgument", "Unimplemented", "Unauthenticated", "Unknown"}

// sentinel is a secret value no driver can know; it must never come back.
const sentinel = "fenceproof-sentinel-9f2c41d7"

// credCase is one way of spoiling a request's credentials for one RPC.
type credCase struct {
	rpc   rpcCall
	param string
}

func describeErrorTable(s *State) {
	Context("error table", func() {
		table(s, "ERR-001", func(ctx context.Context, rpc rpcCall) {
			expectCode(rpc.call(ctx, s, nil), rpc.name+" with no cidrs", "InvalidArgument")
			expectCode(rpc.call(ctx, s, []string{}), rpc.name+" with an empty cidrs list", "InvalidArgument")
		}, Entry("FenceClusterNetwork", fenceRPCs[0]), Entry("UnfenceClusterNetwork", fenceRPCs[1]))

		if len(s.cfg.Parameters) == 0 {
			s.it("ERR-002", func(context.Context) {
				skipBecause("no required parameters are configured (give them with --param key=value or in the config file)")
			})
		} else {
			var entries []TableEntry
			for _, key := range slices.Sorted(maps.Keys(s.cfg.Parameters)) {
				for _, rpc := range fenceRPCs {
					entries = append(entries, Entry(fmt.Sprintf("%s without %s", rpc.name, key), credCase{rpc, key}))
				}
			}
			table(s, "ERR-002", func(ctx context.Context, c credCase) {
				s.needRPC(c.rpc.name)
				block := s.v4(1, 32)
				expectCode(c.rpc.call(ctx, s, block, withoutParam(c.param)), c.rpc.name+" without parameter "+c.param, "InvalidArgument")
				s.expectNotFenced(ctx, block, "after a rejected "+c.rpc.name)
			}, entries...)
		}

		if len(s.cfg.Parameters) == 0 {
			s.it("ERR-007", func(context.Context) {
				skipBecause("no required parameters are configured (give them with --param key=value or in the config file)")
			})
		} else {
			var entries []TableEntry
			for _, key := range slices.Sorted(maps.Keys(s.cfg.Parameters)) {
				for _, rpc := range fenceRPCs[:2] {
					entries = append(entries, Entry(fmt.Sprintf("%s with an unknown %s", rpc.name, key), credCase{rpc, key}))
				}
			}
			table(s, "ERR-007", func(ctx context.Context, c credCase) {
				block := s.v4(1, 32)
				bad := func(cr *creds) { cr.params[c.param] = "fenceproof-no-such-" + c.param }
				expectCode(c.rpc.call(ctx, s, block, bad), c.rpc.name+" with an unknown value of "+c.param, "InvalidArgument")
				s.expectNotFenced(ctx, block, "after a rejected "+c.rpc.name)
			}, entries...)
		}

		table(s, "ERR-003", func(ctx context.Context, rpc rpcCall) {
			if len(s.cfg.Secrets) == 0 {
				skipBecause("no secrets are configured (give them with --secret key=value or in the config file)")
			}
			s.needRPC(rpc.name)
			block := s.v4(1, 32)
			expectCode(rpc.call(ctx, s, block, noSecrets()), rpc.name+" without secrets", "Unauthenticated", "InvalidArgument")
			s.expectNotFenced(ctx, block, "after "+rpc.name+" without secrets")
		}, rpcEntries()...)

		table(s, "ERR-004", func(ctx context.Context, rpc rpcCall) {
			if len(s.cfg.Secrets) == 0 {
				skipBecause("no secrets are configured (give them with --secret key=value or in the config file)")
			}
			s.needRPC(rpc.name)
			block := s.v4(1, 32)
			expectCode(rpc.call(ctx, s, block, wrongSecrets(sentinel)), rpc.name+" with wrong secrets", "Unauthenticated")
			s.expectNotFenced(ctx, block, "after "+rpc.name+" with wrong secrets")
		}, rpcEntries()...)

		table(s, "ERR-005", func(ctx context.Context, bad badRequest) {
			err := bad.send(ctx, s)
			if err == nil {
				skipBecause("the driver accepted the request, so there was no error message to check")
			}
			echoed, short := echoedSecrets(rawMessage(err), s.cfg.Secrets)
			if len(short) > 0 {
				note("secrets %v are shorter than %d characters and were not looked for in error messages", short, minSecretLen)
			}
			if len(echoed) > 0 {
				Fail(fmt.Sprintf("%s: the error message contains the value of secrets %v (redacted in this report)", bad.name, echoed))
			}
		}, badRequestEntries()...)

		table(s, "ERR-006", func(ctx context.Context, bad badRequest) {
			err := bad.send(ctx, s)
			if err == nil && bad.mayPass {
				skipBecause("the driver accepted the request (%s)", bad.name)
			}
			expectCode(err, bad.name, tableCodes...)
		}, badRequestEntries()...)
	})
}

// needRPC skips a case for an RPC the driver legitimately does not serve:
// ListClusterFence under profile listClusterFence=optional, GetFenceClients
// without GET_CLIENTS_TO_FENCE.
func (s *State) needRPC(name string) {
	switch name {
	case "ListClusterFence":
		if s.listMissing {
			notSupported("ListClusterFence is not implemented (profile listClusterFence: optional)")
		}
	case "GetFenceClients":
		s.needClients()
	}
}

func rpcEntries() []TableEntry {
	var out []TableEntry
	for _, rpc := range fenceRPCs {
		out = append(out, Entry(rpc.name, rpc))
	}
	return out
}

// badRequest is a request a conforming driver rejects (or, where mayPass is
// set, may accept because the profile leaves it open).
type badRequest struct {
	name    string
	mayPass bool
	send    func(ctx context.Context, s *State) error
}

// sentinelSecrets are the configured secret keys with the sentinel as value,
// or one sentinel secret when none are configured.
func sentinelSecrets(s *State) mod {
	if len(s.cfg.Secrets) > 0 {
		return wrongSecrets(sentinel)
	}
	return func(c *creds) { c.secrets = map[string]string{"fenceproof-probe": sentinel} }
}

func badRequestEntries() []TableEntry {
	bad := []badRequest{
		{name: "Fence with no cidrs", send: func(ctx context.Context, s *State) error { return s.fence(ctx, nil) }},
		{name: "Unfence with no cidrs", send: func(ctx context.Context, s *State) error { return s.unfence(ctx, nil) }},
		{name: "Fence of a malformed CIDR", send: func(ctx context.Context, s *State) error {
			return s.fence(ctx, []string{"not-a-cidr"})
		}},
		{name: "Unfence of a malformed CIDR", send: func(ctx context.Context, s *State) error {
			return s.unfence(ctx, []string{"198.51.100.0/33"})
		}},
		{name: "Fence of a malformed CIDR with sentinel secrets", send: func(ctx context.Context, s *State) error {
			return s.fence(ctx, []string{"300.1.1.1/32"}, sentinelSecrets(s))
		}},
		{name: "List with sentinel secrets", mayPass: true, send: func(ctx context.Context, s *State) error {
			s.needRPC("ListClusterFence")
			_, err := s.list(ctx, sentinelSecrets(s))
			return err
		}},
		{name: "Fence with sentinel secrets", mayPass: true, send: func(ctx context.Context, s *State) error {
			return s.fence(ctx, s.v4(1, 32), sentinelSecrets(s))
		}},
		{name: "Fence without secrets", mayPass: true, send: func(ctx context.Context, s *State) error {
			return s.fence(ctx, s.v4(1, 32), noSecrets())
		}},
	}
	var out []TableEntry
	for _, b := range bad {
		out = append(out, Entry(b.name, b))
	}
	return out
}

// expectNotFenced asserts that none of the blocks is listed.
func (s *State) expectNotFenced(ctx context.Context, blocks []string, when string) {
	GinkgoHelper()
	if s.stateSource() == SourceNone {
		return
	}
	listed, err := s.observed(ctx)
	expectOK(err, "ListClusterFence "+when)
	for _, b := range blocks {
		Expect(canonicalAll(listed)).NotTo(ContainElement(canonical(b)), "%s: %s is listed as fenced", when, b)
	}
}

func canonicalAll(cidrs []string) []string {
	out := make([]string, len(cidrs))
	for i, c := range cidrs {
		out[i] = canonical(strings.TrimSpace(c))
	}
	return out
}
