package calibrate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/sim"
)

// The replay of a kind fencing run (suites/fencing's DR rehearsal, case
// c7: reports/fencing/c7/timeline.txt) in the simulator. On kind, worker B's
// kubelet is stopped (its pods keep running and writing), a NetworkFence
// is created and acknowledged, the node goes NotReady, the out-of-service
// taint is added, the StatefulSet's pod runs on worker A and its writes are
// accepted, worker B is restored and Ready again. The simulator gets the
// same cluster shape and the kind cluster's own settings (fixtures/cluster/
// kind-config.yaml: node-monitor-grace-period 20 s, node-monitor-period 2 s,
// nodeStatusUpdateFrequency 4 s), the API cut for as long as the kubelet
// was stopped, the taint as soon as the node is NotReady (the suite adds it
// then), and the kind pod's start time; policy csi-oos (the fence is a
// blocklist entry of the node's address made before the workload moves).

// replayStep is one step both timelines show: the text that marks it in
// kind's timeline.
type replayStep struct {
	name, kind string
}

var replaySteps = []replayStep{
	{"worker B cut off (kubelet stopped)", "cut off"},
	{"fence acknowledged", "driver acknowledged"},
	{"node NotReady", "NotReady"},
	{"out-of-service taint", "taint node.kubernetes.io/out-of-service"},
	{"workload writes accepted on worker A", "its writes are accepted"},
	{"worker B restored", "worker B restored"},
	{"node Ready", " Ready"},
}

// phase is a duration both timelines measure, between steps from and to,
// with its tolerance: Abs, or Rel of the real duration when larger.
type phase struct {
	name     string
	from, to int
	abs      time.Duration
	rel      float64
	why      string
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// replayPhases are compared with their tolerances.
var replayPhases = []phase{
	{"failure detection", 0, 2, 6 * time.Second, 0, "the kubelet posts status every 4 s and the node controller looks every 2 s"},
	{"taint to the moved workload's writes", 3, 4, time.Second, 0.5, "the pod's start on kind (workloadStartTime)"},
	{"restore to Ready", 5, 6, 4 * time.Second, 0, "the kubelet's next status post"},
}

// kindPlatform are the simulator's parameters for the kind cluster.
var kindPlatform = map[string]string{
	"nodeMonitorGracePeriod": "20s", "mhcUnhealthyTimeout": "0s", "mhcLag": "100ms", "workloadStartTime": "1s",
	"jitter": "0", "staleKillTime": "1s", "podEvictionTimeout": "300s",
}

// FencingReplay is the kind run and its replay side by side.
type FencingReplay struct {
	File           string
	Real, Sim      [len7]time.Duration
	RealOK, SimOK  [len7]bool
	StaleWrites    float64
	Problems       []string
	phaseLines     [][5]string
	oracleVerdict  string
	simViolations  string
	cutFor, cutAt  time.Duration
	simEnd, kindTo time.Duration
}

const len7 = 7

// ReplayFencing reads a kind DR rehearsal timeline ("seconds  text" lines)
// and replays it in the simulator.
func ReplayFencing(file string, raw []byte) (*FencingReplay, error) {
	f := &FencingReplay{File: file}
	for _, line := range strings.Split(string(raw), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 2 {
			continue
		}
		t, err := strconv.ParseFloat(fs[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: want seconds then text", file, line)
		}
		text := strings.Join(fs[1:], " ")
		at := time.Duration(t * float64(time.Second))
		for i, s := range replaySteps {
			if !f.RealOK[i] && strings.Contains(" "+text, s.kind) && (s.kind != " Ready" || strings.HasPrefix(text, "node ") && !strings.Contains(text, "NotReady")) {
				f.Real[i], f.RealOK[i] = at, true
			}
		}
		if strings.HasPrefix(text, "oracle:") {
			f.oracleVerdict = text
		}
	}
	for i, s := range replaySteps {
		if !f.RealOK[i] {
			return nil, fmt.Errorf("%s: no %q step in the timeline", file, s.name)
		}
	}
	f.cutAt, f.cutFor = f.Real[0], f.Real[5]-f.Real[0]
	if err := f.simulate(); err != nil {
		return nil, err
	}
	f.compare()
	return f, nil
}

func (f *FencingReplay) simulate() error {
	p := sim.DefaultParams()
	for k, v := range kindPlatform {
		if err := p.SetParam(k, v); err != nil {
			return err
		}
	}
	ms := func(d time.Duration) sim.Time { return sim.Time(d.Milliseconds()) }
	cfg := sim.Config{Name: "fencing-replay", Params: p, Policy: sim.Policies["csi-oos"], Seed: 1, Record: true, KeepGoing: true,
		// kind: worker A (m1), worker B (m2) and a third storage host; one
		// StatefulSet writer, on worker B
		Cluster:  sim.Cluster{Machines: 3, OSDsPerMachine: 1, PGs: 16, Mons: 1, MonsOn: []int{2}, OperatorOn: -1, Clients: 2},
		Faults:   []sim.Fault{{At: ms(f.cutAt), Kind: sim.FaultAPICut, Machine: 1, For: ms(f.cutFor)}},
		Duration: ms(f.Real[6]) + sim.Minute}
	r, err := sim.RunConfig(cfg)
	if err != nil {
		return err
	}
	at := func(t sim.Time) time.Duration { return time.Duration(t) * time.Millisecond }
	set := func(i int, t sim.Time) {
		if !f.SimOK[i] {
			f.Sim[i], f.SimOK[i] = at(t), true
		}
	}
	set(0, ms(f.cutAt))
	set(5, ms(f.cutAt+f.cutFor))
	for _, e := range r.Rec.Entries {
		switch {
		case e.Cat == "ceph" && strings.HasPrefix(e.Text, "client address of m2 blocklisted"):
			set(1, e.At)
		case e.Cat == "node" && e.Text == "m2 NotReady":
			set(2, e.At)
		case e.Cat == "FENCE" && strings.HasPrefix(e.Text, "m2 tainted"):
			set(3, e.At)
		case e.Cat == "client" && strings.HasPrefix(e.Text, "workload w1 started on"):
			set(4, e.At)
		case e.Cat == "node" && e.Text == "m2 Ready" && e.At >= ms(f.cutAt+f.cutFor):
			set(6, e.At)
		}
	}
	f.StaleWrites = r.Metrics.StaleWrites
	f.simViolations = r.Verdict()
	return nil
}

func (f *FencingReplay) compare() {
	for i, s := range replaySteps {
		if !f.SimOK[i] {
			f.Problems = append(f.Problems, "the simulator shows no "+s.name)
		}
	}
	order := func(ts [len7]time.Duration, ok [len7]bool) string {
		var idx []int
		for i := range ts {
			if ok[i] {
				idx = append(idx, i)
			}
		}
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && ts[idx[j]] < ts[idx[j-1]]; j-- {
				idx[j], idx[j-1] = idx[j-1], idx[j]
			}
		}
		var n []string
		for _, i := range idx {
			n = append(n, replaySteps[i].name)
		}
		return strings.Join(n, " < ")
	}
	// the fence's place differs by design (the suite fences at once, the
	// simulated ceph-csi fences at the taint): compare the order of the
	// Kubernetes steps, and that the fence comes before the moved writes
	kube := func(ts [len7]time.Duration, ok [len7]bool) string {
		var ok2 [len7]bool
		ok2 = ok
		ok2[1] = false
		return order(ts, ok2)
	}
	if r, s := kube(f.Real, f.RealOK), kube(f.Sim, f.SimOK); r != s {
		f.Problems = append(f.Problems, fmt.Sprintf("order of the Kubernetes steps differs: real %s; simulated %s", r, s))
	}
	if f.SimOK[1] && f.SimOK[4] && f.Sim[1] > f.Sim[4] {
		f.Problems = append(f.Problems, "the simulated fence comes after the moved workload's writes")
	}
	if f.StaleWrites > 0 || strings.Contains(f.simViolations, "inv7") {
		f.Problems = append(f.Problems, fmt.Sprintf("the simulator accepted %.0f stale writes (%s) where kind's oracle found none", f.StaleWrites, f.simViolations))
	}
	for _, p := range replayPhases {
		if !f.SimOK[p.from] || !f.SimOK[p.to] {
			continue
		}
		r, s := f.Real[p.to]-f.Real[p.from], f.Sim[p.to]-f.Sim[p.from]
		tol := max(p.abs, time.Duration(p.rel*float64(r)))
		verdict := "ok"
		if d := s - r; d > tol || d < -tol {
			verdict = "BEYOND"
			f.Problems = append(f.Problems, fmt.Sprintf("%s: kind %s, simulated %s (tolerance %s)", p.name, secs(r), secs(s), secs(tol)))
		}
		f.phaseLines = append(f.phaseLines, [5]string{p.name, secs(r), secs(s), "±" + secs(tol), verdict})
	}
}

// Markdown renders the replay.
func (f *FencingReplay) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## A kind fencing run replayed\n\nkind's DR rehearsal (suites/fencing, case c7; `%s`) against the simulator with the kind cluster's settings (policy csi-oos, ", f.File)
	var kv []string
	for _, k := range sortedKeys(kindPlatform) {
		kv = append(kv, fmt.Sprintf("`%s: %s`", k, kindPlatform[k]))
	}
	b.WriteString(strings.Join(kv, ", ") + "). On kind the suite fences worker B as soon as it cuts it off; ceph-csi fences at the taint, so the fence's place is not compared, only that it comes before the moved workload's writes.\n\n")
	b.WriteString("| step | kind (s) | simulated (s) | simulated - kind (s) |\n|---|---|---|---|\n")
	for i, s := range replaySteps {
		d := ""
		if f.SimOK[i] {
			d = fmt.Sprintf("%+.1f", (f.Sim[i] - f.Real[i]).Seconds())
		}
		sv := "not seen"
		if f.SimOK[i] {
			sv = fmt.Sprintf("%.1f", f.Sim[i].Seconds())
		}
		fmt.Fprintf(&b, "| %s | %.1f | %s | %s |\n", s.name, f.Real[i].Seconds(), sv, d)
	}
	fmt.Fprintf(&b, "| writes accepted from the fenced node after the fence | none (%s) | %.0f (verdict %s) | |\n\n", f.oracleVerdict, f.StaleWrites, f.simViolations)
	b.WriteString("| phase | kind | simulated | tolerance | verdict | why the tolerance |\n|---|---|---|---|---|---|\n")
	for _, l := range f.phaseLines {
		why := ""
		for _, p := range replayPhases {
			if p.name == l[0] {
				why = p.why
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", l[0], l[1], l[2], l[3], l[4], why)
	}
	b.WriteString("\n")
	writeProblems(&b, f.Problems)
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}
