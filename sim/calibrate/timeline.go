package calibrate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Timeline is what one run of an experiment showed, real or simulated, on
// a clock in seconds from the experiment's first action (t0). The real
// runs' timelines are checked in, every run of an experiment kept
// (fixtures/sim-calibration/<name>/<started>.json); the simulator's are
// computed.
type Timeline struct {
	Experiment string `json:"experiment"`
	// Source names the run: the Ceph version, or the simulator.
	Source string `json:"source"`
	// Machine, Started and Config say where, when and with which Ceph
	// settings a real run ran (the layout's and the experiment's).
	Machine string            `json:"machine,omitempty"`
	Started string            `json:"started,omitempty"`
	Config  map[string]string `json:"config,omitempty"`
	// TickPhase is when, after t0, the leader mon's first tick came (its
	// later ticks every mon_tick_interval): OSDMonitor::tick marks down
	// OSDs out, so the simulated mon ticks in the same phase.
	TickPhase float64 `json:"tick_phase_s"`
	// Actions are what the experiment did, in order; Events what the
	// cluster and its clients did.
	Actions []Action `json:"actions"`
	Events  []Event  `json:"events"`
	// Samples are the cluster's state over time (PG states by class, data
	// recovered); Writes the background writer's outcomes per second.
	Samples []Sample `json:"samples"`
	Writes  []Writes `json:"writes,omitempty"`
	// Placement is each PG's acting OSDs at t0 (primary first), as CRUSH
	// placed them: the simulated run places its PGs the same way. Runs
	// recorded before it existed lack it; the model then draws its own.
	Placement [][]int `json:"placement,omitempty"`
}

// Action is a step of the experiment: Do (an ActionKind's name) at At, on
// Hosts (CRUSH host indexes) or a Client.
type Action struct {
	At     float64 `json:"at"`
	Do     string  `json:"do"`
	Hosts  []int   `json:"hosts,omitempty"`
	Client string  `json:"client,omitempty"`
	// Returned is when the action's command returned (a blocklist change:
	// the mon committed it).
	Returned float64 `json:"returned,omitempty"`
}

// Event is something the cluster or a client did: What (an event name,
// events.go) of OSD (-1: none) at At.
type Event struct {
	At   float64 `json:"at"`
	What string  `json:"what"`
	OSD  int     `json:"osd"`
	// Note keeps what the source said (the cluster log's line).
	Note string `json:"note,omitempty"`
}

// Sample is the cluster's state at At: PGs by class (as `ceph pg dump`
// shows them; the simulator's states map onto the same classes), the PGs
// recovering or backfilling and those waiting for a reservation, the data
// recovery and backfill moved since t0, and the OSDs up and in.
type Sample struct {
	At         float64 `json:"at"`
	Clean      int     `json:"clean"`
	Active     int     `json:"active"`
	Inactive   int     `json:"inactive"`
	Recovering int     `json:"recovering"`
	Waiting    int     `json:"waiting,omitempty"`
	MovedMB    float64 `json:"moved_mb"`
	Up         int     `json:"up"`
	In         int     `json:"in"`
}

// Writes counts the background writer's writes sent in the second from
// At: accepted, and failed (timed out or refused).
type Writes struct {
	At     float64 `json:"at"`
	OK     float64 `json:"ok"`
	Failed float64 `json:"failed"`
}

// Load reads a timeline file.
func Load(path string) (*Timeline, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Timeline
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &t, nil
}

// Save writes the timeline to dir/<experiment>/<started>.json, next to the
// experiment's other runs.
func (t *Timeline) Save(dir string) (string, error) {
	t.sort()
	raw, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return "", err
	}
	d := filepath.Join(dir, t.Experiment)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(d, t.runName()+".json")
	return p, os.WriteFile(p, append(raw, '\n'), 0o644)
}

// runName names a run's file by its start (20261128T170151Z), "run"
// when it has none.
func (t *Timeline) runName() string {
	if ts, err := time.Parse(time.RFC3339, t.Started); err == nil {
		return ts.UTC().Format("20060102T150405Z")
	}
	return "run"
}

// LoadRuns reads every run of an experiment under dir (dir/<name>/*.json),
// oldest first; none is not an error.
func LoadRuns(dir, name string) ([]*Timeline, error) {
	files, err := filepath.Glob(filepath.Join(dir, name, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var runs []*Timeline
	for _, f := range files {
		t, err := Load(f)
		if err != nil {
			return nil, err
		}
		if t.Experiment != name {
			return nil, fmt.Errorf("%s: a run of %q among %q's", f, t.Experiment, name)
		}
		runs = append(runs, t)
	}
	return runs, nil
}

func (t *Timeline) validate() error {
	e, ok := lookup(t.Experiment)
	if !ok {
		return fmt.Errorf("unknown experiment %q", t.Experiment)
	}
	if t.Placement != nil && len(t.Placement) != e.PGs {
		return fmt.Errorf("placement of %d PGs, the experiment's pool has %d", len(t.Placement), e.PGs)
	}
	for pg, osds := range t.Placement {
		if len(osds) != e.Size {
			return fmt.Errorf("placement: PG %d on %d OSDs, pool size %d", pg, len(osds), e.Size)
		}
	}
	if len(t.Actions) == 0 {
		return fmt.Errorf("no actions")
	}
	for _, a := range t.Actions {
		if _, ok := actionKinds[a.Do]; !ok {
			return fmt.Errorf("unknown action %q", a.Do)
		}
	}
	for _, e := range t.Events {
		if _, ok := eventNames[e.What]; !ok {
			return fmt.Errorf("unknown event %q", e.What)
		}
	}
	return nil
}

func (t *Timeline) sort() {
	sort.SliceStable(t.Events, func(i, j int) bool { return t.Events[i].At < t.Events[j].At })
	sort.SliceStable(t.Samples, func(i, j int) bool { return t.Samples[i].At < t.Samples[j].At })
}

// first is the first event what of osd (-1: any OSD) at or after from.
func (t *Timeline) first(what string, osd int, from float64) (float64, bool) {
	for _, e := range t.Events {
		if e.What == what && (osd < 0 || e.OSD == osd) && e.At >= from {
			return e.At, true
		}
	}
	return 0, false
}

// action is the time of the n-th action do (0: the first).
func (t *Timeline) action(do string, n int) (float64, bool) {
	for _, a := range t.Actions {
		if a.Do == do {
			if n == 0 {
				return a.At, true
			}
			n--
		}
	}
	return 0, false
}

// end is the time of the last event or sample.
func (t *Timeline) end() float64 {
	var e float64
	for _, ev := range t.Events {
		e = max(e, ev.At)
	}
	for _, s := range t.Samples {
		e = max(e, s.At)
	}
	return e
}

// at is the sample in force at time x (the last one at or before it).
func (t *Timeline) at(x float64) Sample {
	i := sort.Search(len(t.Samples), func(i int) bool { return t.Samples[i].At > x })
	if i == 0 {
		if len(t.Samples) > 0 {
			return t.Samples[0]
		}
		return Sample{}
	}
	return t.Samples[i-1]
}

// integral is the integral of f over the samples from a to b, each sample
// holding until the next (PG-seconds for a PG count).
func (t *Timeline) integral(f func(Sample) float64, a, b float64) float64 {
	if b <= a {
		return 0
	}
	sum, x := 0.0, a
	cur := t.at(a)
	for _, s := range t.Samples {
		if s.At <= a {
			continue
		}
		if s.At >= b {
			break
		}
		sum += f(cur) * (s.At - x)
		x, cur = s.At, s
	}
	return sum + f(cur)*(b-x)
}

// reach is the first time after from at which f reaches v (ok false: never).
func (t *Timeline) reach(f func(Sample) float64, v, from float64) (float64, bool) {
	for _, s := range t.Samples {
		if s.At >= from && f(s) >= v {
			return s.At, true
		}
	}
	return 0, false
}

// deriveClean adds a clean event whenever every PG becomes active+clean.
func (t *Timeline) deriveClean() {
	was := true
	for _, s := range t.Samples {
		clean := s.Active == 0 && s.Inactive == 0 && s.Clean > 0
		if clean && !was {
			t.Events = append(t.Events, Event{At: s.At, What: "clean", OSD: -1})
		}
		was = clean
	}
	t.sort()
}

// Finish completes a recorded timeline: the clean events derived from its
// samples, everything in time order.
func Finish(t *Timeline) { t.deriveClean() }
