package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Fault is one scheduled fault. Machine is -1 for controller faults.
type Fault struct {
	// At is when the fault happens.
	At Time
	// Kind is what happens.
	Kind FaultKind
	// Machine is the machine's index (m1 is 0).
	Machine int
	// For, when > 0, repairs the fault after this long (on the same machine
	// incarnation: a replacement machine does not inherit it).
	For Time
}

// Scenario is a scripted fault schedule with expected verdicts per policy.
type Scenario struct {
	// File is the path the scenario was loaded from.
	File string
	// Name identifies the scenario in reports and golden files.
	Name string
	// Description says what the scenario rehearses.
	Description string
	// Cluster is the simulated cluster.
	Cluster Cluster
	// Params are the defaults with the file's overrides.
	Params Params
	// Seed is the default RNG seed.
	Seed uint64
	// Duration is the simulated time of a run.
	Duration Time
	// Faults is the fault schedule, sorted by time, repeats expanded.
	Faults []Fault
	// Expect maps a policy name to its expected verdict ("pass" or "inv1,inv4").
	Expect map[string]string
}

// Config returns the run configuration for a policy.
func (sc *Scenario) Config(pol *Policy, seed uint64) Config {
	return Config{Name: sc.Name, Cluster: sc.Cluster, Params: sc.Params, Policy: pol, Seed: seed,
		Faults: sc.Faults, Duration: sc.Duration}
}

// FaultString renders a fault the way scenario files write it.
func (sc *Scenario) FaultString(f Fault) string {
	return FaultString(sc.Cluster, f)
}

// FaultString renders a fault as a YAML flow mapping.
func FaultString(c Cluster, f Fault) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{at: %s, kind: %s", f.At.Dur(), f.Kind)
	if f.Machine >= 0 {
		fmt.Fprintf(&b, ", machine: m%d", f.Machine+1)
	}
	if f.For > 0 {
		fmt.Fprintf(&b, ", for: %s", f.For.Dur())
	}
	b.WriteString("}")
	return b.String()
}

// LoadScenarios loads every *.yaml file in dir, sorted by name.
func LoadScenarios(dir string) ([]*Scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no scenarios (*.yaml) in %s", dir)
	}
	sort.Strings(files)
	var out []*Scenario
	for _, f := range files {
		sc, err := LoadScenario(f)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// LoadScenario reads and validates one scenario file.
func LoadScenario(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScenario(path, data)
}

type sp struct{ file string }

func (p sp) errf(n *yaml.Node, format string, a ...any) error {
	return fmt.Errorf("%s:%d:%d: %s", p.file, n.Line, n.Column, fmt.Sprintf(format, a...))
}

// fields walks a mapping node, rejecting unknown and duplicate keys.
func (p sp) fields(n *yaml.Node, what string, allowed []string, f func(key string, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s: want a mapping", what)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ok := false
		for _, a := range allowed {
			ok = ok || a == k.Value
		}
		if !ok {
			return p.errf(k, "unknown field %q in %s (allowed: %s)", k.Value, what, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return p.errf(k, "duplicate field %q in %s", k.Value, what)
		}
		seen[k.Value] = true
		if err := f(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func (p sp) scalar(v *yaml.Node, what string) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", p.errf(v, "%s: want a scalar", what)
	}
	return v.Value, nil
}

func (p sp) intv(v *yaml.Node, what string, lo, hi int) (int, error) {
	s, err := p.scalar(v, what)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, p.errf(v, "%s: want an integer in %d..%d, got %q", what, lo, hi, s)
	}
	return n, nil
}

func (p sp) dur(v *yaml.Node, what string) (Time, error) {
	s, err := p.scalar(v, what)
	if err != nil {
		return 0, err
	}
	t, err := ParseDuration(s)
	if err != nil {
		return 0, p.errf(v, "%s: %v", what, err)
	}
	return t, nil
}

func (p sp) machine(v *yaml.Node, what string, n int) (int, error) {
	s, err := p.scalar(v, what)
	if err != nil {
		return 0, err
	}
	if strings.HasPrefix(s, "m") {
		if i, err := strconv.Atoi(s[1:]); err == nil && i >= 1 && i <= n {
			return i - 1, nil
		}
	}
	return 0, p.errf(v, "%s: unknown machine %q (machines are m1..m%d)", what, s, n)
}

// ParseScenario parses and validates scenario YAML. Errors carry file:line:col.
func ParseScenario(file string, data []byte) (*Scenario, error) {
	p := sp{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%s: empty scenario", file)
	}
	root := doc.Content[0]
	sc := &Scenario{File: file, Params: DefaultParams(), Seed: 1, Duration: 6 * Hour, Expect: map[string]string{},
		Cluster: Cluster{Machines: 5, OSDsPerMachine: 2, PGs: 128, Mons: 3, OperatorOn: -1}}
	var clusterNode, faultsNode, paramsNode *yaml.Node
	err := p.fields(root, "scenario", []string{"name", "description", "cluster", "params", "seed", "duration", "faults", "expect"}, func(k string, v *yaml.Node) error {
		var err error
		switch k {
		case "name":
			sc.Name, err = p.scalar(v, k)
		case "description":
			sc.Description, err = p.scalar(v, k)
		case "cluster":
			clusterNode = v
		case "params":
			paramsNode = v
		case "faults":
			faultsNode = v
		case "seed":
			var n int
			n, err = p.intv(v, k, 0, 1<<62)
			sc.Seed = uint64(n)
		case "duration":
			sc.Duration, err = p.dur(v, k)
			if err == nil && sc.Duration <= 0 {
				err = p.errf(v, "duration must be > 0")
			}
		case "expect":
			err = p.fields(v, "expect", PolicyNames(), func(pol string, ev *yaml.Node) error {
				verdict, err := p.verdict(ev)
				sc.Expect[pol] = verdict
				return err
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if sc.Name == "" {
		return nil, p.errf(root, "missing field \"name\"")
	}
	operator := ""
	var operatorNode *yaml.Node
	var standalone, monsOn *yaml.Node
	if clusterNode != nil {
		err = p.fields(clusterNode, "cluster", []string{"machines", "osdsPerMachine", "pgs", "mons", "platform", "fenceKind", "operatorOn", "standalone", "machineSetScale", "clients", "mdb", "operatorHA", "racks", "zones", "failureDomain", "monsOn"}, func(k string, v *yaml.Node) error {
			var err error
			c := &sc.Cluster
			switch k {
			case "machines":
				c.Machines, err = p.intv(v, k, 1, 100000)
			case "osdsPerMachine":
				c.OSDsPerMachine, err = p.intv(v, k, 0, 64)
			case "pgs":
				c.PGs, err = p.intv(v, k, 0, 10_000_000)
			case "mons":
				c.Mons, err = p.intv(v, k, 1, 9)
			case "platform":
				var s string
				s, err = p.scalar(v, k)
				switch s {
				case "cloud":
				case "baremetal":
					c.BareMetal = true
				default:
					if err == nil {
						err = p.errf(v, "platform: want cloud or baremetal, got %q", s)
					}
				}
			case "fenceKind":
				var s string
				s, err = p.scalar(v, k)
				found := false
				for i, n := range fenceKindNames {
					if n == s {
						c.FenceKind, found = FenceKind(i), true
					}
				}
				if err == nil && !found {
					err = p.errf(v, "fenceKind: want one of %s, got %q", strings.Join(fenceKindNames, ", "), s)
				}
			case "operatorOn":
				operator, err = p.scalar(v, k)
				operatorNode = v
			case "standalone":
				standalone = v
			case "machineSetScale":
				c.MachineSetScale, err = p.intv(v, k, 0, 100000)
			case "clients":
				c.Clients, err = p.intv(v, k, 0, 100000)
			case "racks":
				c.Racks, err = p.intv(v, k, 0, 100000)
			case "zones":
				c.Zones, err = p.intv(v, k, 0, 100000)
			case "failureDomain":
				var s string
				if s, err = p.scalar(v, k); err == nil {
					t, ok := lookupCrushType(s)
					if !ok || t == CrushRoot {
						err = p.errf(v, "failureDomain: want host, rack or zone, got %q", s)
					}
					c.FailureDomain = t
				}
			case "monsOn":
				monsOn = v
			case "operatorHA":
				var s string
				if s, err = p.scalar(v, k); err == nil {
					switch s {
					case "true":
						c.OperatorHA = true
					case "false":
					default:
						err = p.errf(v, "operatorHA: want true or false, got %q", s)
					}
				}
			case "mdb":
				var s string
				if s, err = p.scalar(v, k); err == nil {
					found := false
					var names []string
					for i, d := range mdbVariants {
						names = append(names, d.name)
						if d.name == s {
							c.MDB, found = MDBVariant(i), true
						}
					}
					if !found {
						err = p.errf(v, "mdb: want one of %s, got %q", strings.Join(names, ", "), s)
					}
				}
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	c := &sc.Cluster
	if c.Mons > c.Machines {
		return nil, p.errf(clusterNode, "mons (%d) exceed machines (%d)", c.Mons, c.Machines)
	}
	if c.FenceKind == FenceReboot && !c.BareMetal {
		return nil, p.errf(clusterNode, "fenceKind reboot needs platform baremetal (a BMC power cycle); a cloud machine is fenced by delete")
	}
	if operator != "" && operator != "control-plane" {
		i, err := p.machine(operatorNode, "operatorOn", c.Machines)
		if err != nil {
			return nil, err
		}
		c.OperatorOn = i
	}
	if standalone != nil {
		if standalone.Kind != yaml.SequenceNode {
			return nil, p.errf(standalone, "standalone: want a list of machines")
		}
		for _, v := range standalone.Content {
			i, err := p.machine(v, "standalone", c.Machines)
			if err != nil {
				return nil, err
			}
			c.Standalone = append(c.Standalone, i)
		}
	}
	if monsOn != nil {
		if monsOn.Kind != yaml.SequenceNode {
			return nil, p.errf(monsOn, "monsOn: want a list of machines")
		}
		seen := map[int]bool{}
		for _, v := range monsOn.Content {
			i, err := p.machine(v, "monsOn", c.Machines)
			if err != nil {
				return nil, err
			}
			if seen[i] {
				return nil, p.errf(v, "monsOn: m%d listed twice", i+1)
			}
			seen[i] = true
			c.MonsOn = append(c.MonsOn, i)
		}
		if len(c.MonsOn) != c.Mons {
			return nil, p.errf(monsOn, "monsOn lists %d machines for %d mons", len(c.MonsOn), c.Mons)
		}
	}
	if paramsNode != nil {
		err = p.fields(paramsNode, "params", ParamNames(), func(k string, v *yaml.Node) error {
			s, err := p.scalar(v, k)
			if err != nil {
				return err
			}
			if err := sc.Params.SetParam(k, s); err != nil {
				return p.errf(v, "%v", err)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := sc.Params.Validate(); err != nil {
		return nil, p.errf(root, "params: %v", err)
	}
	if err := validateDomains(*c, sc.Params.PoolSize); err != nil {
		where := root
		if clusterNode != nil {
			where = clusterNode
		}
		return nil, p.errf(where, "%v", err)
	}
	if faultsNode != nil {
		if faultsNode.Kind != yaml.SequenceNode {
			return nil, p.errf(faultsNode, "faults: want a list")
		}
		for _, fn := range faultsNode.Content {
			fs, err := p.fault(fn, c.Machines, sc.Duration)
			if err != nil {
				return nil, err
			}
			sc.Faults = append(sc.Faults, fs...)
		}
	}
	sort.SliceStable(sc.Faults, func(i, j int) bool { return sc.Faults[i].At < sc.Faults[j].At })
	return sc, nil
}
