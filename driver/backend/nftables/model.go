//go:build linux

package nftables

import (
	"net/netip"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// model is what the backend enforces. Host prefixes (/32, /128), the common
// fence, live in plain hash sets (hosts4/hosts6), where adding or removing
// one element costs the same whatever the set holds; wider prefixes live as
// their union in the interval sets (fenced4/fenced6). In the kernel an
// interval set change costs time in proportion to the set's size, so keeping
// hosts out of it keeps a change cheap with many fences stored.
type model struct {
	wide  *cidr.Set
	hosts map[netip.Addr]int
}

// delta is a model change as set elements.
type delta struct {
	wide             cidr.Delta
	hostAdd, hostDel []netip.Addr
}

func (d delta) empty() bool {
	return d.wide.Empty() && len(d.hostAdd) == 0 && len(d.hostDel) == 0
}

func isHost(p netip.Prefix) bool { return p.Bits() == p.Addr().BitLen() }

func newModel(ps []netip.Prefix) *model {
	m := &model{hosts: map[netip.Addr]int{}}
	var wide []netip.Prefix
	for _, p := range ps {
		if !p.IsValid() {
			continue
		}
		if p = p.Masked(); isHost(p) {
			m.hosts[p.Addr()]++
		} else {
			wide = append(wide, p)
		}
	}
	m.wide = cidr.NewSet(wide)
	return m
}

// change applies add and remove and returns the net element changes.
func (m *model) change(add, remove []netip.Prefix) delta {
	var wideAdd, wideRm []netip.Prefix
	net := map[netip.Addr]int{}
	for _, p := range add {
		if !p.IsValid() {
			continue
		}
		if p = p.Masked(); !isHost(p) {
			wideAdd = append(wideAdd, p)
		} else if m.hosts[p.Addr()]++; m.hosts[p.Addr()] == 1 {
			net[p.Addr()]++
		}
	}
	for _, p := range remove {
		if !p.IsValid() {
			continue
		}
		p = p.Masked()
		switch n := m.hosts[p.Addr()]; {
		case !isHost(p):
			wideRm = append(wideRm, p)
		case n == 1:
			delete(m.hosts, p.Addr())
			net[p.Addr()]--
		case n > 1:
			m.hosts[p.Addr()]--
		}
	}
	d := delta{wide: m.wide.Change(wideAdd, wideRm)}
	for a, n := range net {
		switch {
		case n > 0:
			d.hostAdd = append(d.hostAdd, a)
		case n < 0:
			d.hostDel = append(d.hostDel, a)
		}
	}
	return d
}

// added returns the ranges that became fenced (for conntrack cleanup).
func (d delta) added() []cidr.Range {
	out := append([]cidr.Range(nil), d.wide.Added...)
	for _, a := range d.hostAdd {
		out = append(out, cidr.Range{From: a, To: a})
	}
	return out
}

// hostsOf returns the hosts of one family.
func (m *model) hostsOf(ipv6 bool) []netip.Addr {
	var out []netip.Addr
	for a := range m.hosts {
		if a.Is6() == ipv6 {
			out = append(out, a)
		}
	}
	return out
}

// union is everything enforced, as merged ranges.
func (m *model) union() []cidr.Range {
	rs := m.wide.Ranges()
	for a := range m.hosts {
		rs = append(rs, cidr.Range{From: a, To: a})
	}
	return cidr.Merge(rs)
}
