package sim

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite sim/testdata/golden from the current model")

const scenarioDir = "../fixtures/scenarios"

func loadAll(t *testing.T) []*Scenario {
	t.Helper()
	scs, err := LoadScenarios(scenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	return scs
}

// TestGolden runs every scenario with every policy and compares the timeline
// with sim/testdata/golden/<scenario>.<policy>.txt (go test ./sim/... -update
// rewrites them). It also checks each verdict against the scenario file.
func TestGolden(t *testing.T) {
	for _, sc := range loadAll(t) {
		for _, pn := range PolicyNames() {
			t.Run(sc.Name+"/"+pn, func(t *testing.T) {
				cfg := sc.Config(Policies[pn], sc.Seed)
				cfg.Record = true
				r, err := RunConfig(cfg)
				if err != nil {
					t.Fatal(err)
				}
				got := r.Text()
				path := filepath.Join("testdata", "golden", sc.Name+"."+pn+".txt")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./sim/... -update)", err)
				}
				if got != string(want) {
					t.Errorf("timeline differs from %s (seed %d); run go test ./sim/... -update and review the diff.\n%s", path, sc.Seed, firstDiff(string(want), got))
				}
				if exp, ok := sc.Expect[pn]; !ok {
					t.Errorf("%s sets no expectation for policy %s", sc.File, pn)
				} else if v := r.Verdict(); v != exp {
					t.Errorf("verdict %s, %s expects %s (seed %d)\n%s", v, sc.File, exp, sc.Seed, r.Summary())
				}
			})
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n  want: " + x + "\n  got:  " + y
		}
	}
	return ""
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n >= 10 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	b[i] = byte('0' + n)
	return string(b[i:])
}

// TestReplayIdentical: the same configuration and seed give the same trace,
// for scripted scenarios and random schedules.
func TestReplayIdentical(t *testing.T) {
	seed := testSeed(t)
	scs := loadAll(t)
	cases := []*Scenario{scs[0], RandomScenario(seed), RandomScenario(seed + 1)}
	for _, sc := range cases {
		for _, pn := range PolicyNames() {
			cfg := sc.Config(Policies[pn], sc.Seed)
			cfg.Record = true
			a, err := RunConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := RunConfig(cfg)
			if a.Text() != b.Text() || a.Events != b.Events {
				t.Errorf("%s/%s seed %d: replay differs\n%s", sc.Name, pn, sc.Seed, firstDiff(a.Text(), b.Text()))
			}
		}
	}
	// A different seed changes the jittered timings.
	sc := scs[0]
	a, _ := RunConfig(withRecord(sc.Config(Policies["safe"], 1)))
	b, _ := RunConfig(withRecord(sc.Config(Policies["safe"], 2)))
	if a.Text() == b.Text() {
		t.Errorf("seeds 1 and 2 gave identical traces: the RNG is not used")
	}
}

func withRecord(c Config) Config { c.Record = true; return c }

// randomRuns is the number of random schedules TestSafeKeepsSafety runs.
var randomRuns = flag.Int("sim.runs", 1000, "random schedules for TestSafeKeepsSafety")

// TestSafeKeepsSafety: the safe policy breaks no safety invariant (all but
// 6) in any scenario nor in N random fault schedules. Liveness it cannot
// always keep - a stalled operator, mon hosts hung without quorum, a
// cluster network cut for good on a Ready node - and the scenario files
// say where (TestGolden), the comparison counts how often.
func TestSafeKeepsSafety(t *testing.T) {
	seed := testSeed(t)
	safe := Policies["safe"]
	for _, sc := range loadAll(t) {
		r, err := RunConfig(sc.Config(safe, sc.Seed))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range r.Violations {
			if v.Inv != 6 {
				t.Errorf("safe breaks %s in %s (seed %d): %v", r.Verdict(), sc.Name, sc.Seed, r.Violations)
			}
		}
	}
	found, err := ExploreShard(safe, *randomRuns, seed, Shard{}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("safe breaks %s with random schedule seed %d (replay: fenceproof sim explore --policy safe --safety --runs 1 --seed %d)\n%s",
			f.Minimal.Verdict(), f.Seed, f.Seed, f.Minimal.Text())
	}
}

// TestOtherPoliciesBreakSomething: the comparison must show where seed, rook
// and mhc-only break an invariant.
func TestOtherPoliciesBreakSomething(t *testing.T) {
	for _, pn := range []string{"seed", "rook", "mhc-only"} {
		broke := false
		for _, sc := range loadAll(t) {
			r, err := RunConfig(sc.Config(Policies[pn], sc.Seed))
			if err != nil {
				t.Fatal(err)
			}
			broke = broke || len(r.Violations) > 0
		}
		if !broke {
			t.Errorf("policy %s breaks no invariant in any scenario", pn)
		}
	}
}

// TestBrokenPolicyCaught: switching off one of safe's checks must be caught
// by the invariant it protects (the tests can fail).
func TestBrokenPolicyCaught(t *testing.T) {
	cases := []struct {
		name     string
		scenario string
		breakIt  func(p *Policy)
		want     int
	}{
		{"no serialization", "two-failures", func(p *Policy) { p.NoSerialize = true }, 1},
		{"no serialization across zones", "two-zones-lost", func(p *Policy) { p.NoSerialize = true }, 1},
		{"no storage cut-off", "stale-label", func(p *Policy) { p.NoStorageFence = true; p.NoUpOSDCheck = true }, 5},
		{"fences nodes with up OSDs", "partition-during-recovery", func(p *Policy) { p.NoUpOSDCheck = true; p.NoSerialize = true }, 3},
		{"deletes serving nodes", "api-partition", func(p *Policy) { p.NoUpOSDCheck = true; p.NoStorageFence = true }, 5},
		{"no wipe check", "baremetal-wipe", func(p *Policy) { p.NoWipeCheck = true; p.NoSerialize = true }, 4},
		{"trusts a wrong power report", "power-report-wrong", func(p *Policy) { p.TrustPowerReport = true }, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := LoadScenario(filepath.Join(scenarioDir, c.scenario+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			p := *Policies["safe"]
			p.Name = "safe-broken"
			c.breakIt(&p)
			cfg := sc.Config(&p, sc.Seed)
			cfg.KeepGoing = true
			r, err := RunConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range r.Violations {
				if v.Inv == c.want {
					return
				}
			}
			t.Errorf("%s with %s: want inv%d caught, got %s", c.scenario, c.name, c.want, r.Verdict())
		})
	}
}

// TestMinimize: delta debugging drops faults that do not matter.
func TestMinimize(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "two-failures.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	noise := []Fault{
		{At: 2 * Minute, Kind: FaultClusterCut, Machine: 0, For: 30 * Second},
		{At: 3 * Minute, Kind: FaultOperatorStall, Machine: -1, For: 10 * Second},
		{At: 90 * Minute, Kind: FaultAPICut, Machine: 1, For: 20 * Second},
	}
	cfg := sc.Config(Policies["seed"], sc.Seed)
	cfg.Faults = append(append([]Fault(nil), noise...), sc.Faults...)
	min := Minimize(cfg, 1)
	if len(min) != 2 || min[0].Kind != FaultPowerOff || min[1].Kind != FaultPowerOff {
		t.Errorf("minimized to %v, want the two power-offs", min)
	}
}

// TestScenarioErrors: bad scenario files fail with file:line:col and a reason.
func TestScenarioErrors(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown top field", "name: x\ncolour: red\n", "x.yaml:2:1: unknown field \"colour\""},
		{"unknown cluster field", "name: x\ncluster:\n  machines: 5\n  disks: 3\n", "x.yaml:4:3: unknown field \"disks\" in cluster"},
		{"bad platform", "name: x\ncluster: {platform: mainframe}\n", "x.yaml:2:21: platform: want cloud or baremetal"},
		{"bad duration", "name: x\nfaults:\n  - {at: soon, kind: hang, machine: m1}\n", "x.yaml:3:10: at: bad duration \"soon\""},
		{"unknown fault", "name: x\nfaults:\n  - {at: 1m, kind: meteor, machine: m1}\n", "x.yaml:3:20: kind: unknown fault \"meteor\""},
		{"unknown machine", "name: x\nfaults:\n  - {at: 1m, kind: hang, machine: m9}\n", "x.yaml:3:35: machine: unknown machine \"m9\""},
		{"missing machine", "name: x\nfaults:\n  - {at: 1m, kind: hang}\n", "x.yaml:3:5: fault hang needs a machine"},
		{"bad param", "name: x\nparams: {poolSize: three}\n", "x.yaml:2:20: poolSize: want a non-negative integer"},
		{"unknown param", "name: x\nparams: {heartbeat: 5s}\n", "x.yaml:2:10: unknown field \"heartbeat\" in params"},
		{"bad verdict", "name: x\nexpect: {seed: maybe}\n", "x.yaml:2:16: expect: want pass or inv1..inv8"},
		{"unknown policy", "name: x\nexpect: {yolo: pass}\n", "x.yaml:2:10: unknown field \"yolo\" in expect"},
		{"duplicate", "name: x\nname: y\n", "x.yaml:2:1: duplicate field \"name\""},
		{"min_size > size", "name: x\nparams: {poolMinSize: 4}\n", "params: poolMinSize must be 1..poolSize"},
		{"fault after end", "name: x\nduration: 1h\nfaults:\n  - {at: 2h, kind: hang, machine: m1}\n", "x.yaml:4:5: fault at 2h0m0s is not before the end"},
		{"no name", "cluster: {machines: 4}\n", "missing field \"name\""},
		{"every without repeat", "name: x\nfaults:\n  - {at: 1m, kind: hang, machine: m1, for: 1m, every: 5m}\n", "x.yaml:3:55: every: needs repeat:"},
		{"repeat without every", "name: x\nfaults:\n  - {at: 1m, kind: hang, machine: m1, repeat: 3}\n", "x.yaml:3:5: repeat: needs every:"},
		{"reboot on cloud", "name: x\ncluster: {platform: cloud, fenceKind: reboot}\n", "fenceKind reboot needs platform baremetal"},
		{"negative clients", "name: x\ncluster: {clients: -1}\n", "clients"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseScenario("x.yaml", []byte(c.yaml))
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestQueueOrder: events pop in time order, FIFO among equal times.
func TestQueueOrder(t *testing.T) {
	var q queue[int]
	times := []Time{5, 1, 3, 1, 9, 0, 3}
	for i, at := range times {
		q.push(at, uint64(i), i)
	}
	var last queued[int]
	for i := 0; len(q.h) > 0; i++ {
		e := q.pop()
		if i > 0 && (e.at < last.at || (e.at == last.at && e.seq < last.seq)) {
			t.Fatalf("popped %+v after %+v", e, last)
		}
		last = e
	}
}

// TestCephRules: Ceph's timers as scripted facts of one power loss.
func TestCephRules(t *testing.T) {
	sc, err := LoadScenario(filepath.Join(scenarioDir, "power-loss.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := withRecord(sc.Config(Policies["mhc-only"], sc.Seed))
	cfg.Params.Jitter = 0
	r, err := RunConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := r.Text()
	for _, want := range []string{
		"00:10:27.000  ceph      osd.6 down (reported failed by peers)", // heartbeat grace 20 s, a 6-s heartbeat and the mon's second
		"00:10:40.000  node      m4 NotReady",                           // node-monitor grace 40 s
		"00:15:41.000  FENCE     m4 delete by MachineHealthCheck",       // 300 s after lastTransition + MHC lag
		"00:20:30.000  ceph      osd.6 out",                             // down->out after 600 s, on the mon's next tick
	} {
		if !strings.Contains(text, want) {
			t.Errorf("timeline lacks %q\n%s", want, text)
		}
	}
	// mon_osd_min_in_ratio is tested on the current in ratio (Ceph's
	// OSDMonitor::can_mark_out): three hosts of two OSDs, one host down,
	// both its OSDs go out (6/6, then 5/6 >= 0.75); four hosts, two down:
	// three of four go out (8/8, 7/8, 6/8) and the fourth stays in at 5/8.
	for _, c := range []struct {
		scenario string
		out      int
	}{{"three-hosts", 2}, {"min-in-ratio-current-ratio", 3}} {
		sc, err := LoadScenario(filepath.Join(scenarioDir, c.scenario+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		r, _ := RunConfig(withRecord(sc.Config(Policies["never"], sc.Seed)))
		if n := strings.Count(r.Text(), " out after"); n != c.out {
			t.Errorf("%s: %d OSDs marked out, want %d (mon_osd_min_in_ratio on the current ratio)", c.scenario, n, c.out)
		}
	}
}
