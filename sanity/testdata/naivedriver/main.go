// Command naivedriver is a FenceController written the way a first attempt
// often is, independently of fenceproof's reference driver: a map of the
// strings it was given, checked with net.ParseCIDR one element at a time.
// The suite's tests run it to show that the verdict holds for a driver that
// is not ours: the rules it meets pass, and the ones it breaks fail.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"sync"

	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type server struct {
	fence.UnimplementedFenceControllerServer
	identity.UnimplementedIdentityServer
	mu     sync.Mutex
	fenced map[string]bool
}

func (s *server) GetIdentity(context.Context, *identity.GetIdentityRequest) (*identity.GetIdentityResponse, error) {
	return &identity.GetIdentityResponse{Name: "naive.example.com", VendorVersion: "0.0.1"}, nil
}

func (s *server) GetCapabilities(context.Context, *identity.GetCapabilitiesRequest) (*identity.GetCapabilitiesResponse, error) {
	return &identity.GetCapabilitiesResponse{Capabilities: []*identity.Capability{{
		Type: &identity.Capability_NetworkFence_{NetworkFence: &identity.Capability_NetworkFence{Type: identity.Capability_NetworkFence_NETWORK_FENCE}},
	}}}, nil
}

func (s *server) Probe(context.Context, *identity.ProbeRequest) (*identity.ProbeResponse, error) {
	return &identity.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

// apply walks the list and changes the map element by element: a bad
// element is found only after the ones before it were applied.
func (s *server) apply(cidrs []*fence.CIDR, fenced bool) error {
	if len(cidrs) == 0 {
		return status.Error(codes.InvalidArgument, "no cidrs")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range cidrs {
		if _, _, err := net.ParseCIDR(c.GetCidr()); err != nil {
			return status.Errorf(codes.InvalidArgument, "bad cidr %q", c.GetCidr())
		}
		if fenced {
			s.fenced[c.GetCidr()] = true
		} else {
			delete(s.fenced, c.GetCidr())
		}
	}
	return nil
}

func (s *server) FenceClusterNetwork(_ context.Context, r *fence.FenceClusterNetworkRequest) (*fence.FenceClusterNetworkResponse, error) {
	return &fence.FenceClusterNetworkResponse{}, s.apply(r.GetCidrs(), true)
}

func (s *server) UnfenceClusterNetwork(_ context.Context, r *fence.UnfenceClusterNetworkRequest) (*fence.UnfenceClusterNetworkResponse, error) {
	return &fence.UnfenceClusterNetworkResponse{}, s.apply(r.GetCidrs(), false)
}

func (s *server) ListClusterFence(context.Context, *fence.ListClusterFenceRequest) (*fence.ListClusterFenceResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*fence.CIDR
	for c := range s.fenced {
		out = append(out, &fence.CIDR{Cidr: c})
	}
	return &fence.ListClusterFenceResponse{Cidrs: out}, nil
}

func main() {
	sock := flag.String("socket", "/tmp/naive.sock", "unix socket path")
	flag.Parse()
	_ = os.Remove(*sock)
	lis, err := net.Listen("unix", *sock)
	if err != nil {
		log.Fatal(err)
	}
	g := grpc.NewServer()
	s := &server{fenced: map[string]bool{}}
	fence.RegisterFenceControllerServer(g, s)
	identity.RegisterIdentityServer(g, s)
	log.Fatal(g.Serve(lis))
}
