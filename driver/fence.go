package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/netip"
	"slices"
	"strings"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/driver/store"
)

// fenceServer implements fence.FenceControllerServer.
type fenceServer struct {
	fence.UnimplementedFenceControllerServer
	d *Driver
}

// before is the call hook every RPC runs first (a fault may delay or fail it).
func (d *Driver) before(rpc string) error { return d.faults.Call(rpc) }

// FenceClusterNetwork fences every CIDR of the request in one transaction.
func (s *fenceServer) FenceClusterNetwork(ctx context.Context, req *fence.FenceClusterNetworkRequest) (*fence.FenceClusterNetworkResponse, error) {
	d := s.d
	if err := d.before("Fence"); err != nil {
		return nil, err
	}
	r, err := d.request("Fence", req, req.GetCidrs())
	if err != nil {
		return nil, err
	}
	defer r.Done()
	if err := d.checkBackendLimit(r.Blocks); err != nil {
		return nil, err
	}
	err = d.applying(ctx, "Fence", r.Blocks, func(ctx context.Context, blocks []cidr.Block) error {
		return d.mutate(ctx, len(blocks), func(t *txn) error {
			for _, b := range blocks {
				e, stored := t.get(b)
				st := fault.FenceStep{Request: r, Block: b, Fences: t, Action: fault.Add}
				if stored {
					st.Action = fault.Keep
				}
				if err := d.faults.Fence(&st); err != nil {
					return err
				}
				switch st.Action {
				case fault.Add:
					t.set(b, store.Entry{Seq: t.nextSeq(), Count: 1})
				case fault.Recount:
					t.set(b, store.Entry{Seq: t.nextSeq(), Count: e.Count + 1})
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if r.Invalid != nil {
		return nil, r.Invalid
	}
	return &fence.FenceClusterNetworkResponse{}, nil
}

// UnfenceClusterNetwork removes exactly the stored blocks named.
func (s *fenceServer) UnfenceClusterNetwork(ctx context.Context, req *fence.UnfenceClusterNetworkRequest) (*fence.UnfenceClusterNetworkResponse, error) {
	d := s.d
	if err := d.before("Unfence"); err != nil {
		return nil, err
	}
	r, err := d.request("Unfence", req, req.GetCidrs())
	if err != nil {
		return nil, err
	}
	defer r.Done()
	err = d.applying(ctx, "Unfence", r.Blocks, func(ctx context.Context, blocks []cidr.Block) error {
		return d.mutate(ctx, len(blocks), func(t *txn) error {
			for _, b := range blocks {
				st := fault.UnfenceStep{Block: b, Fences: t}
				if err := d.faults.Unfence(&st); err != nil {
					return err
				}
				if !st.Keep {
					t.remove(b)
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if r.Invalid != nil {
		return nil, r.Invalid
	}
	return &fence.UnfenceClusterNetworkResponse{}, nil
}

// ListClusterFence returns every stored block once, sorted.
func (s *fenceServer) ListClusterFence(ctx context.Context, req *fence.ListClusterFenceRequest) (*fence.ListClusterFenceResponse, error) {
	d := s.d
	if err := d.before("List"); err != nil {
		return nil, err
	}
	if err := d.checkRequest("List", req); err != nil {
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
	if !d.faults.Acts(fault.AtList) {
		return &fence.ListClusterFenceResponse{Cidrs: enforcedOnly(d.listed(), inForce)}, nil
	}
	var entries []fault.Listed
	for _, b := range d.live.sorted() {
		e := d.live[b]
		entries = append(entries, fault.Listed{Block: b, Seq: e.Seq, Count: e.Count, CIDR: b.String()})
	}
	resp := &fence.ListClusterFenceResponse{Cidrs: []*fence.CIDR{}}
	for _, e := range d.faults.List(entries) {
		for range e.Count {
			resp.Cidrs = append(resp.Cidrs, &fence.CIDR{Cidr: e.CIDR})
		}
	}
	return resp, nil
}

// listed returns List's answer, built once per mutation and shared
// read-only by every List until the next one: a List then costs its
// encoding. d.stateMu is read-locked; the cache has its own lock.
func (d *Driver) listed() []*fence.CIDR {
	d.sortMu.Lock()
	defer d.sortMu.Unlock()
	if d.sorted == nil {
		blocks := d.live.sorted()
		out := make([]*fence.CIDR, 0, len(blocks))
		for _, b := range blocks {
			for range d.live[b].Count {
				out = append(out, &fence.CIDR{Cidr: b.String()})
			}
		}
		d.sorted = out
	}
	return d.sorted
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
// these blocks; a refusal is INVALID_ARGUMENT and nothing is stored.
func (d *Driver) checkBackendLimit(blocks []cidr.Block) error {
	l, ok := d.backend.(backend.Limiter)
	if !ok {
		return nil
	}
	ps := make([]netip.Prefix, 0, len(blocks))
	for _, b := range blocks {
		if b.Enforced() {
			ps = append(ps, b.Prefix)
		}
	}
	if err := l.CheckChange(ps); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	return nil
}

// GetFenceClients reports the clients a CO may want to fence. It never
// changes any fence (unless a fault at the clients hook does).
func (s *fenceServer) GetFenceClients(ctx context.Context, req *fence.GetFenceClientsRequest) (*fence.GetFenceClientsResponse, error) {
	d := s.d
	if err := d.before("GetClients"); err != nil {
		return nil, err
	}
	if d.o.DisableGetClients {
		return nil, status.Error(codes.Unimplemented, "GetFenceClients is not implemented in this mode")
	}
	if err := d.checkRequest("GetClients", req); err != nil {
		return nil, err
	}
	seen := d.seenClients(ctx)
	if d.faults.ClearOnClients() {
		clear := func(t *txn) error {
			for _, b := range t.Blocks() {
				t.remove(b)
			}
			return nil
		}
		if err := d.mutate(ctx, 0, clear); err != nil {
			return nil, err
		}
	}
	clients := make([]fault.Client, len(seen))
	for i, c := range seen {
		clients[i] = fault.Client{ID: c.ID, Addresses: slices.Clone(c.Addresses)}
	}
	d.faults.Clients(clients)
	resp := &fence.GetFenceClientsResponse{}
	for _, c := range clients {
		cd := &fence.ClientDetails{Id: c.ID}
		for _, a := range c.Addresses {
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
