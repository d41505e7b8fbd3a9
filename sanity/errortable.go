package sanity

import (
	"context"
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
)

// The spec's error table, one rule per row that a client can provoke, and the
// rule that secrets never leak into errors. This file is where a reader finds
// every error-table check.

// tableCodes are the codes of the spec's error table.
var tableCodes = []string{"InvalidArgument", "Unimplemented", "Unauthenticated", "Unknown"}

// sentinel is a secret value no driver can know; it must never come back.
const sentinel = "fenceproof-sentinel-9f2c41d7"

// badCreds is one way of spoiling a request's credentials, by name: the name
// says what was done, never a value.
type badCreds struct {
	name string
	mod  mod
}

func describeErrorTable(s *State) {
	Context("error table", func() {
		table(s, "ERR-001", func(ctx context.Context, rpc rpcCall) {
			expectCode(rpc.call(ctx, s, nil), rpc.name+" with no cidrs", "InvalidArgument")
			expectCode(rpc.call(ctx, s, []string{}), rpc.name+" with an empty cidrs list", "InvalidArgument")
		}, Entry("FenceClusterNetwork", fenceRPCs[0]), Entry("UnfenceClusterNetwork", fenceRPCs[1]))

		table(s, "ERR-002", func(ctx context.Context, rpc rpcCall) {
			s.needParams()
			var bad []badCreds
			for _, key := range sortedKeys(s.cfg.Parameters) {
				bad = append(bad, badCreds{"without parameter " + key, withoutParam(key)}, badCreds{"with parameter " + key + " empty", paramValue(key, "")})
				for _, k := range keyVariants(key) {
					bad = append(bad, badCreds{fmt.Sprintf("with the valid value of parameter %s %s, not under %s", key, k.name, key), moveParam(key, k.value)})
				}
			}
			s.expectRejected(ctx, rpc, bad, "InvalidArgument")
		}, rpcEntries()...)

		table(s, "ERR-007", func(ctx context.Context, rpc rpcCall) {
			s.needParams()
			var bad []badCreds
			for _, key := range sortedKeys(s.cfg.Parameters) {
				for _, m := range paramMisses(s.cfg.Parameters[key]) {
					bad = append(bad, badCreds{fmt.Sprintf("with parameter %s %s", key, m.name), paramValue(key, m.value)})
				}
			}
			for _, sw := range swappedValues(s.cfg.Parameters) {
				bad = append(bad, badCreds{"with the values of two parameters swapped (" + strings.Join(changedKeys(s.cfg.Parameters, sw), " and ") + ")", setParams(sw)})
			}
			s.expectRejected(ctx, rpc, bad, "InvalidArgument")
		}, rpcEntries()...)

		table(s, "ERR-003", func(ctx context.Context, rpc rpcCall) {
			s.needSecrets()
			bad := []badCreds{{"without any secret", noSecrets()}}
			if len(s.cfg.Secrets) > 1 {
				for _, key := range sortedKeys(s.cfg.Secrets) {
					bad = append(bad, badCreds{"without secret " + key + " (the others valid)", withoutSecret(key)})
				}
			}
			for _, key := range sortedKeys(s.cfg.Secrets) {
				bad = append(bad, badCreds{"with secret " + key + " empty", secretValue(key, "")})
				for _, k := range keyVariants(key) {
					bad = append(bad, badCreds{fmt.Sprintf("with the valid value of secret %s %s, not under %s", key, k.name, key), moveSecret(key, k.value)})
				}
			}
			s.expectRejected(ctx, rpc, bad, "Unauthenticated", "InvalidArgument")
		}, rpcEntries()...)

		table(s, "ERR-004", func(ctx context.Context, rpc rpcCall) {
			s.needSecrets()
			bad := []badCreds{{"with every secret replaced by an unrelated value", wrongSecrets(sentinel)}}
			for _, key := range sortedKeys(s.cfg.Secrets) {
				misses, untried := nearMisses(s.cfg.Secrets[key])
				for _, m := range misses {
					bad = append(bad, badCreds{fmt.Sprintf("with secret %s %s (the others valid)", key, m.name), secretValue(key, m.value)})
				}
				if len(untried) > 0 {
					note("secret %s: %s", key, strings.Join(untried, "; "))
				}
			}
			for _, sw := range swappedValues(s.cfg.Secrets) {
				bad = append(bad, badCreds{"with the values of two secrets swapped (" + strings.Join(changedKeys(s.cfg.Secrets, sw), " and ") + ")", setSecrets(sw)})
			}
			s.expectRejected(ctx, rpc, bad, "Unauthenticated")
		}, rpcEntries()...)

		table(s, "ERR-005", func(ctx context.Context, bad badRequest) {
			var leaks []string
			accepted := 0
			for _, sent := range bad.send(ctx, s) {
				settleCut(sent.err)
				if sent.err == nil {
					accepted++
				} else if echoed := echoedSecrets(rawMessage(sent.err)); len(echoed) > 0 {
					leaks = append(leaks, fmt.Sprintf("%s: the error message contains the value of %s (redacted in this report)", sent.name, strings.Join(echoed, ", ")))
				}
			}
			check(len(leaks) == 0, "%s", strings.Join(leaks, "; "))
			if accepted > 0 {
				note("%s: the driver accepted %d requests, so there was no error message to check", bad.name, accepted)
			}
		}, badRequestEntries()...)

		table(s, "ERR-006", func(ctx context.Context, bad badRequest) {
			for _, sent := range bad.send(ctx, s) {
				if sent.err == nil && bad.mayPass {
					note("%s: the driver accepted the request", sent.name)
					continue
				}
				expectCode(sent.err, sent.name, tableCodes...)
			}
		}, badRequestEntries()...)
	})
}

// changedKeys are the keys whose values differ between two maps, sorted.
func changedKeys(a, b map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(a) {
		if a[k] != b[k] {
			out = append(out, k)
		}
	}
	return out
}

// expectRejected sends rpc once per way of spoiling its credentials and
// expects one of the codes each time, and that nothing changed: a spoiled
// Fence fences nothing, a spoiled Unfence leaves its block fenced. The
// fences are read once, after every attempt.
func (s *State) expectRejected(ctx context.Context, rpc rpcCall, bad []badCreds, want ...string) {
	GinkgoHelper()
	s.needRPC(rpc.name)
	var failures []string
	var notFenced, stillFenced []string
	var target []string
	if rpc.name == "UnfenceClusterNetwork" {
		target = s.v4(1, 32)
		expectOK(s.fence(ctx, target), "FenceClusterNetwork of "+target[0]+" (to unfence it with spoiled credentials)")
		stillFenced = target
	}
	for _, b := range bad {
		block := target
		if rpc.name == "FenceClusterNetwork" {
			block = s.v4(1, 32)
			notFenced = append(notFenced, block...)
		}
		err := rpc.call(ctx, s, block, b.mod)
		settleCut(err)
		names := make([]string, len(want))
		for i, w := range want {
			names[i] = specName(w)
		}
		switch {
		case err == nil:
			failures = append(failures, fmt.Sprintf("%s %s: expected %s, got OK", rpc.name, b.name, strings.Join(names, " or ")))
		case !slices.Contains(want, codeName(err)):
			failures = append(failures, fmt.Sprintf("%s %s: expected %s, got %s: %s", rpc.name, b.name, strings.Join(names, " or "), codeSpec(err), errText(err)))
		}
	}
	if len(failures) > 0 {
		failf("%d of %d requests were not rejected as the error table says: %s", len(failures), len(bad), strings.Join(failures, "; "))
	}
	if len(notFenced)+len(stillFenced) > 0 {
		if s.stateSource() == SourceNone {
			notRun("every request was rejected with the right code; whether they changed nothing could not be read: %s", s.stateGap())
		}
		v := s.readFences(ctx, "after the rejected requests")
		for _, b := range notFenced {
			check(!v.has(b), "%s is listed after a %s that was rejected", b, rpc.name)
		}
		for _, b := range stillFenced {
			check(v.has(b), "%s is no longer listed after an %s that was rejected", b, rpc.name)
		}
	}
}

// needParams ends a case when no required parameters are configured: the
// driver is taken to require none.
func (s *State) needParams() {
	GinkgoHelper()
	if len(s.cfg.Parameters) == 0 {
		notSupported("no required parameters are configured, so the driver is taken to require none (give them with --param key=value or in the config file)")
	}
}

// needSecrets ends a case when no secrets are configured: the driver is
// taken to authenticate nothing.
func (s *State) needSecrets() {
	GinkgoHelper()
	if len(s.cfg.Secrets) == 0 {
		notSupported("no secrets are configured, so the driver is taken to authenticate nothing (give them with --secret key=value, --secrets-file or in the config file)")
	}
}

// needRPC ends a case for an RPC the driver legitimately does not serve:
// ListClusterFence under profile listClusterFence=optional, GetFenceClients
// without GET_CLIENTS_TO_FENCE.
func (s *State) needRPC(name string) {
	GinkgoHelper()
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

// badRequest is a kind of request a conforming driver rejects (or, where
// mayPass is set, may accept because the profile leaves it open, or
// because another rule judges it); send sends one or several.
type badRequest struct {
	name    string
	mayPass bool
	send    func(ctx context.Context, s *State) []sentRequest
}

// sentRequest is one request sent and its answer.
type sentRequest struct {
	name string
	err  error
}

// one is a badRequest's send of a single request.
func one(name string, send func(ctx context.Context, s *State) error) badRequest {
	return badRequest{name: name, send: func(ctx context.Context, s *State) []sentRequest {
		return []sentRequest{{name, send(ctx, s)}}
	}}
}

// eachSecretVariant sends a Fence of a fresh block with every variant of
// every secret the credential rules send: the near misses, and each valid
// value under other keys. The error messages are where an echo of a nearly
// valid secret hides.
func eachSecretVariant(ctx context.Context, s *State) []sentRequest {
	var out []sentRequest
	for _, key := range sortedKeys(s.cfg.Secrets) {
		misses, _ := nearMisses(s.cfg.Secrets[key])
		for _, m := range misses {
			name := fmt.Sprintf("Fence with secret %s %s", key, m.name)
			out = append(out, sentRequest{name, s.fence(ctx, s.v4(1, 32), secretValue(key, m.value))})
		}
		for _, k := range keyVariants(key) {
			name := fmt.Sprintf("Fence with the valid value of secret %s %s", key, k.name)
			out = append(out, sentRequest{name, s.fence(ctx, s.v4(1, 32), moveSecret(key, k.value))})
		}
	}
	return out
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
	mayPass := func(b badRequest) badRequest { b.mayPass = true; return b }
	bad := []badRequest{
		one("Fence with no cidrs", func(ctx context.Context, s *State) error { return s.fence(ctx, nil) }),
		one("Unfence with no cidrs", func(ctx context.Context, s *State) error { return s.unfence(ctx, nil) }),
		one("Fence of a malformed CIDR", func(ctx context.Context, s *State) error {
			return s.fence(ctx, []string{"not-a-cidr"})
		}),
		one("Unfence of a malformed CIDR", func(ctx context.Context, s *State) error {
			return s.unfence(ctx, []string{"198.51.100.0/33"})
		}),
		one("Fence of a malformed CIDR with sentinel secrets", func(ctx context.Context, s *State) error {
			return s.fence(ctx, []string{"300.1.1.1/32"}, sentinelSecrets(s))
		}),
		mayPass(one("List with sentinel secrets", func(ctx context.Context, s *State) error {
			s.needRPC("ListClusterFence")
			_, err := s.list(ctx, sentinelSecrets(s))
			return err
		})),
		mayPass(one("Fence with sentinel secrets", func(ctx context.Context, s *State) error {
			return s.fence(ctx, s.v4(1, 32), sentinelSecrets(s))
		})),
		mayPass(one("Fence without secrets", func(ctx context.Context, s *State) error {
			return s.fence(ctx, s.v4(1, 32), noSecrets())
		})),
		// Accepting them is ERR-003's and ERR-004's to judge.
		{name: "Fences with every variant of every secret", mayPass: true, send: eachSecretVariant},
	}
	var out []TableEntry
	for _, b := range bad {
		out = append(out, Entry(b.name, b))
	}
	return out
}

// expectNotFenced checks that none of the blocks is listed.
func (s *State) expectNotFenced(ctx context.Context, blocks []string, when string) {
	GinkgoHelper()
	v := s.readFences(ctx, when)
	for _, b := range blocks {
		check(!v.has(b), "%s: %s is listed as fenced", when, show(b))
	}
}

// expectFenced checks that every block is listed (in any spelling of it).
func (s *State) expectFenced(ctx context.Context, blocks []string, when string) {
	GinkgoHelper()
	v := s.readFences(ctx, when)
	var missing []string
	for _, b := range blocks {
		if !v.has(b) {
			missing = append(missing, b)
		}
	}
	check(len(missing) == 0, "%s: %s not listed (the suite's entries listed: %s)", when, showAll(missing), showFew(s.ours(v.raw)))
}

// stateGap says why the fences cannot be read.
func (s *State) stateGap() string {
	if s.listMissing {
		return "ListClusterFence is not implemented and no --observe-command was given"
	}
	return fmt.Sprintf("%v and no --observe-command was given", s.listErr)
}
