package sim

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The keys a scenario file may use, declared once: the top-level fields,
// the cluster fields and a fault's fields. ParseScenario, the error
// messages (the allowed keys) and the docs test read these tables.

// scenarioDoc is what the top-level fields fill in; cluster, params and
// faults are read after the mapping (they depend on each other).
type scenarioDoc struct {
	sc                  *Scenario
	cluster, params, fs *yaml.Node
}

var scenarioFields = []field[*scenarioDoc]{
	{name: "name", set: func(p sp, v *yaml.Node, d *scenarioDoc) (err error) { d.sc.Name, err = p.scalar(v, "name"); return }},
	{name: "description", set: func(p sp, v *yaml.Node, d *scenarioDoc) (err error) {
		d.sc.Description, err = p.scalar(v, "description")
		return
	}},
	{name: "cluster", set: func(_ sp, v *yaml.Node, d *scenarioDoc) error { d.cluster = v; return nil }},
	{name: "params", set: func(_ sp, v *yaml.Node, d *scenarioDoc) error { d.params = v; return nil }},
	{name: "seed", set: func(p sp, v *yaml.Node, d *scenarioDoc) error {
		n, err := p.intv(v, "seed", 0, 1<<62)
		d.sc.Seed = uint64(n)
		return err
	}},
	{name: "duration", set: func(p sp, v *yaml.Node, d *scenarioDoc) (err error) {
		if d.sc.Duration, err = p.dur(v, "duration"); err == nil && d.sc.Duration <= 0 {
			err = p.errf(v, "duration must be > 0")
		}
		return
	}},
	{name: "faults", set: func(_ sp, v *yaml.Node, d *scenarioDoc) error { d.fs = v; return nil }},
	{name: "expect", set: func(p sp, v *yaml.Node, d *scenarioDoc) error {
		return p.fields(v, "expect", PolicyNames(), func(pol string, ev *yaml.Node) error {
			verdict, err := p.verdict(ev)
			d.sc.Expect[pol] = verdict
			return err
		})
	}},
}

// intField reads an integer in lo..hi into the cluster field at; it is
// shown when it is not 0 (or always).
func intField(name string, lo, hi int, always bool, at func(*Cluster) *int) field[*Cluster] {
	return field[*Cluster]{name: name, set: func(p sp, v *yaml.Node, c *Cluster) (err error) {
		*at(c), err = p.intv(v, name, lo, hi)
		return
	}, show: func(c *Cluster) string {
		if v := *at(c); v != 0 || always {
			return fmt.Sprint(v)
		}
		return ""
	}}
}

// enumField reads one of names and hands its index to set; get gives the
// index back, shown when it is not 0 (or always).
func enumField(name string, names []string, always bool, set func(*Cluster, int), get func(*Cluster) int) field[*Cluster] {
	return field[*Cluster]{name: name, set: func(p sp, v *yaml.Node, c *Cluster) error {
		i, err := p.enum(v, name, names)
		if err == nil {
			set(c, i)
		}
		return err
	}, show: func(c *Cluster) string {
		if i := get(c); i != 0 || always {
			return names[i]
		}
		return ""
	}}
}

// machineRefs lists machines; it is late because it needs cluster.machines.
func machineRefs(name string, at func(*Cluster) *[]int) field[*Cluster] {
	return field[*Cluster]{name: name, late: true, set: func(p sp, v *yaml.Node, c *Cluster) (err error) {
		*at(c), err = p.machines(v, name, c.Machines)
		return
	}, show: func(c *Cluster) string {
		if len(*at(c)) == 0 {
			return ""
		}
		var ms []string
		for _, i := range *at(c) {
			ms = append(ms, fmt.Sprintf("m%d", i+1))
		}
		return "[" + strings.Join(ms, ", ") + "]"
	}}
}

func b2n(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ClusterYAML renders a cluster as a `cluster:` flow mapping that
// ParseScenario reads back to the same cluster.
func ClusterYAML(c Cluster) string {
	var parts []string
	for _, f := range clusterFields {
		if v := f.show(&c); v != "" {
			parts = append(parts, f.name+": "+v)
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

var boolNames = []string{"false", "true"}

var platformNames = []string{"cloud", "baremetal"}

// clusterFields are the keys of `cluster:`.
var clusterFields = []field[*Cluster]{
	intField("machines", 1, 100000, true, func(c *Cluster) *int { return &c.Machines }),
	intField("osdsPerMachine", 0, 64, true, func(c *Cluster) *int { return &c.OSDsPerMachine }),
	intField("pgs", 0, 10_000_000, true, func(c *Cluster) *int { return &c.PGs }),
	intField("mons", 1, 9, true, func(c *Cluster) *int { return &c.Mons }),
	enumField("platform", platformNames, true, func(c *Cluster, i int) { c.BareMetal = i == 1 }, func(c *Cluster) int { return b2n(c.BareMetal) }),
	enumField("fenceKind", fenceKindNames, true, func(c *Cluster, i int) { c.FenceKind = FenceKind(i) }, func(c *Cluster) int { return int(c.FenceKind) }),
	{name: "operatorOn", late: true, set: func(p sp, v *yaml.Node, c *Cluster) error {
		if s, err := p.scalar(v, "operatorOn"); err != nil || s == "control-plane" {
			c.OperatorOn = -1
			return err
		}
		i, err := p.machine(v, "operatorOn", c.Machines)
		c.OperatorOn = i
		return err
	}, show: func(c *Cluster) string {
		if c.OperatorOn < 0 {
			return "control-plane"
		}
		return fmt.Sprintf("m%d", c.OperatorOn+1)
	}},
	machineRefs("standalone", func(c *Cluster) *[]int { return &c.Standalone }),
	intField("machineSetScale", 0, 100000, false, func(c *Cluster) *int { return &c.MachineSetScale }),
	intField("clients", 0, 100000, true, func(c *Cluster) *int { return &c.Clients }),
	enumField("mdb", mdbNames(), false, func(c *Cluster, i int) { c.MDB = MDBVariant(i) }, func(c *Cluster) int { return int(c.MDB) }),
	enumField("operatorHA", boolNames, false, func(c *Cluster, i int) { c.OperatorHA = i == 1 }, func(c *Cluster) int { return b2n(c.OperatorHA) }),
	intField("racks", 0, 100000, false, func(c *Cluster) *int { return &c.Racks }),
	intField("zones", 0, 100000, false, func(c *Cluster) *int { return &c.Zones }),
	enumField("failureDomain", crushTypeNames[:CrushRoot], false, func(c *Cluster, i int) { c.FailureDomain = CrushType(i) }, func(c *Cluster) int { return int(c.FailureDomain) }),
	machineRefs("monsOn", func(c *Cluster) *[]int { return &c.MonsOn }),
	enumField("monStore", monStoreNames, false, func(c *Cluster, i int) { c.MonStore = MonStore(i) }, func(c *Cluster) int { return int(c.MonStore) }),
	enumField("workloads", workloadKindNames, false, func(c *Cluster, i int) { c.WorkloadKind = WorkloadKind(i) }, func(c *Cluster) int { return int(c.WorkloadKind) }),
	// the scenario key says attachRequired (true, the default); the
	// cluster holds NoAttach
	enumField("attachRequired", []string{"true", "false"}, false, func(c *Cluster, i int) { c.NoAttach = i == 1 }, func(c *Cluster) int { return b2n(c.NoAttach) }),
}

// ClusterFieldNames lists the keys accepted under a scenario's `cluster:`.
func ClusterFieldNames() []string { return fieldNames(clusterFields) }
