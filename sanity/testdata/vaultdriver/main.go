// Command vaultdriver is a second FenceController written independently of
// fenceproof's reference driver, the way a careful vendor would: it requires
// secrets on every RPC and a clusterID parameter with a known value, keeps
// its fences in a text file (one CIDR per line, rewritten atomically on
// every change) and reloads them on start, so it survives a restart.
//
// --defect NAME turns it into a variant with one defect class; the suite's
// tests show each variant fails the matching rule and the faithful driver
// conforms. --no-list serves Fence and Unfence only, with
// the state file read by the suite's --observe-command. --list-delay makes
// List slow, as a storage with a long blocklist is; --clients serves
// GetFenceClients with one client.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"maps"
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
	"echo-secret":      "the secrets it got are echoed in error messages, a List entry, the client id and the identity",
	"hostile-bytes":    "NUL, terminal escape, carriage-return, bidirectional and non-UTF-8 bytes in error messages, a List entry, the client id and the identity",
	"dup-list":         "List names its first fence twice",
	"fence-internal":   "every Fence answers INTERNAL",
	"aggregate":        "a Fence of ten or more /32s inside one /24 fences that /24 instead (over-fencing)",
	"client-subnet":    "GetFenceClients reports the client's interface address with its subnet length (192.0.2.200/24)",
	"late-work":        "a Fence or Unfence whose client gives up before the storage answered is retried in the background and applied later",
	"ignore-cancel":    "a Fence or Unfence sends the storage one command per block, in the background, and does not stop when its client gives up",
	"any-key":          "a secret is accepted when its valid value comes under any key",
	"param-fold-case":  "the clusterID value is compared without regard to case",
	"ipv4-cap":         "IPv4 fences beyond 200 are acknowledged and dropped; IPv6 ones are not",
	"persist-first":    "the state file keeps only the first 100 fences",
	"rebuild":          "after a second without a change the fences are reloaded from the state file, entry by entry, and List shows what is loaded so far",
	"unfence-lifts":    "an Unfence of a block that is not fenced lifts the narrowest fence around it",
	"wide-as-64":       "IPv6 blocks wider than /64 are kept as their first /64",
	"clients-mapped":   "GetFenceClients reports the client as ::ffff:192.0.2.200/128, a spelling its Fence refuses",
}

// hostile is what hostile-bytes puts in every string it answers: valid
// UTF-8, as a protobuf string must be; error messages, which gRPC carries
// percent-encoded, also get bytes that are not UTF-8 (hostileError).
const (
	hostile      = "\x00\x1b[2J\x1b]0;owned\x07\r\u202e"
	hostileError = hostile + "\xff\xfe"
)

type server struct {
	fence.UnimplementedFenceControllerServer
	identity.UnimplementedIdentityServer

	secrets   map[string]string
	clusterID string
	statePath string
	defect    string
	noList    bool
	listDelay time.Duration
	minTime   time.Duration
	clients   bool

	mu      sync.Mutex
	fenced  map[netip.Prefix]time.Time
	changed time.Time // the last Fence or Unfence applied, for rebuild
}

func (s *server) GetIdentity(context.Context, *identity.GetIdentityRequest) (*identity.GetIdentityResponse, error) {
	r := &identity.GetIdentityResponse{Name: "vault.storage.example.com", VendorVersion: "1.4.2"}
	switch s.defect {
	case "echo-secret":
		r.Manifest = map[string]string{"auth": s.allSecrets()}
	case "hostile-bytes":
		r.Name += hostile
		r.Manifest = map[string]string{"note" + hostile: hostile}
	}
	return r, nil
}

func (s *server) GetCapabilities(context.Context, *identity.GetCapabilitiesRequest) (*identity.GetCapabilitiesResponse, error) {
	fenceCap := func(t identity.Capability_NetworkFence_Type) *identity.Capability {
		return &identity.Capability{Type: &identity.Capability_NetworkFence_{NetworkFence: &identity.Capability_NetworkFence{Type: t}}}
	}
	caps := []*identity.Capability{fenceCap(identity.Capability_NetworkFence_NETWORK_FENCE)}
	if s.clients {
		caps = append(caps, fenceCap(identity.Capability_NetworkFence_GET_CLIENTS_TO_FENCE))
	}
	return &identity.GetCapabilitiesResponse{Capabilities: caps}, nil
}

// allSecrets are the configured secret values, for echo-secret.
func (s *server) allSecrets() string {
	var vs []string
	for _, k := range slices.Sorted(maps.Keys(s.secrets)) {
		vs = append(vs, s.secrets[k])
	}
	return strings.Join(vs, ",")
}

// errorf builds an error whose message, under echo-secret, carries the
// secrets the request sent, and under hostile-bytes, hostile bytes.
func (s *server) errorf(r creds, c codes.Code, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	switch s.defect {
	case "echo-secret":
		msg += fmt.Sprintf(" (got secrets %q, %v)", r.GetSecrets(), r.GetSecrets())
	case "hostile-bytes":
		msg += hostileError
	}
	return status.Error(c, msg)
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
			got, ok := r.GetSecrets()[k]
			if !ok && s.defect == "any-key" {
				for _, other := range r.GetSecrets() {
					if other == v {
						got, ok = other, true
					}
				}
			}
			if !ok || got != v {
				return s.errorf(r, codes.Unauthenticated, "secret %q missing or wrong", k)
			}
		}
	}
	id, ok := r.GetParameters()["clusterID"]
	if !ok || id == "" {
		return s.errorf(r, codes.InvalidArgument, "parameter clusterID is required")
	}
	if s.defect == "param-fold-case" {
		id = strings.ToLower(id)
	}
	if id != s.clusterID && s.defect != "param-presence" {
		return s.errorf(r, codes.InvalidArgument, "parameter clusterID names no cluster this driver serves")
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

// storageLatency is how long the storage takes to answer under late-work,
// and retryAfter when an abandoned change is applied all the same.
const (
	storageLatency = 5 * time.Millisecond
	retryAfter     = 100 * time.Millisecond
)

// changeFor is change, under late-work the way a driver with a retry queue
// does it: a change whose client gives up before the storage answered is
// applied later, in the background.
func (s *server) changeFor(ctx context.Context, cidrs []*fence.CIDR, add bool) error {
	// --min-time: like a driver whose storage commit cannot be undone, a
	// request whose deadline leaves less than that is refused up front.
	if dl, ok := ctx.Deadline(); ok && s.minTime > 0 && time.Until(dl) < s.minTime {
		return status.Errorf(codes.Unavailable, "%s left before the deadline, less than the %s a storage commit needs: nothing sent", time.Until(dl).Round(time.Microsecond), s.minTime)
	}
	if s.defect == "ignore-cancel" {
		if _, err := s.parse(cidrs); err != nil {
			return err
		}
		done := make(chan error, 1)
		go func() {
			for _, c := range cidrs {
				if err := s.change(context.Background(), []*fence.CIDR{c}, add); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	if s.defect != "late-work" {
		return s.change(ctx, cidrs, add)
	}
	select {
	case <-time.After(storageLatency):
		return s.change(ctx, cidrs, add)
	case <-ctx.Done():
		go func() {
			time.Sleep(retryAfter)
			_ = s.change(context.Background(), cidrs, add)
		}()
		return status.FromContextError(ctx.Err()).Err()
	}
}

// change applies a Fence or Unfence. A change whose client gave up before
// it got the lock is dropped: the request the client sent next may already
// have been applied, and must not be overtaken.
func (s *server) change(ctx context.Context, cidrs []*fence.CIDR, add bool) error {
	ps, err := s.parse(cidrs)
	if err != nil && !(s.defect == "partial-apply" && len(ps) > 0) {
		return err
	}
	if add && s.defect == "aggregate" {
		ps = aggregate(ps)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	s.changed = time.Now()
	for _, p := range ps {
		k := p.Masked()
		if !add && s.defect == "hostbits-unfence" {
			k = p
		}
		if s.defect == "wide-as-64" && k.Addr().Is6() && k.Bits() < 64 {
			k = netip.PrefixFrom(k.Addr(), 64)
		}
		_, fenced := s.fenced[k]
		switch {
		case !add && !fenced && s.defect == "unfence-lifts":
			if around, ok := s.narrowestAround(k); ok {
				delete(s.fenced, around)
			}
		case !add:
			delete(s.fenced, k)
		case s.defect == "capacity" && len(s.fenced) >= 100:
		case s.defect == "ipv4-cap" && k.Addr().Is4() && s.count4() >= 200:
		default:
			if !fenced {
				s.fenced[k] = time.Now()
			}
		}
	}
	if perr := s.save(); perr != nil {
		return status.Errorf(codes.Internal, "saving state: %v", perr)
	}
	return err
}

func (s *server) FenceClusterNetwork(ctx context.Context, r *fence.FenceClusterNetworkRequest) (*fence.FenceClusterNetworkResponse, error) {
	if err := s.check(r, true); err != nil {
		return nil, err
	}
	if s.defect == "fence-internal" {
		return nil, status.Error(codes.Internal, "the storage refused the blocklist command")
	}
	return &fence.FenceClusterNetworkResponse{}, s.hostileError(r, s.changeFor(ctx, r.GetCidrs(), true))
}

// hostileError passes err through errorf under echo-secret and
// hostile-bytes.
func (s *server) hostileError(r creds, err error) error {
	if err == nil || (s.defect != "echo-secret" && s.defect != "hostile-bytes") {
		return err
	}
	st, _ := status.FromError(err)
	return s.errorf(r, st.Code(), "%s", st.Message())
}

func (s *server) UnfenceClusterNetwork(ctx context.Context, r *fence.UnfenceClusterNetworkRequest) (*fence.UnfenceClusterNetworkResponse, error) {
	if err := s.check(r, false); err != nil {
		return nil, err
	}
	return &fence.UnfenceClusterNetworkResponse{}, s.hostileError(r, s.changeFor(ctx, r.GetCidrs(), false))
}

func (s *server) ListClusterFence(_ context.Context, r *fence.ListClusterFenceRequest) (*fence.ListClusterFenceResponse, error) {
	if s.noList {
		return nil, status.Error(codes.Unimplemented, "ListClusterFence is not served")
	}
	if err := s.check(r, false); err != nil {
		return nil, err
	}
	time.Sleep(s.listDelay)
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &fence.ListClusterFenceResponse{}
	shown := s.sorted()
	if s.defect == "rebuild" {
		shown = s.reloading(shown)
	}
	for _, p := range shown {
		if s.defect == "expire" && time.Since(s.fenced[p]) > time.Second {
			continue
		}
		c := p.String()
		if s.defect == "list-native" {
			c = fmt.Sprintf("%s/%d", netip.AddrPortFrom(p.Addr(), 0), 4000+p.Bits())
		}
		out.Cidrs = append(out.Cidrs, &fence.CIDR{Cidr: c})
	}
	switch {
	case s.defect == "dup-list" && len(out.Cidrs) > 0:
		out.Cidrs = append([]*fence.CIDR{out.Cidrs[0]}, out.Cidrs...)
	case s.defect == "echo-secret":
		out.Cidrs = append(out.Cidrs, &fence.CIDR{Cidr: s.allSecrets()})
	case s.defect == "hostile-bytes":
		out.Cidrs = append(out.Cidrs, &fence.CIDR{Cidr: "198.51.100.250/32" + hostile})
	}
	return out, nil
}

func (s *server) GetFenceClients(_ context.Context, r *fence.GetFenceClientsRequest) (*fence.GetFenceClientsResponse, error) {
	if err := s.check(r, false); err != nil {
		return nil, err
	}
	if !s.clients {
		return nil, status.Error(codes.Unimplemented, "GetFenceClients is not served")
	}
	c := &fence.ClientDetails{Id: "vault-client-1", Addresses: []*fence.CIDR{{Cidr: "192.0.2.200/32"}}}
	switch s.defect {
	case "client-subnet":
		c.Addresses[0].Cidr = "192.0.2.200/24"
	case "clients-mapped":
		c.Addresses[0].Cidr = "::ffff:192.0.2.200/128"
	}
	switch s.defect {
	case "echo-secret":
		c.Id += "-" + s.allSecrets()
	case "hostile-bytes":
		c.Id += hostile
	}
	return &fence.GetFenceClientsResponse{Clients: []*fence.ClientDetails{c}}, nil
}

// reloading is what List shows under rebuild: after a second without a
// change the fences are reloaded every second, one entry per 100 ms, and a
// List shows the entries loaded so far.
func (s *server) reloading(all []netip.Prefix) []netip.Prefix {
	idle := time.Since(s.changed)
	if idle < time.Second {
		return all
	}
	loaded := int((idle % time.Second) / (100 * time.Millisecond))
	return all[:min(loaded, len(all))]
}

// narrowestAround is the narrowest fenced block around p, for unfence-lifts.
func (s *server) narrowestAround(p netip.Prefix) (netip.Prefix, bool) {
	var best netip.Prefix
	for q := range s.fenced {
		if q.Bits() < p.Bits() && q.Contains(p.Addr()) && (!best.IsValid() || q.Bits() > best.Bits()) {
			best = q
		}
	}
	return best, best.IsValid()
}

// count4 is how many IPv4 fences there are, for ipv4-cap.
func (s *server) count4() int {
	n := 0
	for q := range s.fenced {
		if q.Addr().Is4() {
			n++
		}
	}
	return n
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
	kept := s.sorted()
	if s.defect == "persist-first" && len(kept) > 100 {
		// The first 100 fenced, by when.
		slices.SortStableFunc(kept, func(x, y netip.Prefix) int { return s.fenced[x].Compare(s.fenced[y]) })
		kept = kept[:100]
	}
	for _, p := range kept {
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
	listDelay := flag.Duration("list-delay", 0, "how long every ListClusterFence takes")
	minTime := flag.Duration("min-time", 0, "refuse (UNAVAILABLE) a Fence or Unfence whose deadline leaves less than this")
	clients := flag.Bool("clients", false, "advertise and serve GetFenceClients (one client)")
	secrets := kv{}
	flag.Var(secrets, "secret", "required secret key=value (repeatable)")
	flag.Parse()
	if *sock == "" || *state == "" || *clusterID == "" || len(secrets) == 0 {
		log.Fatal("--socket, --state, --cluster-id and --secret are required")
	}
	if _, ok := defects[*defect]; *defect != "" && !ok {
		log.Fatalf("unknown defect %q", *defect)
	}
	s := &server{secrets: secrets, clusterID: *clusterID, statePath: filepath.Clean(*state), defect: *defect, noList: *noList, listDelay: *listDelay, minTime: *minTime, clients: *clients, fenced: map[netip.Prefix]time.Time{}, changed: time.Now()}
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

// aggregate replaces ten or more IPv4 /32s inside one /24 by that /24.
func aggregate(ps []netip.Prefix) []netip.Prefix {
	per := map[netip.Prefix]int{}
	wide := func(p netip.Prefix) (netip.Prefix, bool) {
		return netip.PrefixFrom(p.Addr(), 24).Masked(), p.Addr().Is4() && p.Bits() == 32
	}
	for _, p := range ps {
		if w, ok := wide(p); ok {
			per[w]++
		}
	}
	var out []netip.Prefix
	done := map[netip.Prefix]bool{}
	for _, p := range ps {
		w, ok := wide(p)
		switch {
		case !ok || per[w] < 10:
			out = append(out, p)
		case !done[w]:
			out = append(out, w)
			done[w] = true
		}
	}
	return out
}
