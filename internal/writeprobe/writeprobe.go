//go:build linux

// Package writeprobe is the enforce command the project ships for its
// nftables setup (the reference driver enforcing in a network namespace):
// a write from any address, seen from the storage's side.
//
// A Topology is two network namespaces joined by a veth pair: the server
// namespace, where the driver's nftables table drops fenced sources and a
// listener acknowledges writes, and the client namespace, from whose end of
// the veth any address of the fenced ranges can write. Probe, which
// `fenceproof write-probe` runs once per address, adds the address to the
// client's interface, connects from it to the listener, writes one line and
// waits for the acknowledgement: acknowledged is allowed; no connection or
// no acknowledgement within the timeout (the drop rules answer nothing),
// or a refused connection, is refused. Both namespaces are unnamed (held
// by descriptors of the process that made them, reached by others through
// /proc/PID/fd/N), so nothing outlives that process.
package writeprobe

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/fenceproof/fenceproof/internal/privatens"
)

// Interface names and the listener's addresses, inside the namespaces only.
const (
	ServerLink = "fp-store"
	ClientLink = "fp-writer"
)

var (
	listen4 = netip.MustParseAddr("169.254.77.1")
	listen6 = netip.MustParseAddr("fd00:77::1")
	// The client's own addresses: an interface that loses its last IPv4
	// address loses its routes, so the probes' come and go beside these.
	client4 = netip.MustParseAddr("169.254.77.2")
	client6 = netip.MustParseAddr("fd00:77::2")
)

// ack is the listener's answer to one written line.
const ack = "ack"

// Topology is the server and client namespaces, the veth between them and
// the listener.
type Topology struct {
	server, client netns.NsHandle
	// Targets are the listener's addresses, one per family.
	Targets []netip.AddrPort
	lis     []net.Listener
	wg      sync.WaitGroup
}

// New builds the topology: the server namespace routes every prefix of
// routes to the client's end of the veth, so an address of them written
// from there is seen as its own source.
func New(routes []netip.Prefix) (*Topology, error) {
	t := &Topology{server: netns.None(), client: netns.None()}
	var err error
	if t.server, err = privatens.New(); err == nil {
		t.client, err = privatens.New()
	}
	if err == nil {
		err = t.link(routes)
	}
	if err == nil {
		err = t.listen()
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// ServerPath is the server namespace's path, for the driver's --netns.
func (t *Topology) ServerPath() string { return fdPath(t.server) }

// ClientPath is the client namespace's path, for the probes.
func (t *Topology) ClientPath() string { return fdPath(t.client) }

func fdPath(h netns.NsHandle) string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), int(h)) }

// Command is the enforce command line for the suite: self (the fenceproof
// binary) write-probe into this topology; the suite appends the address.
func (t *Topology) Command(self string) string {
	var to []string
	for _, a := range t.Targets {
		to = append(to, "--to "+a.String())
	}
	return fmt.Sprintf("%s write-probe --netns %s --timeout 600ms %s", self, t.ClientPath(), strings.Join(to, " "))
}

// Close stops the listener and lets the namespaces go (with the veth).
func (t *Topology) Close() {
	for _, l := range t.lis {
		_ = l.Close()
	}
	t.wg.Wait()
	for _, h := range []netns.NsHandle{t.server, t.client} {
		if h.IsOpen() {
			_ = h.Close()
		}
	}
}

// link creates the veth pair, brings everything up, gives the server its
// addresses and both sides their routes.
func (t *Topology) link(routes []netip.Prefix) error {
	hs, err := netlink.NewHandleAt(t.server)
	if err != nil {
		return err
	}
	defer hs.Close()
	hc, err := netlink.NewHandleAt(t.client)
	if err != nil {
		return err
	}
	defer hc.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: ServerLink}, PeerName: ClientLink, PeerNamespace: netlink.NsFd(int(t.client))}
	if err := hs.LinkAdd(veth); err != nil {
		return fmt.Errorf("veth: %w", err)
	}
	srv, err := up(hs, ServerLink)
	if err != nil {
		return err
	}
	cli, err := up(hc, ClientLink)
	if err != nil {
		return err
	}
	// Each side knows the other's address and link address for good, and
	// the server reaches the fenced ranges through the client's address:
	// no neighbour discovery ever runs. (A neighbour solicitation sent from
	// a fenced source is dropped like any packet from it, and left the
	// listener unreachable from every address for a while; resolving each
	// probe's address raced its removal.)
	for _, side := range []struct {
		h          *netlink.Handle
		own, other netlink.Link
		addrs      []netip.Addr // its own, then the other side's
	}{
		{hs, srv, cli, []netip.Addr{listen4, listen6, client4, client6}},
		{hc, cli, srv, []netip.Addr{client4, client6, listen4, listen6}},
	} {
		idx := side.own.Attrs().Index
		for i, a := range side.addrs {
			var err error
			switch {
			case i < 2:
				err = side.h.AddrAdd(side.own, hostAddr(a))
			default:
				err = side.h.RouteAdd(&netlink.Route{LinkIndex: idx, Dst: prefixNet(netip.PrefixFrom(a, a.BitLen())), Scope: netlink.SCOPE_LINK})
				if err == nil {
					err = side.h.NeighAdd(&netlink.Neigh{LinkIndex: idx, Family: family(a), State: netlink.NUD_PERMANENT, IP: a.AsSlice(), HardwareAddr: side.other.Attrs().HardwareAddr})
				}
			}
			if err != nil {
				return fmt.Errorf("%s on %s: %w", a, side.own.Attrs().Name, err)
			}
		}
	}
	for _, p := range routes {
		via := client4
		if p.Addr().Is6() {
			via = client6
		}
		if err := hs.RouteAdd(&netlink.Route{LinkIndex: srv.Attrs().Index, Dst: prefixNet(p), Gw: via.AsSlice()}); err != nil {
			return fmt.Errorf("route to %s: %w", p, err)
		}
	}
	return nil
}

func family(a netip.Addr) int {
	if a.Is4() {
		return netlink.FAMILY_V4
	}
	return netlink.FAMILY_V6
}

// up brings lo and the named link up.
func up(h *netlink.Handle, name string) (netlink.Link, error) {
	for _, n := range []string{"lo", name} {
		l, err := h.LinkByName(n)
		if err != nil {
			return nil, fmt.Errorf("link %s: %w", n, err)
		}
		if err := h.LinkSetUp(l); err != nil {
			return nil, fmt.Errorf("link %s up: %w", n, err)
		}
	}
	return h.LinkByName(name)
}

func prefixNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// hostAddr is a as a host address without duplicate address detection, so
// it is usable at once.
func hostAddr(a netip.Addr) *netlink.Addr {
	return &netlink.Addr{IPNet: prefixNet(netip.PrefixFrom(a, a.BitLen())), Flags: unix.IFA_F_NODAD}
}

// listen starts the listener in the server namespace, one socket per
// family: each connection writes lines and gets ack for each.
func (t *Topology) listen() error {
	return inNS(t.server, func() error {
		for _, a := range []netip.Addr{listen4, listen6} {
			l, err := net.Listen("tcp", netip.AddrPortFrom(a, 0).String())
			if err != nil {
				return fmt.Errorf("listen on %s: %w", a, err)
			}
			t.lis = append(t.lis, l)
			t.Targets = append(t.Targets, netip.MustParseAddrPort(l.Addr().String()))
			t.wg.Add(1)
			go t.serve(l)
		}
		return nil
	})
}

func (t *Topology) serve(l net.Listener) {
	defer t.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				if _, err := fmt.Fprintln(c, ack); err != nil {
					return
				}
			}
		}()
	}
}

// inNS runs f on a thread inside h: the sockets f opens belong to h.
func inNS(h netns.NsHandle, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		if err := netns.Set(h); err != nil {
			errc <- err
			return
		}
		err = f()
		if serr := netns.Set(orig); serr != nil {
			errc <- errors.Join(err, serr) // the thread stays locked and dies with the goroutine
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// Probe writes one line from addr, in the client namespace at clientPath,
// to the target of addr's family, and reports whether it was acknowledged
// within timeout. A connection refused, or nothing before the timeout, is
// a refused write; anything else is an error.
func Probe(clientPath string, targets []netip.AddrPort, addr netip.Addr, timeout time.Duration) (bool, error) {
	var to netip.AddrPort
	for _, t := range targets {
		if t.Addr().Is4() == addr.Is4() {
			to = t
		}
	}
	if !to.IsValid() {
		return false, fmt.Errorf("no --to of %s's family", addr)
	}
	h, err := netns.GetFromPath(clientPath)
	if err != nil {
		return false, fmt.Errorf("client namespace %s: %w", clientPath, err)
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		return false, err
	}
	defer nh.Close()
	link, err := nh.LinkByName(ClientLink)
	if err != nil {
		return false, fmt.Errorf("link %s in %s: %w", ClientLink, clientPath, err)
	}
	if err := nh.AddrAdd(link, hostAddr(addr)); err != nil {
		return false, fmt.Errorf("address %s: %w", addr, err)
	}
	defer func() { _ = nh.AddrDel(link, hostAddr(addr)) }()
	var acked bool
	err = inNS(h, func() error {
		// Attempts of attemptTimeout each until the timeout: a SYN lost
		// on the veth (it happens while the probes' addresses come and go)
		// would otherwise wait for TCP's 1 s retransmission.
		deadline := time.Now().Add(timeout)
		for !acked && time.Now().Before(deadline) {
			var err error
			if acked, err = write(addr, to, min(attemptTimeout, time.Until(deadline))); err != nil {
				return err
			}
		}
		return nil
	})
	return acked, err
}

// attemptTimeout bounds one connection of a probe.
const attemptTimeout = 250 * time.Millisecond

// write connects from addr to to, writes one line and reads the
// acknowledgement, all within timeout.
func write(addr netip.Addr, to netip.AddrPort, timeout time.Duration) (bool, error) {
	d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(addr, 0)), Timeout: timeout}
	start := time.Now()
	c, err := d.Dial("tcp", to.String())
	if err != nil {
		return false, refusal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(start.Add(timeout))
	if _, err := fmt.Fprintf(c, "write from %s\n", addr); err != nil {
		return false, refusal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return false, refusal(err)
	}
	return strings.TrimSpace(line) == ack, nil
}

// refusal is nil for what a refused write looks like (a timeout, a refused
// or reset connection), else err.
func refusal(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return nil
	}
	return err
}
