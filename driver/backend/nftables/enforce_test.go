//go:build linux

package nftables_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/driver"
)

const port = 6789

// Addresses inside the test namespaces only.
var (
	server4  = netip.MustParseAddr("10.99.0.1")
	fenced4  = netip.MustParseAddr("10.99.0.2")   // in 10.99.0.0/25
	sibling4 = netip.MustParseAddr("10.99.0.3")   // never fenced on its own
	high4    = netip.MustParseAddr("10.99.0.200") // in the /24, outside the /25
	server6  = netip.MustParseAddr("fd00:99::1")
	fenced6  = netip.MustParseAddr("fd00:99::2")
	sibling6 = netip.MustParseAddr("fd00:99::3")
)

// topology is a server netns and a client netns joined by a veth pair.
type topology struct {
	server, client ns.NetNS
	srv            *echoServer
}

func newTopology(t *testing.T) *topology {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_NET_ADMIN) to create network namespaces, veth pairs and nftables tables")
	}
	var top topology
	var err error
	if top.server, err = ns.TempNetNS(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { top.server.Close() })
	if top.client, err = ns.TempNetNS(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { top.client.Close() })
	err = top.server.Do(func(ns.NetNS) error {
		la := netlink.NewLinkAttrs()
		la.Name = "fp-srv"
		veth := &netlink.Veth{LinkAttrs: la, PeerName: "fp-cli", PeerNamespace: netlink.NsFd(int(top.client.Fd()))}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("veth: %w", err)
		}
		return setup("fp-srv", server4, server6)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := top.client.Do(func(ns.NetNS) error { return setup("fp-cli", fenced4, sibling4, high4, fenced6, sibling6) }); err != nil {
		t.Fatal(err)
	}
	top.srv = startEcho(t, top.server)
	// Wait for the links and neighbour discovery to settle.
	for _, src := range []netip.Addr{fenced4, sibling4, high4, fenced6, sibling6} {
		deadline := time.Now().Add(5 * time.Second)
		for !top.served(src) {
			if time.Now().After(deadline) {
				t.Fatalf("%s not served before any fence", src)
			}
		}
	}
	return &top
}

// setup brings lo and the link up and adds the addresses (/24, /64, no DAD).
func setup(name string, addrs ...netip.Addr) error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return err
	}
	l, err := netlink.LinkByName(name)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		bits := 24
		if a.Is6() {
			bits = 64
		}
		p := netip.PrefixFrom(a, bits)
		ipn := &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(bits, a.BitLen())}
		if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: ipn, Flags: unix.IFA_F_NODAD}); err != nil {
			return fmt.Errorf("addr %s: %w", p, err)
		}
	}
	return netlink.LinkSetUp(l)
}

// echoServer echoes lines and counts the lines received per source.
type echoServer struct {
	mu   sync.Mutex
	seen map[netip.Addr]int
}

func startEcho(t *testing.T, n ns.NetNS) *echoServer {
	s := &echoServer{seen: map[netip.Addr]int{}}
	var lis net.Listener
	err := n.Do(func(ns.NetNS) (err error) {
		lis, err = net.Listen("tcp", fmt.Sprintf(":%d", port))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				src := c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					s.mu.Lock()
					s.seen[src]++
					s.mu.Unlock()
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return s
}

func (s *echoServer) count(a netip.Addr) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[a]
}

const short = 400 * time.Millisecond

// dial connects from src (in the client netns) to the server.
func (top *topology) dial(src netip.Addr) (net.Conn, error) {
	dst := server4
	if src.Is6() {
		dst = server6
	}
	var c net.Conn
	err := top.client.Do(func(ns.NetNS) (err error) {
		d := net.Dialer{Timeout: short, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(src, 0))}
		c, err = d.Dial("tcp", netip.AddrPortFrom(dst, port).String())
		return err
	})
	return c, err
}

// roundTrip sends a line and waits for its echo.
func roundTrip(c net.Conn) error {
	c.SetDeadline(time.Now().Add(short))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err := bufio.NewReader(c).ReadString('\n')
	return err
}

// served reports whether a fresh connection from src gets an echo.
func (top *topology) served(src netip.Addr) bool {
	c, err := top.dial(src)
	if err != nil {
		return false
	}
	defer c.Close()
	return roundTrip(c) == nil
}

type client struct {
	f fence.FenceControllerClient
}

// cidrList wraps strings as the request's CIDR messages.
func cidrList(ss []string) []*fence.CIDR {
	cs := make([]*fence.CIDR, len(ss))
	for i, s := range ss {
		cs[i] = &fence.CIDR{Cidr: s}
	}
	return cs
}

func (c client) fence(t *testing.T, ss ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.f.FenceClusterNetwork(ctx, &fence.FenceClusterNetworkRequest{Cidrs: cidrList(ss)}); err != nil {
		t.Fatalf("fence %v: %v", ss, err)
	}
}

func (c client) unfence(t *testing.T, ss ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.f.UnfenceClusterNetwork(ctx, &fence.UnfenceClusterNetworkRequest{Cidrs: cidrList(ss)}); err != nil {
		t.Fatalf("unfence %v: %v", ss, err)
	}
}

func startDriver(t *testing.T, top *topology) (client, *driver.Driver) {
	t.Helper()
	d, err := driver.New(context.Background(), driver.Options{
		Backend:        "nftables",
		NetNS:          fmt.Sprintf("/proc/self/fd/%d", top.server.Fd()),
		StatePath:      filepath.Join(t.TempDir(), "state.db"),
		ProtectedPorts: []uint16{port},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "fpnft")
	if err != nil {
		t.Fatal(err)
	}
	addr, err := d.Start("unix://" + filepath.Join(dir, "d.sock"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); d.Stop(); os.RemoveAll(dir) })
	return client{fence.NewFenceControllerClient(conn)}, d
}

func TestEnforcement(t *testing.T) {
	top := newTopology(t)
	c, _ := startDriver(t, top)

	// (b) a connection established before the fence.
	est, err := top.dial(fenced4)
	if err != nil {
		t.Fatal(err)
	}
	defer est.Close()
	if err := roundTrip(est); err != nil {
		t.Fatal(err)
	}
	before := top.srv.count(fenced4)

	c.fence(t, "10.99.0.2/32", "fd00:99::2/128")
	t.Run("new connections from a fenced source fail", func(t *testing.T) {
		if top.served(fenced4) || top.served(fenced6) {
			t.Fatal("fenced source still served")
		}
	})
	t.Run("established connection delivers nothing more", func(t *testing.T) {
		if err := roundTrip(est); err == nil {
			t.Fatal("established connection still echoes after the fence")
		}
		time.Sleep(100 * time.Millisecond)
		if n := top.srv.count(fenced4); n != before {
			t.Fatalf("server received %d more lines from the fenced source", n-before)
		}
	})
	t.Run("unfenced siblings are never affected", func(t *testing.T) {
		if !top.served(sibling4) || !top.served(sibling6) || !top.served(high4) {
			t.Fatal("sibling source blocked")
		}
	})

	c.unfence(t, "10.99.0.2/32", "fd00:99::2/128")
	t.Run("unfenced source is served again", func(t *testing.T) {
		if !top.served(fenced4) || !top.served(fenced6) {
			t.Fatal("source still blocked after unfence")
		}
	})

	t.Run("overlapping fences: unfencing the /25 leaves the /24", func(t *testing.T) {
		c.fence(t, "10.99.0.0/24", "10.99.0.0/25")
		if top.served(fenced4) || top.served(high4) {
			t.Fatal("/24 not enforced")
		}
		c.unfence(t, "10.99.0.0/25")
		if top.served(fenced4) || top.served(high4) {
			t.Fatal("unfencing the /25 lifted the /24")
		}
		c.unfence(t, "10.99.0.0/24")
		if !top.served(fenced4) || !top.served(high4) {
			t.Fatal("still blocked after unfencing the /24")
		}
	})
}

// openSessions opens one served connection from each source, closed when
// the test ends.
func openSessions(t *testing.T, top *topology, srcs ...netip.Addr) {
	t.Helper()
	for _, src := range srcs {
		conn, err := top.dial(src)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if err := roundTrip(conn); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGetFenceClientsSeesPeers(t *testing.T) {
	top := newTopology(t)
	c, _ := startDriver(t, top)
	openSessions(t, top, fenced4, sibling6)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var addrs []string
	ids := map[string]bool{}
	for range 2 {
		resp, err := c.f.GetFenceClients(ctx, &fence.GetFenceClientsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		addrs = nil
		for _, cl := range resp.GetClients() {
			ids[cl.GetId()] = true
			for _, a := range cl.GetAddresses() {
				addrs = append(addrs, a.GetCidr())
			}
		}
	}
	slices.Sort(addrs)
	if !slices.Equal(addrs, []string{"10.99.0.2/32", "fd00:99::3/128"}) {
		t.Fatalf("GetFenceClients addresses %v", addrs)
	}
	if len(ids) != 2 {
		t.Fatalf("ids not stable across calls: %v", ids)
	}
	// Fencing a peer deletes its conntrack entry: it is no longer reported.
	c.fence(t, "10.99.0.2/32")
	resp, err := c.f.GetFenceClients(ctx, &fence.GetFenceClientsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range resp.GetClients() {
		if cl.GetAddresses()[0].GetCidr() == "10.99.0.2/32" {
			t.Fatalf("fenced peer still reported: %v", resp)
		}
	}
}

// TestConntrackForgottenInBackground checks the background conntrack
// cleanup on its own (GetFenceClients would flush it synchronously): once a
// source is fenced, its conntrack entries disappear within a bound while an
// unfenced sibling's stay.
func TestConntrackForgottenInBackground(t *testing.T) {
	top := newTopology(t)
	c, _ := startDriver(t, top)
	openSessions(t, top, fenced4, sibling4)
	sources := func() map[netip.Addr]bool {
		out := map[netip.Addr]bool{}
		err := top.server.Do(func(ns.NetNS) error {
			flows, err := netlink.ConntrackTableList(netlink.ConntrackTable, unix.AF_INET)
			for _, f := range flows {
				if a, ok := netip.AddrFromSlice(f.Forward.SrcIP); ok {
					out[a.Unmap()] = true
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if s := sources(); !s[fenced4] || !s[sibling4] {
		t.Fatalf("conntrack entries before the fence: %v", s)
	}
	c.fence(t, netip.PrefixFrom(fenced4, 32).String())
	const bound = 10 * time.Second // the forgetter rests at most 1s between passes
	deadline := time.Now().Add(bound)
	for sources()[fenced4] {
		if time.Now().After(deadline) {
			t.Fatalf("conntrack entry of fenced %s still present %v after the fence", fenced4, bound)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !sources()[sibling4] {
		t.Fatalf("conntrack entry of unfenced %s deleted too", sibling4)
	}
}
