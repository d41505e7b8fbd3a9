//go:build linux

// Package nftables enforces fences in the Linux kernel with nftables, over
// netlink (no nft binary needed).
//
// The backend owns table "inet fenceproof" (WithTable names another): hash
// sets hosts4/hosts6 for fenced /32 and /128 prefixes, interval sets
// fenced4/fenced6 for the union of wider ones, interval sets
// protect4/protect6, and base chains on the input and forward hooks at
// priority -10 (before the filter tables) holding
//
//	ct state established counter   (enables conntrack in the netns, see Peers)
//	meta iiftype loopback accept   (input only)
//	ip saddr @protect4 counter accept
//	ip6 saddr @protect6 counter accept
//	tcp dport CONTROL counter accept   (input only, the driver's TCP endpoint)
//	ip saddr @hosts4 counter drop
//	ip6 saddr @hosts6 counter drop
//	ip saddr @fenced4 counter drop
//	ip6 saddr @fenced6 counter drop
//
// Hosts are kept out of the interval sets because the kernel's cost of an
// interval-set transaction grows with the set's size (measured: 0.5 ms empty,
// 49 ms with 100k ranges, kernel 6.18), while a hash-set element costs the
// same whatever the set holds. Change sends only the elements that changed.
//
// The accepts come first, so no fence, not even 0.0.0.0/0, can cut the
// driver off from the clients that would lift it.
//
// Every Apply (at start, and to repair drift) rebuilds the whole table in ONE
// netlink batch (add table, delete table, recreate everything with the new
// elements), so the kernel switches from the old fence set to the new one
// atomically and anything that tampered with the table is overwritten.
//
// Interval sets reject overlapping elements, so the set holds the union of
// the fenced prefixes as non-overlapping ranges (cidr.Union): a /8 is one
// interval, a /24 and a /25 inside it are one interval, and unfencing the /25
// while the /24 stays fenced leaves that interval in place.
//
// Open connections: the drop rules match every packet from a fenced source,
// whatever its conntrack state, so an established connection cannot deliver
// another byte. We drop rather than reject with a TCP reset: a fenced node is
// treated like a blackholed one, and answering it would tell a misbehaving
// client to reconnect. After each Apply, and in the background after each
// Change, the conntrack entries whose original source is fenced are deleted
// too, so a stateful accept rule elsewhere cannot keep the flow alive and
// GetFenceClients (Peers waits for pending deletions) stops reporting the
// fenced peer.
package nftables

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"slices"
	"sync"

	nft "github.com/google/nftables"
	"github.com/mdlayher/netlink"
	vnl "github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/internal/privatens"
)

// Names of the objects the backend owns.
const (
	TableName = "fenceproof"
	Set4Name  = "fenced4"
	Set6Name  = "fenced6"
	// Priority of the base chains: before the filter tables (0).
	Priority = -10
)

// elemChunk is how many set elements go into one netlink message; all
// chunks still travel in the same atomic batch.
const elemChunk = 2048

// sndbuf is the socket send buffer requested for a batch (SO_SNDBUFFORCE,
// we hold CAP_NET_ADMIN anyway): a batch of 10k ranges is about 1 MB.
const sndbuf = 64 << 20

// Backend is the nftables backend.
type Backend struct {
	mu           sync.Mutex
	table        string
	owner        string
	protect      []netip.Prefix
	controlPorts []uint16
	set          *model // what was last applied; nil before the first Apply
	print        string // fingerprint of the table as last programmed ("" unknown)

	ctMu       sync.Mutex // serialises use of ct
	forgetMu   sync.Mutex
	pending    []cidr.Range // fenced ranges whose conntrack entries are still to delete
	forgetKick chan struct{}
	stopForget chan struct{}
	forgetDone chan struct{}
	log        *slog.Logger
	ns         netns.NsHandle // -1 for the current netns
	own        bool           // ns was created by us ("new") or opened from a path
	opts       []nft.ConnOption
	conn       *nft.Conn
	ct         *vnl.Handle
}

// Option configures a Backend.
type Option func(*Backend)

// WithTable names the inet table (default TableName); two drivers in one
// network namespace need two names.
func WithTable(name string) Option { return func(b *Backend) { b.table = name } }

// WithProtect sets the source blocks that are accepted before any drop rule,
// so no fence can cut them off (the driver adds loopback and its own peers).
func WithProtect(ps []netip.Prefix) Option {
	return func(b *Backend) { b.protect = slices.Clone(ps) }
}

// WithOwner tags the table with the identity of the instance that owns it;
// an instance finding a table tagged by another refuses to take it over
// (ErrForeignTable).
func WithOwner(id string) Option { return func(b *Backend) { b.owner = id } }

// New opens the backend in a network namespace: "" for the current one,
// "new" for a private one created for this backend (it lives as long as the
// backend holds it), or the path of a netns (e.g. /run/netns/x). log (nil
// for slog.Default) receives warnings that do not fail an Apply.
func New(netNS string, log *slog.Logger, options ...Option) (*Backend, error) {
	if log == nil {
		log = slog.Default()
	}
	b := &Backend{ns: netns.None(), log: log, table: TableName}
	for _, o := range options {
		o(b)
	}
	if b.table == "" || len(b.table) > 255 {
		return nil, fmt.Errorf("nftables table name %q: want 1-255 characters", b.table)
	}
	var err error
	switch netNS {
	case "":
	case "new":
		b.ns, err = privatens.New()
		b.own = true
	default:
		b.ns, err = netns.GetFromPath(netNS)
		b.own = true
	}
	if err != nil {
		return nil, fmt.Errorf("network namespace %q: %w", netNS, err)
	}
	opts := []nft.ConnOption{nft.WithSockOptions(bigSendBuffer)}
	if b.ns.IsOpen() {
		opts = append(opts, nft.WithNetNSFd(int(b.ns)))
		b.ct, err = vnl.NewHandleAt(b.ns, unix.NETLINK_NETFILTER)
	} else {
		b.ct, err = vnl.NewHandle(unix.NETLINK_NETFILTER)
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("conntrack netlink handle: %w", err)
	}
	b.opts = opts
	if b.conn, err = nft.New(opts...); err != nil {
		b.Close()
		return nil, fmt.Errorf("nftables netlink: %w", err)
	}
	b.startForgetter()
	return b, nil
}

// NetNS returns the handle of the backend's namespace (None for the current
// one); tests use it to run code inside a "new" namespace.
func (b *Backend) NetNS() netns.NsHandle { return b.ns }

func bigSendBuffer(c *netlink.Conn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, sndbuf)
	}); err != nil {
		return err
	}
	if serr != nil {
		return c.SetWriteBuffer(sndbuf)
	}
	return nil
}

// Apply replaces the enforced set with fenced, atomically, then deletes the
// conntrack entries of fenced sources.
func (b *Backend) Apply(_ context.Context, fenced []netip.Prefix) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkOwner(); err != nil {
		return err
	}
	m := newModel(fenced)
	ranges := m.union()
	if err := b.program(m); err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	b.set = m
	if len(ranges) > 0 {
		// The drop rules already stop every packet; a failure here only
		// leaves stale conntrack entries behind, so it does not fail Apply.
		if err := b.forget(ranges); err != nil {
			b.log.Warn("fences applied, but deleting conntrack entries of fenced sources failed", "err", err)
		}
	}
	return nil
}

// program sends the whole table in one batch. If building the batch fails
// before it is sent, the connection (and its queued messages) is replaced so
// that nothing half-built is sent by a later Flush.
func (b *Backend) program(m *model) error {
	err := b.build(m)
	if err == nil {
		if err = b.conn.Flush(); err != nil {
			return err
		}
		// What Verify compares the table with later. If it cannot be
		// read now, Verify reports drift and the next Apply retries.
		b.print, err = b.fingerprint()
		if err != nil {
			b.print = ""
			b.log.Warn("cannot read back the table just written; the next verify will rebuild it", "err", err)
		}
		return nil
	}
	if c, nerr := nft.New(b.opts...); nerr == nil {
		b.conn = c
	}
	return err
}

// SetControlPorts sets the local TCP ports accepted from every source (the
// driver's own TCP endpoint); they take effect with the next Apply.
func (b *Backend) SetControlPorts(ports []uint16) {
	b.mu.Lock()
	b.controlPorts = slices.Clone(ports)
	b.mu.Unlock()
}

// Ranges reads back the enforced ranges of one family's set (for tests and
// benchmarks): the element count in the kernel is what they measure.
func (b *Backend) Ranges(ipv6 bool) ([]cidr.Range, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	name, n := Set4Name, 4
	if ipv6 {
		name, n = Set6Name, 16
	}
	rs, err := b.rangesOf(name, n)
	if err != nil {
		return nil, err
	}
	hosts, err := b.hostsIn(map[bool]string{false: Hosts4Name, true: Hosts6Name}[ipv6], n)
	if err != nil {
		return nil, err
	}
	for _, a := range hosts {
		rs = append(rs, cidr.Range{From: a, To: a})
	}
	return cidr.Merge(rs), nil
}

// hostsIn reads back a hosts set; b.mu is held.
func (b *Backend) hostsIn(name string, n int) ([]netip.Addr, error) {
	s, err := b.conn.GetSetByName(b.tableRef(), name)
	if err != nil {
		return nil, err
	}
	elems, err := b.conn.GetSetElements(s)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(elems))
	for _, e := range elems {
		a, ok := netip.AddrFromSlice(e.Key)
		if !ok || len(e.Key) != n {
			return nil, fmt.Errorf("bad set key %x", e.Key)
		}
		out = append(out, a)
	}
	return out, nil
}

// rangesOf reads a set of the table back; b.mu is held.
func (b *Backend) rangesOf(name string, n int) ([]cidr.Range, error) {
	s, err := b.conn.GetSetByName(b.tableRef(), name)
	if err != nil {
		return nil, err
	}
	elems, err := b.conn.GetSetElements(s)
	if err != nil {
		return nil, err
	}
	return toRanges(elems, n)
}

// toRanges decodes interval elements (returned by the kernel in any order).
func toRanges(elems []nft.SetElement, n int) ([]cidr.Range, error) {
	type edge struct {
		a   netip.Addr
		end bool
	}
	var edges []edge
	for _, e := range elems {
		a, ok := netip.AddrFromSlice(e.Key)
		if !ok || len(e.Key) != n {
			return nil, fmt.Errorf("bad set key %x", e.Key)
		}
		edges = append(edges, edge{a, e.IntervalEnd})
	}
	slices.SortFunc(edges, func(x, y edge) int {
		if c := x.a.Compare(y.a); c != 0 {
			return c
		}
		if x.end == y.end {
			return 0
		}
		if x.end {
			return -1
		}
		return 1
	})
	var out []cidr.Range
	for i := 0; i < len(edges); i++ {
		if edges[i].end {
			continue
		}
		r := cidr.Range{From: edges[i].a}
		if i+1 < len(edges) && edges[i+1].end {
			r.To = edges[i+1].a.Prev()
			i++
		} else {
			r.To = maxAddr(n)
		}
		out = append(out, r)
	}
	return out, nil
}

func maxAddr(n int) netip.Addr {
	b := make(net.IP, n)
	for i := range b {
		b[i] = 0xff
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// Close releases the netlink handles and the namespace handle. The table
// stays: enforcement outlives the driver process (a "new" namespace is
// destroyed with its last reference).
func (b *Backend) Close() error {
	if b.stopForget != nil {
		close(b.stopForget)
		<-b.forgetDone
		b.stopForget = nil
	}
	if b.ct != nil {
		b.flushForget()
		b.ct.Close()
	}
	if b.own && b.ns.IsOpen() {
		return b.ns.Close()
	}
	return nil
}

// Remove deletes the table (for tests cleaning up the current netns).
func (b *Backend) Remove() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.conn.DelTable(b.tableRef())
	if err := b.conn.Flush(); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
