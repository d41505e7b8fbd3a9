package driver

import (
	"context"

	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fenceproof/fenceproof/driver/fault"
)

// identityServer implements identity.IdentityServer.
type identityServer struct {
	identity.UnimplementedIdentityServer
	d *Driver
}

// GetIdentity returns the driver name and version.
func (s *identityServer) GetIdentity(context.Context, *identity.GetIdentityRequest) (*identity.GetIdentityResponse, error) {
	if err := s.d.before("GetIdentity"); err != nil {
		return nil, err
	}
	return &identity.GetIdentityResponse{Name: s.d.identity(true).Name, VendorVersion: s.d.o.Version}, nil
}

// GetCapabilities advertises the controller service and network fencing.
func (s *identityServer) GetCapabilities(context.Context, *identity.GetCapabilitiesRequest) (*identity.GetCapabilitiesResponse, error) {
	if err := s.d.before("GetCapabilities"); err != nil {
		return nil, err
	}
	caps := []*identity.Capability{{Type: &identity.Capability_Service_{Service: &identity.Capability_Service{
		Type: identity.Capability_Service_CONTROLLER_SERVICE}}}}
	fenceCap := func(t identity.Capability_NetworkFence_Type) *identity.Capability {
		return &identity.Capability{Type: &identity.Capability_NetworkFence_{NetworkFence: &identity.Capability_NetworkFence{Type: t}}}
	}
	if s.d.identity(true).NetworkFence {
		caps = append(caps, fenceCap(identity.Capability_NetworkFence_NETWORK_FENCE))
	}
	if !s.d.o.DisableGetClients {
		caps = append(caps, fenceCap(identity.Capability_NetworkFence_GET_CLIENTS_TO_FENCE))
	}
	return &identity.GetCapabilitiesResponse{Capabilities: caps}, nil
}

// Probe reports readiness: ready once New has returned, and not ready while
// the reconciler sees enforcement differ from the store.
func (s *identityServer) Probe(ctx context.Context, _ *identity.ProbeRequest) (*identity.ProbeResponse, error) {
	if err := s.d.before("Probe"); err != nil {
		return nil, err
	}
	s.d.probeVerify(ctx)
	ready, _ := s.d.Ready()
	return &identity.ProbeResponse{Ready: wrapperspb.Bool(s.d.identity(ready).Ready)}, nil
}

// identity is what the Identity service answers, through the identity hook.
func (d *Driver) identity(ready bool) fault.Identity {
	id := fault.Identity{Name: d.o.Name, NetworkFence: true, Ready: ready}
	d.faults.Identity(&id)
	return id
}
