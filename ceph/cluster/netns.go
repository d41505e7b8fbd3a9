//go:build linux

package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// bridge is the bridge inside the cluster's namespace that the daemons'
// address lives on and every client's veth joins.
const bridge = "fpbr0"

func netnsPath(name string) string { return filepath.Join("/run/netns", name) }

// createNetNS makes the cluster's namespace: loopback up and the bridge with
// the daemons' address.
func (c *Cluster) createNetNS(ctx context.Context) error {
	sub := netip.MustParsePrefix(c.st.Subnet)
	ns := c.st.NetNS
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "link", "add", bridge, "type", "bridge"},
		{"-n", ns, "addr", "add", fmt.Sprintf("%s/%d", c.st.MonAddr, sub.Bits()), "dev", bridge},
		{"-n", ns, "link", "set", bridge, "up"},
	} {
		if _, err := run(ctx, "", "ip", args...); err != nil {
			return err
		}
	}
	return nil
}

// ClientInfo is a client of the cluster with a network namespace and an
// address of its own.
type ClientInfo struct {
	Name    string   `json:"name"`    // Ceph user name without "client." (writer-a)
	NetNS   string   `json:"netns"`   // namespace name (under /run/netns)
	Addr    string   `json:"addr"`    // its address on the cluster's subnet
	Conf    string   `json:"conf"`    // ceph.conf for it (mon_host, keyring)
	Keyring string   `json:"keyring"` // its key
	Caps    []string `json:"caps"`    // the caps it was created with
}

// Entity is the client's Ceph entity name ("client.writer-a").
func (ci *ClientInfo) Entity() string { return "client." + ci.Name }

// NetNSPath is the path of the client's namespace.
func (ci *ClientInfo) NetNSPath() string { return netnsPath(ci.NetNS) }

// Address is the client's address.
func (ci *ClientInfo) Address() netip.Addr { return netip.MustParseAddr(ci.Addr) }

// Exec runs a program inside the client's namespace.
func (ci *ClientInfo) Exec(ctx context.Context, prog string, args ...string) ([]byte, error) {
	return run(ctx, ci.NetNS, prog, args...)
}

// WriterCaps are the caps of a data client of pool: read the maps, read and
// write the pool's objects.
func WriterCaps(pool string) []string {
	return []string{"mon", "allow r", "osd", "allow rw pool=" + pool}
}

// FencerCaps are the least caps of a fencing driver: read the maps, change
// the blocklist, list the mon's sessions (GetFenceClients).
func FencerCaps() []string {
	return []string{"mon", `allow r, allow command "osd blocklist", allow command "sessions"`}
}

// AddClient creates the Ceph user client.<name> with caps (pairs of service
// and cap string, e.g. WriterCaps), a keyring and a ceph.conf for it, and a
// network namespace with the next free address of the subnet, joined to the
// cluster's bridge. With caps nil the client gets no key (for code that
// brings its own, e.g. a wrong-credentials test).
func (c *Cluster) AddClient(ctx context.Context, name string, caps []string) (*ClientInfo, error) {
	if c.st.NetNS == "" {
		return nil, errors.New("AddClient: the cluster runs in the caller's network namespace (HostAddr): add users with ImportKeyring")
	}
	if name == "" || strings.ContainsAny(name, " ./\t\n") || len(caps)%2 != 0 {
		return nil, fmt.Errorf("client %q: want a plain name and caps as service/cap pairs", name)
	}
	c.mu.Lock()
	for _, ci := range c.st.Clients {
		if ci.Name == name {
			c.mu.Unlock()
			return nil, fmt.Errorf("client %q exists", name)
		}
	}
	sub := netip.MustParsePrefix(c.st.Subnet)
	addr := sub.Addr()
	for range c.st.NextHost {
		addr = addr.Next()
	}
	if !sub.Contains(addr.Next()) {
		c.mu.Unlock()
		return nil, fmt.Errorf("subnet %s is full", sub)
	}
	idx := c.st.NextHost
	c.st.NextHost++
	c.mu.Unlock()
	ci := &ClientInfo{Name: name, NetNS: c.st.NetNS + "-" + strconv.Itoa(idx), Addr: addr.String(),
		Conf: c.path("clients", name+".conf"), Keyring: c.path("clients", name+".keyring"), Caps: caps}
	if len(caps) > 0 {
		args := append([]string{"auth", "get-or-create", ci.Entity()}, caps...)
		out, err := c.Ceph(ctx, args...)
		if err != nil {
			return nil, err
		}
		key, err := parseKeyring(out)
		if err != nil {
			return nil, fmt.Errorf("key of %s: %v", ci.Entity(), err)
		}
		if err := os.WriteFile(ci.Keyring, fmt.Appendf(nil, "[%s]\n\tkey = %s\n", ci.Entity(), key), 0o600); err != nil {
			return nil, err
		}
	}
	conf := fmt.Sprintf("[global]\nfsid = %s\nmon_host = %s\nkeyring = %s\nms_bind_ipv6 = false\nlog_file = %s\nadmin_socket = %s/run/$name.$pid.asok\n",
		c.st.FSID, c.MonHost(), ci.Keyring, c.path("log", "client."+name+".log"), c.dir)
	if err := os.WriteFile(ci.Conf, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	veth := "vc" + strconv.Itoa(idx)
	for _, args := range [][]string{
		{"netns", "add", ci.NetNS},
		{"link", "add", "eth0", "netns", ci.NetNS, "type", "veth", "peer", "name", veth, "netns", c.st.NetNS},
		{"-n", ci.NetNS, "link", "set", "lo", "up"},
		{"-n", ci.NetNS, "addr", "add", fmt.Sprintf("%s/%d", addr, sub.Bits()), "dev", "eth0"},
		{"-n", ci.NetNS, "link", "set", "eth0", "up"},
		{"-n", c.st.NetNS, "link", "set", veth, "master", bridge},
		{"-n", c.st.NetNS, "link", "set", veth, "up"},
	} {
		if _, err := run(ctx, "", "ip", args...); err != nil {
			run(context.Background(), "", "ip", "netns", "del", ci.NetNS)
			return nil, err
		}
	}
	c.mu.Lock()
	c.st.Clients = append(c.st.Clients, ci)
	c.mu.Unlock()
	return ci, c.save()
}

// Client returns the client called name, or nil.
func (c *Cluster) Client(name string) *ClientInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ci := range c.st.Clients {
		if ci.Name == name {
			return ci
		}
	}
	return nil
}

// parseKeyring extracts the key from `ceph auth get-or-create` output (a
// keyring, or its JSON form).
func parseKeyring(out []byte) (string, error) {
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && strings.TrimSpace(k) == "key" {
			return strings.TrimSpace(v), nil
		}
	}
	if i := strings.Index(string(out), `"key":`); i >= 0 {
		rest := strings.TrimSpace(string(out)[i+len(`"key":`):])
		if rest, ok := strings.CutPrefix(rest, `"`); ok {
			if j := strings.IndexByte(rest, '"'); j > 0 {
				return rest[:j], nil
			}
		}
	}
	return "", errors.New("no key in the answer")
}

// Stop kills every daemon, deletes the client namespaces and the cluster's
// namespace and removes the directory. It goes on after errors and returns
// them joined.
func (c *Cluster) Stop() error {
	var errs []error
	for _, name := range c.daemons() {
		if _, err := c.daemonPID(name); err != nil {
			continue
		}
		// Everything is deleted next: no clean shutdown needed.
		if err := c.signal(name, syscall.SIGKILL, true); err != nil {
			errs = append(errs, err)
		}
	}
	c.mu.Lock()
	var nss []string
	for _, ci := range c.st.Clients {
		nss = append(nss, ci.NetNS)
	}
	nss = append(nss, c.st.NetNS)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range nss {
		if ns == "" {
			continue
		}
		if _, err := os.Stat(netnsPath(ns)); err != nil {
			continue
		}
		if _, err := run(ctx, "", "ip", "netns", "del", ns); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
