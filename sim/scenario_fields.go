package sim

import "go.yaml.in/yaml/v3"

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

// intField reads an integer in lo..hi into the cluster field at.
func intField(name string, lo, hi int, at func(*Cluster) *int) field[*Cluster] {
	return field[*Cluster]{name: name, set: func(p sp, v *yaml.Node, c *Cluster) (err error) {
		*at(c), err = p.intv(v, name, lo, hi)
		return
	}}
}

// enumField reads one of names and hands its index to set.
func enumField(name string, names []string, set func(*Cluster, int)) field[*Cluster] {
	return field[*Cluster]{name: name, set: func(p sp, v *yaml.Node, c *Cluster) error {
		i, err := p.enum(v, name, names)
		if err == nil {
			set(c, i)
		}
		return err
	}}
}

// machineRefs lists machines; it is late because it needs cluster.machines.
func machineRefs(name string, at func(*Cluster) *[]int) field[*Cluster] {
	return field[*Cluster]{name: name, late: true, set: func(p sp, v *yaml.Node, c *Cluster) (err error) {
		*at(c), err = p.machines(v, name, c.Machines)
		return
	}}
}

var boolNames = []string{"false", "true"}

var platformNames = []string{"cloud", "baremetal"}

// clusterFields are the keys of `cluster:`.
var clusterFields = []field[*Cluster]{
	intField("machines", 1, 100000, func(c *Cluster) *int { return &c.Machines }),
	intField("osdsPerMachine", 0, 64, func(c *Cluster) *int { return &c.OSDsPerMachine }),
	intField("pgs", 0, 10_000_000, func(c *Cluster) *int { return &c.PGs }),
	intField("mons", 1, 9, func(c *Cluster) *int { return &c.Mons }),
	enumField("platform", platformNames, func(c *Cluster, i int) { c.BareMetal = i == 1 }),
	enumField("fenceKind", fenceKindNames, func(c *Cluster, i int) { c.FenceKind = FenceKind(i) }),
	{name: "operatorOn", late: true, set: func(p sp, v *yaml.Node, c *Cluster) error {
		if s, err := p.scalar(v, "operatorOn"); err != nil || s == "control-plane" {
			c.OperatorOn = -1
			return err
		}
		i, err := p.machine(v, "operatorOn", c.Machines)
		c.OperatorOn = i
		return err
	}},
	machineRefs("standalone", func(c *Cluster) *[]int { return &c.Standalone }),
	intField("machineSetScale", 0, 100000, func(c *Cluster) *int { return &c.MachineSetScale }),
	intField("clients", 0, 100000, func(c *Cluster) *int { return &c.Clients }),
	enumField("mdb", mdbNames(), func(c *Cluster, i int) { c.MDB = MDBVariant(i) }),
	enumField("operatorHA", boolNames, func(c *Cluster, i int) { c.OperatorHA = i == 1 }),
	intField("racks", 0, 100000, func(c *Cluster) *int { return &c.Racks }),
	intField("zones", 0, 100000, func(c *Cluster) *int { return &c.Zones }),
	enumField("failureDomain", crushTypeNames[:CrushRoot], func(c *Cluster, i int) { c.FailureDomain = CrushType(i) }),
	machineRefs("monsOn", func(c *Cluster) *[]int { return &c.MonsOn }),
	enumField("monStore", monStoreNames, func(c *Cluster, i int) { c.MonStore = MonStore(i) }),
	enumField("workloads", workloadKindNames, func(c *Cluster, i int) { c.WorkloadKind = WorkloadKind(i) }),
	enumField("attachRequired", boolNames, func(c *Cluster, i int) { c.NoAttach = i == 0 }),
}

// ClusterFieldNames lists the keys accepted under a scenario's `cluster:`.
func ClusterFieldNames() []string { return fieldNames(clusterFields) }
