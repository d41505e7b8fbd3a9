//go:build linux

package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
)

// WriterAt makes a network namespace whose only address is addr, joined to
// the cluster's bridge, so that a client started in it reaches the daemons
// and they see addr as its address (any address, not only the subnet's: a
// fenced block of the documentation ranges). It returns the namespace's
// path and a function that removes it and its route. Only IPv4: the
// daemons bind an IPv4 address.
func (c *Cluster) WriterAt(ctx context.Context, addr netip.Addr) (string, func(), error) {
	if c.st.NetNS == "" {
		return "", nil, errors.New("WriterAt: the cluster runs in the caller's network namespace (HostAddr)")
	}
	if !addr.Is4() {
		return "", nil, fmt.Errorf("WriterAt %s: the daemons bind IPv4 only", addr)
	}
	c.mu.Lock()
	c.probes++
	n := c.probes
	c.mu.Unlock()
	// Names of at most 15 bytes: the veth's peer lives in the cluster's
	// namespace beside the clients' vcN.
	ns, veth := fmt.Sprintf("%s-p%d-%d", c.st.NetNS, os.Getpid(), n), fmt.Sprintf("vp%x-%d", os.Getpid()&0xffff, n)
	host := fmt.Sprintf("%s/32", addr)
	sub := netip.MustParsePrefix(c.st.Subnet)
	remove := func() {
		bg := context.Background()
		run(bg, "", "ip", "-n", c.st.NetNS, "route", "del", host, "dev", bridge)
		run(bg, "", "ip", "netns", "del", ns)
	}
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", veth, "netns", c.st.NetNS},
		{"-n", ns, "link", "set", "lo", "up"},
		{"-n", ns, "addr", "add", host, "dev", "eth0"},
		{"-n", ns, "link", "set", "eth0", "up"},
		{"-n", ns, "route", "add", sub.String(), "dev", "eth0", "scope", "link"},
		{"-n", c.st.NetNS, "link", "set", veth, "master", bridge},
		{"-n", c.st.NetNS, "link", "set", veth, "up"},
		// replace: a probe killed before its cleanup may have left one
		{"-n", c.st.NetNS, "route", "replace", host, "dev", bridge, "scope", "link"},
	} {
		if _, err := run(ctx, "", "ip", args...); err != nil {
			remove()
			return "", nil, err
		}
	}
	return netnsPath(ns), remove, nil
}
