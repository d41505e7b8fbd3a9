// Command vaultdriver is a second FenceController written independently of
// fenceproof's reference driver, the way a careful vendor would: it requires
// secrets on every RPC and a clusterID parameter with a known value, keeps
// its fences in a text file (one CIDR per line, rewritten atomically on
// every change) and reloads them on start, so it survives a restart.
//
// --defect NAME turns it into a variant with one defect class of the
// conformance suite's issue 12; the suite's tests show each variant fails
// the matching rule and the faithful driver conforms. --no-list serves
// Fence and Unfence only (like ceph-csi), with the state file read by the
// suite's --observe-command.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// defects are the variants, one per defect class.
var defects = map[string]string{
	"list-native":      "List spells fences as storage blocklist entries (address:0/nonce)",
	"capacity":         "fences beyond 100 are acknowledged and dropped",
	"expire":           "fences lapse one second after they were made",
	"forget":           "the state file is not read on start",
	"hostbits-unfence": "Unfence does not clear host bits, so it removes nothing for such a spelling",
	"mapped":           "IPv4-mapped IPv6 is kept as an IPv6 fence",
	"auth-fence-only":  "only Fence checks secrets",
	"partial-apply":    "a mixed request applies its valid blocks before failing",
	"param-presence":   "the clusterID value is not checked, only its presence",
}

type server struct {
	fence.UnimplementedFenceControllerServer
	identity.UnimplementedIdentityServer

	secrets   map[string]string
	clusterID string
	statePath string
	defect    string
	noList    bool

	mu     sync.Mutex
	fenced map[netip.Prefix]time.Time
}

func (s *server) GetIdentity(context.Context, *identity.GetIdentityRequest) (*identity.GetIdentityResponse, error) {
	return &identity.GetIdentityResponse{Name: "vault.storage.example.com", VendorVersion: "1.4.2"}, nil
}

func (s *server) GetCapabilities(context.Context, *identity.GetCapabilitiesRequest) (*identity.GetCapabilitiesResponse, error) {
	return &identity.GetCapabilitiesResponse{Capabilities: []*identity.Capability{{
		Type: &identity.Capability_NetworkFence_{NetworkFence: &identity.Capability_NetworkFence{Type: identity.Capability_NetworkFence_NETWORK_FENCE}},
	}}}, nil
}

func (s *server) Probe(context.Context, *identity.ProbeRequest) (*identity.ProbeResponse, error) {
	return &identity.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

type creds interface {
	GetSecrets() map[string]string
	GetParameters() map[string]string
}

// check authenticates and validates the parameters; messages name keys only.
func (s *server) check(r creds, isFence bool) error {
	if isFence || s.defect != "auth-fence-only" {
		for k, v := range s.secrets {
			if got, ok := r.GetSecrets()[k]; !ok || got != v {
				return status.Errorf(codes.Unauthenticated, "secret %q missing or wrong", k)
			}
		}
	}
	id, ok := r.GetParameters()["clusterID"]
	if !ok || id == "" {
		return status.Error(codes.InvalidArgument, "parameter clusterID is required")
	}
	if id != s.clusterID && s.defect != "param-presence" {
		return status.Error(codes.InvalidArgument, "parameter clusterID names no cluster this driver serves")
	}
	return nil
}

// parse validates every block before anything changes.
func (s *server) parse(cidrs []*fence.CIDR) ([]netip.Prefix, error) {
	if len(cidrs) == 0 {
		return nil, status.Error(codes.InvalidArgument, "cidrs is required")
	}
	var out []netip.Prefix
	for i, c := range cidrs {
		p, err := netip.ParsePrefix(c.GetCidr())
		if err == nil && p.Addr().Is4In6() && s.defect != "mapped" {
			err = fmt.Errorf("IPv4-mapped IPv6 is not accepted")
		}
		if err != nil {
			return out, status.Errorf(codes.InvalidArgument, "cidrs[%d]: %v", i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (s *server) change(cidrs []*fence.CIDR, add bool) error {
	ps, err := s.parse(cidrs)
	if err != nil && !(s.defect == "partial-apply" && len(ps) > 0) {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range ps {
		k := p.Masked()
		if !add && s.defect == "hostbits-unfence" {
			k = p
		}
		switch {
		case !add:
			delete(s.fenced, k)
		case s.defect == "capacity" && len(s.fenced) >= 100:
		default:
			if _, ok := s.fenced[k]; !ok {
				s.fenced[k] = time.Now()
			}
		}
	}
	if perr := s.save(); perr != nil {
		return status.Errorf(codes.Internal, "saving state: %v", perr)
	}
	return err
}

func (s *server) FenceClusterNetwork(_ context.Context, r *fence.FenceClusterNetworkRequest) (*fence.FenceClusterNetworkResponse, error) {
	if err := s.check(r, true); err != nil {
		return nil, err
	}
	return &fence.FenceClusterNetworkResponse{}, s.change(r.GetCidrs(), true)
}

func (s *server) UnfenceClusterNetwork(_ context.Context, r *fence.UnfenceClusterNetworkRequest) (*fence.UnfenceClusterNetworkResponse, error) {
	if err := s.check(r, false); err != nil {
		return nil, err
	}
	return &fence.UnfenceClusterNetworkResponse{}, s.change(r.GetCidrs(), false)
}

func (s *server) ListClusterFence(_ context.Context, r *fence.ListClusterFenceRequest) (*fence.ListClusterFenceResponse, error) {
	if s.noList {
		return nil, status.Error(codes.Unimplemented, "ListClusterFence is not served")
	}
	if err := s.check(r, false); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &fence.ListClusterFenceResponse{}
	for _, p := range s.sorted() {
		if s.defect == "expire" && time.Since(s.fenced[p]) > time.Second {
			continue
		}
		c := p.String()
		if s.defect == "list-native" {
			c = fmt.Sprintf("%s/%d", netip.AddrPortFrom(p.Addr(), 0), 4000+p.Bits())
		}
		out.Cidrs = append(out.Cidrs, &fence.CIDR{Cidr: c})
	}
	return out, nil
}

func (s *server) GetFenceClients(_ context.Context, r *fence.GetFenceClientsRequest) (*fence.GetFenceClientsResponse, error) {
	if err := s.check(r, false); err != nil {
		return nil, err
	}
	return nil, status.Error(codes.Unimplemented, "GetFenceClients is not served")
}

func (s *server) sorted() []netip.Prefix {
	ps := make([]netip.Prefix, 0, len(s.fenced))
	for p := range s.fenced {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, netip.Prefix.Compare)
	return ps
}

// save writes the state file atomically: one CIDR per line.
func (s *server) save() error {
	var b strings.Builder
	for _, p := range s.sorted() {
		b.WriteString(p.String() + "\n")
	}
	tmp := s.statePath + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.statePath)
}

func (s *server) load() error {
	f, err := os.Open(s.statePath)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if p, err := netip.ParsePrefix(strings.TrimSpace(sc.Text())); err == nil {
			s.fenced[p] = time.Now()
		}
	}
	return sc.Err()
}

type kv map[string]string

func (m kv) String() string { return fmt.Sprint(len(m)) }
func (m kv) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" || val == "" {
		return fmt.Errorf("want key=value")
	}
	m[k] = val
	return nil
}

func main() {
	sock := flag.String("socket", "", "unix socket path")
	state := flag.String("state", "", "state file (one CIDR per line)")
	clusterID := flag.String("cluster-id", "", "the clusterID parameter value this driver serves")
	defect := flag.String("defect", "", "make a defective variant (see the defects table)")
	noList := flag.Bool("no-list", false, "serve Fence and Unfence only: ListClusterFence is UNIMPLEMENTED")
	secrets := kv{}
	flag.Var(secrets, "secret", "required secret key=value (repeatable)")
	flag.Parse()
	if *sock == "" || *state == "" || *clusterID == "" || len(secrets) == 0 {
		log.Fatal("--socket, --state, --cluster-id and --secret are required")
	}
	if _, ok := defects[*defect]; *defect != "" && !ok {
		log.Fatalf("unknown defect %q", *defect)
	}
	s := &server{secrets: secrets, clusterID: *clusterID, statePath: filepath.Clean(*state), defect: *defect, noList: *noList, fenced: map[netip.Prefix]time.Time{}}
	if *defect != "forget" {
		if err := s.load(); err != nil {
			log.Fatal(err)
		}
	}
	if err := s.save(); err != nil {
		log.Fatal(err)
	}
	_ = os.Remove(*sock)
	lis, err := net.Listen("unix", *sock)
	if err != nil {
		log.Fatal(err)
	}
	g := grpc.NewServer()
	fence.RegisterFenceControllerServer(g, s)
	identity.RegisterIdentityServer(g, s)
	go func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM, os.Interrupt)
		<-ch
		g.Stop()
	}()
	if err := g.Serve(lis); err != nil {
		log.Fatal(err)
	}
	_ = os.Remove(*sock)
}
