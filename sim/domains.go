package sim

import "fmt"

// Failure domains: the CRUSH hierarchy root > zone > rack > host > osd.
// cluster.racks and cluster.zones (0: the level does not exist) place
// machine i in rack i mod racks and that rack in zone rack mod zones (or,
// without racks, machine i in zone i mod zones), so consecutive machines
// spread over the domains as a production layout does. The pool's failure
// domain (cluster.failureDomain: host, rack or zone) keeps every replica of
// a PG in a different domain of that type; mon_osd_down_out_subtree_limit
// (default rack) keeps the mon from marking out the OSDs of a whole down
// subtree of that type or larger (Ceph's OSDMap::containing_subtree_is_down
// walk: host, then each existing bucket above it).

// CrushType is a level of the CRUSH hierarchy.
type CrushType uint8

// CRUSH bucket types, smallest first.
const (
	CrushHost CrushType = iota + 1
	CrushRack
	CrushZone
	CrushRoot
)

var crushTypeNames = []string{CrushHost: "host", CrushRack: "rack", CrushZone: "zone", CrushRoot: "root"}

// String returns Ceph's name of the bucket type.
func (t CrushType) String() string { return crushTypeNames[t] }

func lookupCrushType(n string) (CrushType, bool) {
	for i, v := range crushTypeNames {
		if v == n && i > 0 {
			return CrushType(i), true
		}
	}
	return 0, false
}

// topology is the per-machine position in the CRUSH hierarchy and the
// per-bucket count of up OSDs.
type topology struct {
	rack, zone []int32 // per machine (-1: no such level)
	dom        []int32 // per machine: its bucket of the pool's failure domain type
	rackUp     []int   // up OSDs per rack
	zoneUp     []int   // up OSDs per zone
	up         int     // up OSDs in the root
}

// validateDomains checks the cluster's racks, zones and failure domain.
func validateDomains(c Cluster, size int) error {
	switch {
	case c.Racks < 0 || c.Zones < 0:
		return fmt.Errorf("racks and zones must be >= 0")
	case c.Racks > 0 && c.Zones > 0 && (c.Racks < c.Zones || c.Racks%c.Zones != 0):
		return fmt.Errorf("racks (%d) must be a multiple of zones (%d)", c.Racks, c.Zones)
	case c.Racks > c.Machines || c.Zones > c.Machines:
		return fmt.Errorf("more racks or zones than machines (%d)", c.Machines)
	case c.FailureDomain == CrushRack && c.Racks == 0:
		return fmt.Errorf("failureDomain rack needs racks")
	case c.FailureDomain == CrushZone && c.Zones == 0:
		return fmt.Errorf("failureDomain zone needs zones")
	case c.FailureDomain == CrushRoot:
		return fmt.Errorf("failureDomain: want host, rack or zone")
	}
	if c.OSDsPerMachine > 0 && c.PGs > 0 {
		if n := domainCount(c); n < size {
			return fmt.Errorf("poolSize %d needs at least %d %ss (failure domain), have %d", size, size, c.failureDomain(), n)
		}
	}
	return nil
}

func (c Cluster) failureDomain() CrushType {
	if c.FailureDomain == 0 {
		return CrushHost
	}
	return c.FailureDomain
}

func domainCount(c Cluster) int {
	switch c.failureDomain() {
	case CrushRack:
		return c.Racks
	case CrushZone:
		return c.Zones
	}
	return c.Machines
}

func (c *cephCluster) initTopology() {
	cl := c.cfg.Cluster
	t := &c.topo
	n := len(c.fleet.m)
	t.rack, t.zone, t.dom = make([]int32, n), make([]int32, n), make([]int32, n)
	t.rackUp, t.zoneUp = make([]int, cl.Racks), make([]int, cl.Zones)
	for i := 0; i < n; i++ {
		t.rack[i], t.zone[i] = -1, -1
		if cl.Racks > 0 {
			t.rack[i] = int32(i % cl.Racks)
			if cl.Zones > 0 {
				t.zone[i] = t.rack[i] % int32(cl.Zones)
			}
		} else if cl.Zones > 0 {
			t.zone[i] = int32(i % cl.Zones)
		}
		switch cl.failureDomain() {
		case CrushRack:
			t.dom[i] = t.rack[i]
		case CrushZone:
			t.dom[i] = t.zone[i]
		default:
			t.dom[i] = int32(i)
		}
	}
}

// domainOf is host h's bucket of the pool's failure domain type.
func (c *cephCluster) domainOf(h int) int32 { return c.topo.dom[h] }

// countUp keeps the per-bucket up-OSD counts as OSD i goes up (d=1) or down (d=-1).
func (c *cephCluster) countUp(i int, d int) {
	t := &c.topo
	h := c.osds[i].m
	t.up += d
	if r := t.rack[h]; r >= 0 {
		t.rackUp[r] += d
	}
	if z := t.zone[h]; z >= 0 {
		t.zoneUp[z] += d
	}
}

// subtreeDown reports whether OSD i lies in a whole down subtree of type
// mon_osd_down_out_subtree_limit or larger, walking up from its host
// through the levels that exist; then the mon does not mark it out.
func (c *cephCluster) subtreeDown(i int) (CrushType, bool) {
	t := &c.topo
	h := c.osds[i].m
	lim := c.P.MonOSDDownOutSubtreeLimit
	if c.upOSDs[h] > 0 {
		return 0, false
	}
	if CrushHost >= lim {
		return CrushHost, true
	}
	if r := t.rack[h]; r >= 0 {
		if t.rackUp[r] > 0 {
			return 0, false
		}
		if CrushRack >= lim {
			return CrushRack, true
		}
	}
	if z := t.zone[h]; z >= 0 {
		if t.zoneUp[z] > 0 {
			return 0, false
		}
		if CrushZone >= lim {
			return CrushZone, true
		}
	}
	return CrushRoot, t.up == 0
}

// location names machine i's place in the hierarchy ("zone 1, rack 4").
func (c *cephCluster) location(i int) string {
	t := &c.topo
	out := ""
	if z := t.zone[i]; z >= 0 {
		out = fmt.Sprintf("zone %d", z)
	}
	if r := t.rack[i]; r >= 0 {
		if out != "" {
			out += ", "
		}
		out += fmt.Sprintf("rack %d", r)
	}
	return out
}
