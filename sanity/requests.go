package sanity

import (
	"context"
	"maps"

	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
)

// creds are the secrets and parameters one request carries. Request builders
// start from the configured valid ones; mods take them away or spoil them.
// This is the only place where secrets and parameters enter a request.
type creds struct {
	secrets map[string]string
	params  map[string]string
}

// mod changes the credentials of one request.
type mod func(*creds)

// noSecrets sends the request without any secret.
func noSecrets() mod { return func(c *creds) { c.secrets = nil } }

// wrongSecrets replaces every secret value with v.
func wrongSecrets(v string) mod {
	return func(c *creds) {
		for k := range c.secrets {
			c.secrets[k] = v
		}
	}
}

// withoutSecret drops one secret, keeping the others valid.
func withoutSecret(key string) mod { return func(c *creds) { delete(c.secrets, key) } }

// secretValue sets one secret to v, keeping the others valid.
func secretValue(key, v string) mod { return func(c *creds) { c.secrets[key] = v } }

// moveSecret sends the value of one secret under another key instead.
func moveSecret(key, to string) mod {
	return func(c *creds) { v := c.secrets[key]; delete(c.secrets, key); c.secrets[to] = v }
}

// moveParam sends the value of one parameter under another key instead.
func moveParam(key, to string) mod {
	return func(c *creds) { v := c.params[key]; delete(c.params, key); c.params[to] = v }
}

// setSecrets and setParams replace them all.
func setSecrets(m map[string]string) mod { return func(c *creds) { c.secrets = maps.Clone(m) } }
func setParams(m map[string]string) mod  { return func(c *creds) { c.params = maps.Clone(m) } }

// withoutParam drops one parameter.
func withoutParam(key string) mod { return func(c *creds) { delete(c.params, key) } }

// paramValue sets one parameter to v.
func paramValue(key, v string) mod { return func(c *creds) { c.params[key] = v } }

func (s *State) creds(mods []mod) creds {
	c := creds{secrets: maps.Clone(s.cfg.Secrets), params: maps.Clone(s.cfg.Parameters)}
	for _, m := range mods {
		m(&c)
	}
	return c
}

func cidrList(cidrs []string) []*fence.CIDR {
	out := make([]*fence.CIDR, len(cidrs))
	for i, c := range cidrs {
		out[i] = &fence.CIDR{Cidr: c}
	}
	return out
}

func strList(cidrs []*fence.CIDR) []string {
	out := make([]string, len(cidrs))
	for i, c := range cidrs {
		out[i] = c.GetCidr()
	}
	return out
}

// fence sends FenceClusterNetwork. Every string is tracked before the call,
// so that cleanup undoes it even when the driver answers with an error, and
// marked acknowledged when the driver answers OK.
func (s *State) fence(ctx context.Context, cidrs []string, mods ...mod) error {
	s.mustBeSafe(cidrs)
	s.noteFenced(cidrs)
	mark := s.tracker.add(cidrs...)
	c := s.creds(mods)
	ctx, cancel := s.rpcUnlessProbe(ctx)
	defer cancel()
	_, err := s.fc.FenceClusterNetwork(ctx, &fence.FenceClusterNetworkRequest{
		Parameters: c.params, Secrets: c.secrets, Cidrs: cidrList(cidrs)})
	s.tracker.settle(mark, len(cidrs), err)
	return err
}

// rpcUnlessProbe is rpc, except for a probe, which brings its own deadline.
func (s *State) rpcUnlessProbe(ctx context.Context) (context.Context, context.CancelFunc) {
	if ctx.Value(probeKey{}) != nil {
		return context.WithCancel(ctx)
	}
	return s.rpc(ctx)
}

// unfence sends UnfenceClusterNetwork.
func (s *State) unfence(ctx context.Context, cidrs []string, mods ...mod) error {
	c := s.creds(mods)
	ctx, cancel := s.rpcUnlessProbe(ctx)
	defer cancel()
	_, err := s.fc.UnfenceClusterNetwork(ctx, &fence.UnfenceClusterNetworkRequest{
		Parameters: c.params, Secrets: c.secrets, Cidrs: cidrList(cidrs)})
	return err
}

// list sends ListClusterFence and returns the blocks as the driver spelled them.
func (s *State) list(ctx context.Context, mods ...mod) ([]string, error) {
	c := s.creds(mods)
	ctx, cancel := s.rpc(ctx)
	defer cancel()
	r, err := s.fc.ListClusterFence(ctx, &fence.ListClusterFenceRequest{Parameters: c.params, Secrets: c.secrets})
	if err != nil {
		return nil, err
	}
	return strList(r.GetCidrs()), nil
}

// clients sends GetFenceClients.
func (s *State) clients(ctx context.Context, mods ...mod) ([]*fence.ClientDetails, error) {
	c := s.creds(mods)
	ctx, cancel := s.rpc(ctx)
	defer cancel()
	r, err := s.fc.GetFenceClients(ctx, &fence.GetFenceClientsRequest{Parameters: c.params, Secrets: c.secrets})
	if err != nil {
		return nil, err
	}
	return r.GetClients(), nil
}

func (s *State) getIdentity(ctx context.Context) (*identity.GetIdentityResponse, error) {
	ctx, cancel := s.rpc(ctx)
	defer cancel()
	return s.id.GetIdentity(ctx, &identity.GetIdentityRequest{})
}

func (s *State) getCapabilities(ctx context.Context) ([]*identity.Capability, error) {
	ctx, cancel := s.rpc(ctx)
	defer cancel()
	r, err := s.id.GetCapabilities(ctx, &identity.GetCapabilitiesRequest{})
	return r.GetCapabilities(), err
}

func (s *State) probe(ctx context.Context) (*identity.ProbeResponse, error) {
	ctx, cancel := s.rpc(ctx)
	defer cancel()
	return s.id.Probe(ctx, &identity.ProbeRequest{})
}

// rpcCall is one RPC the error-table rules send, by name.
type rpcCall struct {
	name string
	call func(ctx context.Context, s *State, cidrs []string, mods ...mod) error
}

// fenceRPCs are the FenceController RPCs that take secrets and parameters.
var fenceRPCs = []rpcCall{
	{"FenceClusterNetwork", func(ctx context.Context, s *State, cidrs []string, mods ...mod) error {
		return s.fence(ctx, cidrs, mods...)
	}},
	{"UnfenceClusterNetwork", func(ctx context.Context, s *State, cidrs []string, mods ...mod) error {
		return s.unfence(ctx, cidrs, mods...)
	}},
	{"ListClusterFence", func(ctx context.Context, s *State, _ []string, mods ...mod) error {
		_, err := s.list(ctx, mods...)
		return err
	}},
	{"GetFenceClients", func(ctx context.Context, s *State, _ []string, mods ...mod) error {
		_, err := s.clients(ctx, mods...)
		return err
	}},
}
