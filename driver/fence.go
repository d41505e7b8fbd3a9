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
	err := d.mutate(ctx, func(st store.State) (store.State, error) {
		seq := st.MaxSeq()
		for _, k := range keys {
			e, ok := st[k]
			switch {
			case ok && d.faults.NotIdempotent:
				return nil, status.Errorf(codes.AlreadyExists, "%s is already fenced", k)
			case ok && d.faults.NoDedupe:
				seq++
				st[k] = store.Entry{Seq: seq, Count: e.Count + 1}
			case !ok:
				seq++
				st[k] = store.Entry{Seq: seq, Count: 1}
			}
		}
		return st, nil
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
	err := d.mutate(ctx, func(st store.State) (store.State, error) {
		for _, k := range keys {
			if _, ok := st[k]; !ok && d.faults.NotIdempotent {
				return nil, status.Errorf(codes.NotFound, "%s is not fenced", k)
			}
			switch {
			case d.faults.UnfenceNoop:
			case d.faults.UnfenceOverlap:
				removeOverlapping(st, k)
			default:
				delete(st, k)
			}
		}
		return st, nil
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
func removeOverlapping(st store.State, k string) {
	delete(st, k)
	p, err := netip.ParsePrefix(k)
	if err != nil {
		return
	}
	for sk := range st {
		if q, err := netip.ParsePrefix(sk); err == nil && q.Overlaps(p) {
			delete(st, sk)
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
	st := *d.state.Load()
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
		for range st[k].Count {
			resp.Cidrs = append(resp.Cidrs, &fence.CIDR{Cidr: k})
		}
	}
	return resp, nil
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
		if err := d.mutate(ctx, func(store.State) (store.State, error) { return store.State{}, nil }); err != nil {
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
