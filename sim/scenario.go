package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	// For, when > 0, repairs the fault after this long (faults follow the
	// hardware: faults.go, hw).
	For Time
	// Repeat, when > 1, injects the fault this many times, Every apart
	// (a flapping link): one hardware fault, so on cloud the repeats stop
	// once the machine runs on other hardware (a replacement or a power
	// cycle).
	Repeat int
	Every  Time
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
	// Faults is the fault schedule, sorted by time.
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
	if f.Repeat > 1 {
		fmt.Fprintf(&b, ", repeat: %d, every: %s", f.Repeat, f.Every.Dur())
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

// ParseScenario parses and validates scenario YAML. Errors carry
// file:line:col. The keys it accepts are the tables in scenario_fields.go.
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
	d := &scenarioDoc{sc: sc}
	if err := readFields(p, root, "scenario", scenarioFields, d); err != nil {
		return nil, err
	}
	if sc.Name == "" {
		return nil, p.errf(root, "missing field \"name\"")
	}
	where := root
	if d.cluster != nil {
		where = d.cluster
		if err := readFields(p, d.cluster, "cluster", clusterFields, &sc.Cluster); err != nil {
			return nil, err
		}
	}
	if err := p.checkCluster(where, &sc.Cluster); err != nil {
		return nil, err
	}
	if d.params != nil {
		err := p.fields(d.params, "params", ParamNames(), func(k string, v *yaml.Node) error {
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
	if err := validateDomains(sc.Cluster, sc.Params.PoolSize); err != nil {
		return nil, p.errf(where, "%v", err)
	}
	if d.fs != nil {
		if d.fs.Kind != yaml.SequenceNode {
			return nil, p.errf(d.fs, "faults: want a list")
		}
		for _, fn := range d.fs.Content {
			fs, err := p.fault(fn, sc.Cluster.Machines, sc.Duration)
			if err != nil {
				return nil, err
			}
			sc.Faults = append(sc.Faults, fs...)
		}
	}
	sort.SliceStable(sc.Faults, func(i, j int) bool { return sc.Faults[i].At < sc.Faults[j].At })
	return sc, nil
}

// checkCluster checks relations between cluster fields.
func (p sp) checkCluster(where *yaml.Node, c *Cluster) error {
	switch {
	case c.Mons > c.Machines:
		return p.errf(where, "mons (%d) exceed machines (%d)", c.Mons, c.Machines)
	case c.FenceKind == FenceReboot && !c.BareMetal:
		return p.errf(where, "fenceKind reboot needs platform baremetal (a BMC power cycle); a cloud machine is fenced by delete")
	case len(c.MonsOn) > 0 && len(c.MonsOn) != c.Mons:
		return p.errf(where, "monsOn lists %d machines for %d mons", len(c.MonsOn), c.Mons)
	}
	return nil
}
