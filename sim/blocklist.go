package sim

import "fmt"

// The OSD map's client blocklist. An entry covers one machine's client
// address and has an expiry (Ceph's mon_osd_blocklist_default_expire, 1 h,
// unless the fencer sets one). On cloud a replacement machine gets a new
// address; a bare-metal host keeps its address across reprovisioning and
// reboots (addr).

// blockEntry is a blocklist entry for one machine's client address.
type blockEntry struct {
	addr  int32
	until Time // 0: none
}

// forever is a blocklist entry without expiry.
const forever = Time(1) << 62

// addr is the address generation of machine i: a cloud replacement gets a
// new address, a bare-metal host keeps its own.
func (f *fleet) addr(i int) int32 {
	if f.cfg.Cluster.BareMetal {
		return 0
	}
	return f.m[i].gen
}

// blocklist adds (until > now) or removes (until 0) the blocklist entry of
// machine i's current address.
func (c *cephCluster) blocklist(i int, until Time, by string) {
	m := &c.fleet.m[i]
	c.blocks[i] = blockEntry{addr: c.fleet.addr(i), until: until}
	if c.rec != nil {
		if until >= forever {
			c.logf("ceph", "client address of %s blocklisted by %s (no expiry)", m.Name, by)
		} else if until > c.now {
			c.logf("ceph", "client address of %s blocklisted by %s until %s", m.Name, by, until)
		} else {
			c.logf("ceph", "client address of %s removed from the blocklist by %s", m.Name, by)
		}
	}
	if until > c.now && until < forever {
		c.events.at(until, cephEvent{kind: evBlocklistExpired, id: int32(i), until: until})
	}
	if n := &c.kube.nodes[i]; until > c.now && n.ready && !n.tainted {
		c.watch.violate(8, fmt.Sprintf("%s blocklisted the client address of %s, a Ready node that may run workloads", by, m.Name))
	}
	c.clients.hostChanged(i)
}

// blocklisted reports whether address addr of machine i is blocklisted.
func (c *cephCluster) blocklisted(i int, addr int32) bool {
	e := &c.blocks[i]
	return e.until > c.now && e.addr == addr
}

func (c *cephCluster) blockExpire(i int, until Time) {
	if c.blocks[i].until != until {
		return
	}
	if c.rec != nil {
		c.logf("ceph", "blocklist entry of %s expired", c.fleet.m[i].Name)
	}
	c.clients.hostChanged(i)
}
