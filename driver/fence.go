package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/store"
)

// fenceServer implements fence.FenceControllerServer.
type fenceServer struct {
	fence.UnimplementedFenceControllerServer
	d *Driver
}

// before runs the per-RPC fault hook (delay, forced code).
func (d *Driver) before(rpc string) error {
	if c, ok := d.faults.Before(rpc); ok {
		return status.Errorf(c, "fault injected: code=%s:%s", rpc, c)
	}
	return nil
}

// FenceClusterNetwork fences every CIDR of the request in one transaction.
func (s *fenceServer) FenceClusterNetwork(ctx context.Context, req *fence.FenceClusterNetworkRequest) (*fence.FenceClusterNetworkResponse, error) {
	d := s.d
	if err := d.before("Fence"); err != nil {
		return nil, err
	}
	if err := d.checkRequest(req); err != nil {
		return nil, err
	}
	if len(req.GetCidrs()) == 0 && d.faults.AcceptEmpty {
		return &fence.FenceClusterNetworkResponse{}, nil
	}
	keys, verr := d.parseCIDRs(req, req.GetCidrs())
	if verr != nil && !(d.faults.PartialApply && len(keys) > 0) {
		return nil, verr
	}
	if d.faults.FirstOnly && len(keys) > 1 {
		keys = keys[:1]
	}
	keys, serr := d.shapeFenceKeys(keys, true)
	if serr != nil {
		return nil, serr
	}
	if err := d.checkBackendLimit(keys); err != nil {
		return nil, err
	}
	dup, leave := d.enterFence()
	defer leave()
	err := d.mutate(ctx, len(keys), func(t *txn) error {
		for _, k := range keys {
			e, ok := t.get(k)
			switch {
			case ok && d.faults.NotIdempotent:
				return status.Errorf(codes.AlreadyExists, "%s is already fenced", k)
			case ok && (d.faults.NoDedupe || dup):
				t.set(k, store.Entry{Seq: t.nextSeq(), Count: e.Count + 1})
			case !ok && d.overCapacity(t):
			case !ok:
				t.set(k, store.Entry{Seq: t.nextSeq(), Count: 1})
				d.fenced(k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if verr != nil {
		return nil, verr
	}
	return &fence.FenceClusterNetworkResponse{}, nil
}

// UnfenceClusterNetwork removes exactly the stored prefixes named.
func (s *fenceServer) UnfenceClusterNetwork(ctx context.Context, req *fence.UnfenceClusterNetworkRequest) (*fence.UnfenceClusterNetworkResponse, error) {
	d := s.d
	if err := d.before("Unfence"); err != nil {
		return nil, err
	}
	if err := d.checkRequest(req); err != nil {
		return nil, err
	}
	if len(req.GetCidrs()) == 0 && d.faults.AcceptEmpty {
		return &fence.UnfenceClusterNetworkResponse{}, nil
	}
	keys, verr := d.parseCIDRs(req, req.GetCidrs())
	if verr != nil && !(d.faults.PartialApply && len(keys) > 0) {
		return nil, verr
	}
	keys, serr := d.shapeFenceKeys(keys, false)
	if serr != nil {
		return nil, serr
	}
	keys = d.unfenceKeys(keys, req.GetCidrs())
	err := d.mutate(ctx, len(keys), func(t *txn) error {
		for _, k := range keys {
			if _, ok := t.get(k); !ok && d.faults.NotIdempotent {
				return status.Errorf(codes.NotFound, "%s is not fenced", k)
			}
			d.removeNeighbour(t, k)
			switch {
			case d.faults.UnfenceNoop:
			case d.faults.UnfenceOverlap:
				removeOverlapping(t, k)
			default:
				t.remove(k)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if verr != nil {
		return nil, verr
	}
	return &fence.UnfenceClusterNetworkResponse{}, nil
}

// removeOverlapping deletes k and every stored prefix overlapping it (the
// unfence-overlap fault).
func removeOverlapping(t *txn, k string) {
	t.remove(k)
	p, err := netip.ParsePrefix(k)
	if err != nil {
		return
	}
	for _, sk := range t.keys() {
		if q, err := netip.ParsePrefix(sk); err == nil && q.Overlaps(p) {
			t.remove(sk)
		}
	}
}

// ListClusterFence returns every stored prefix once, sorted.
func (s *fenceServer) ListClusterFence(ctx context.Context, req *fence.ListClusterFenceRequest) (*fence.ListClusterFenceResponse, error) {
	d := s.d
	if err := d.before("List"); err != nil {
		return nil, err
	}
	if d.faults.ListUnimplemented {
		return nil, status.Error(codes.Unimplemented, "ListClusterFence is not implemented (fault list-unimplemented)")
	}
	if err := d.checkRequest(req); err != nil {
		return nil, err
	}
	var inForce map[netip.Prefix]bool
	if r, ok := d.backend.(backend.Reader); ok {
		ps, err := r.InForce(ctx)
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "reading what the backend enforces: %v", err)
		}
		inForce = make(map[netip.Prefix]bool, len(ps))
		for _, p := range ps {
			inForce[p] = true
		}
	}
	d.stateMu.RLock()
	defer d.stateMu.RUnlock()
	if !d.faults.DropList && !d.faults.ExpireFences && !d.faults.ListStorageNative {
		return &fence.ListClusterFenceResponse{Cidrs: enforcedOnly(d.listed(), inForce)}, nil
	}
	st := d.live
	keys := sortedFences(st)
	if d.faults.DropList && len(keys) > 0 {
		var newest string
		var seq uint64
		for k, e := range st {
			if e.Seq >= seq {
				newest, seq = k, e.Seq
			}
		}
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == newest })
	}
	resp := &fence.ListClusterFenceResponse{Cidrs: make([]*fence.CIDR, 0, len(keys))}
	for _, k := range keys {
		if d.expired(k) {
			continue
		}
		for range st[k].Count {
			resp.Cidrs = append(resp.Cidrs, &fence.CIDR{Cidr: d.listSpelling(k)})
		}
	}
	return resp, nil
}

// enforcedOnly keeps the listed fences in force (all when inForce is nil:
// the backend cannot read its enforcement back). A stored fence the backend
// does not enforce (removed by hand, expired, still being repaired) is not
// reported: List never claims a fence that is not in force.
func enforcedOnly(listed []*fence.CIDR, inForce map[netip.Prefix]bool) []*fence.CIDR {
	if inForce == nil {
		return listed
	}
	out := make([]*fence.CIDR, 0, len(listed))
	for _, c := range listed {
		if p, err := netip.ParsePrefix(c.GetCidr()); err == nil && inForce[p.Masked()] {
			out = append(out, c)
		}
	}
	return out
}

// checkBackendLimit asks a Limiter backend whether it can take a Fence of
// these keys; a refusal is INVALID_ARGUMENT and nothing is stored.
func (d *Driver) checkBackendLimit(keys []string) error {
	l, ok := d.backend.(backend.Limiter)
	if !ok {
		return nil
	}
	ps := make([]netip.Prefix, 0, len(keys))
	for _, k := range keys {
		if p, err := netip.ParsePrefix(k); err == nil {
			ps = append(ps, p.Masked())
		}
	}
	if err := l.CheckChange(ps); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return nil
}

// listed returns List's answer, built once per mutation and shared
// read-only by every List until the next one: a List then costs its
// encoding. d.stateMu is read-locked; the cache has its own lock.
func (d *Driver) listed() []*fence.CIDR {
	d.sortMu.Lock()
	defer d.sortMu.Unlock()
	if d.sorted == nil {
		keys := sortedFences(d.live)
		out := make([]*fence.CIDR, 0, len(keys))
		for _, k := range keys {
			for range d.live[k].Count {
				out = append(out, &fence.CIDR{Cidr: k})
			}
		}
		d.sorted = out
	}
	return d.sorted
}

// sortedFences orders stored keys by address then prefix length (IPv4
// first); keys that do not parse (fault modes only) come last, as strings.
func sortedFences(st store.State) []string {
	type item struct {
		key string
		p   netip.Prefix
		ok  bool
	}
	items := make([]item, 0, len(st))
	for k := range st {
		p, err := netip.ParsePrefix(k)
		items = append(items, item{k, p, err == nil})
	}
	slices.SortFunc(items, func(a, b item) int {
		switch {
		case a.ok && b.ok:
			if c := comparePrefix(a.p, b.p); c != 0 {
				return c
			}
		case a.ok != b.ok:
			if a.ok {
				return -1
			}
			return 1
		}
		return strings.Compare(a.key, b.key)
	})
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.key
	}
	return keys
}

// GetFenceClients reports the clients a CO may want to fence. It never
// changes any fence (unless the clients-mutate fault is set).
func (s *fenceServer) GetFenceClients(ctx context.Context, req *fence.GetFenceClientsRequest) (*fence.GetFenceClientsResponse, error) {
	d := s.d
	if err := d.before("GetClients"); err != nil {
		return nil, err
	}
	if d.o.DisableGetClients || d.faults.GetClientsUnimplemented {
		return nil, status.Error(codes.Unimplemented, "GetFenceClients is not implemented in this mode")
	}
	if err := d.checkRequest(req); err != nil {
		return nil, err
	}
	clients := d.seenClients(ctx)
	if d.faults.ClientsMutate {
		clear := func(t *txn) error {
			for _, k := range t.keys() {
				t.remove(k)
			}
			return nil
		}
		if err := d.mutate(ctx, 0, clear); err != nil {
			return nil, err
		}
	}
	call := d.calls.Add(1)
	resp := &fence.GetFenceClientsResponse{}
	for i, c := range clients {
		cd := &fence.ClientDetails{Id: c.ID}
		if d.faults.ClientsUnstable {
			cd.Id = fmt.Sprintf("%s-%d", c.ID, call)
		}
		if d.faults.ClientsEmptyID && i == 0 {
			cd.Id = ""
		}
		for _, a := range c.Addresses {
			if p, err := netip.ParsePrefix(a); err == nil && d.faults.ClientsBadAddress {
				a = netip.AddrPortFrom(p.Addr(), 6789).String()
			}
			cd.Addresses = append(cd.Addresses, &fence.CIDR{Cidr: a})
		}
		resp.Clients = append(resp.Clients, cd)
	}
	return resp, nil
}

// seenClients returns the peers the backend sees on the protected ports, or
// the static clients when there are none or the backend has no view.
func (d *Driver) seenClients(ctx context.Context) []Client {
	if cl, ok := d.backend.(backend.ClientLister); ok {
		return d.listedClients(ctx, cl)
	}
	if len(d.o.ProtectedPorts) == 0 {
		return d.clients
	}
	peers, err := d.backend.Peers(ctx, d.o.ProtectedPorts)
	if err != nil {
		if !errors.Is(err, backend.ErrNoView) {
			d.log.Warn("cannot list connection peers; answering with the static clients", "err", err)
		}
		return d.clients
	}
	if len(peers) == 0 {
		return d.clients
	}
	return peerClients(peers)
}

// peerClients turns peer addresses into clients with ids derived from the
// address, so the same peer always gets the same id.
func peerClients(peers []netip.Addr) []Client {
	seen := map[netip.Addr]bool{}
	var out []Client
	for _, a := range peers {
		a = a.Unmap()
		if seen[a] {
			continue
		}
		seen[a] = true
		sum := sha256.Sum256([]byte(a.String()))
		out = append(out, Client{
			ID:        "client-" + hex.EncodeToString(sum[:6]),
			Addresses: []string{netip.PrefixFrom(a, a.BitLen()).String()},
		})
	}
	slices.SortFunc(out, func(x, y Client) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// listedClients reports the clients a ClientLister backend sees, by id, each
// with its addresses as /32 or /128 blocks; when the backend cannot answer,
// the static clients.
func (d *Driver) listedClients(ctx context.Context, cl backend.ClientLister) []Client {
	seen, err := cl.Clients(ctx)
	if err != nil {
		d.log.Warn("cannot list the backend's clients; answering with the static clients", "err", err)
		return d.clients
	}
	addrs := map[string][]netip.Addr{}
	for _, c := range seen {
		a := c.Addr.Unmap()
		if !slices.Contains(addrs[c.ID], a) {
			addrs[c.ID] = append(addrs[c.ID], a)
		}
	}
	out := make([]Client, 0, len(addrs))
	for id, as := range addrs {
		slices.SortFunc(as, func(x, y netip.Addr) int { return x.Compare(y) })
		c := Client{ID: id}
		for _, a := range as {
			c.Addresses = append(c.Addresses, netip.PrefixFrom(a, a.BitLen()).String())
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(x, y Client) int { return strings.Compare(x.ID, y.ID) })
	return out
}
