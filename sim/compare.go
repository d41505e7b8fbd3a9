package sim

import (
	"fmt"
	"sort"
)

// PolicyStats aggregates a policy's runs in a comparison.
type PolicyStats struct {
	Policy        string             // policy name
	Runs          int                // runs (scenarios + random schedules)
	ViolatingRuns int                // runs that broke an invariant (going on after the first)
	SafetyRuns    int                // runs that broke a safety invariant (all but 6)
	LivenessRuns  int                // runs that broke invariant 6 (liveness)
	ByInvariant   [numInvariants]int // runs that broke invariant n, at index n
	RecoverySum   Time               // time to recovery, summed over recovered runs
	Recovered     int                // runs that ended HEALTH_OK after their faults
	Fences        int                // fences, summed

	InactiveMin   float64 // minutes with PGs that could not serve I/O, summed
	NoQuorumMin   float64 // minutes without mon quorum, summed
	WritesRefused float64 // client writes refused, summed
	StaleWrites   float64 // writes accepted from stale clients (split-brain), summed
	MovedGB       float64 // data moved by recovery and backfill, summed
	Markdowns     int     // OSDs marked down (flaps included), summed
	FencingRuns   int     // runs with at least one fence action
	HealthOKKept  int     // of those, runs where every fence action came on HEALTH_OK
}

// MeanRecoveryMin is the mean time to recovery, in minutes, over runs that recovered.
func (p *PolicyStats) MeanRecoveryMin() float64 {
	if p.Recovered == 0 {
		return 0
	}
	return float64(p.RecoverySum) / float64(p.Recovered) / float64(Minute)
}

// Comparison is every policy over the same scenarios and random schedules.
type Comparison struct {
	// Scenarios are the scripted scenarios' names, in order.
	Scenarios []string
	// Verdicts[scenario][policy] is the verdict of a scripted scenario.
	Verdicts map[string]map[string]string
	// Expected[scenario][policy] is the scenario file's expectation.
	Expected map[string]map[string]string
	// Traces maps "scenario.policy" to the recorded timeline of every
	// scripted run that broke an invariant.
	Traces map[string]string
	// FirstViolation maps "scenario.policy" to that run's first violation.
	FirstViolation map[string]string
	// Stats are the per-policy aggregates.
	Stats []*PolicyStats
	// Breaks lists, per policy, the first random schedules that broke an
	// invariant, as replay hints.
	Breaks map[string][]string
	// RandomRuns is the number of random schedules per policy.
	RandomRuns int
	// Seed is the first random schedule's seed.
	Seed uint64
}

// Compare runs every policy over scenarios plus randomRuns random schedules.
// Metrics are measured with KeepGoing so that a violation does not cut a
// run's unavailability or recovery short; verdicts use the first violation.
func Compare(scenarios []*Scenario, randomRuns int, seed uint64, progress func(string)) (*Comparison, error) {
	cmp := &Comparison{Verdicts: map[string]map[string]string{}, Expected: map[string]map[string]string{}, Breaks: map[string][]string{}, RandomRuns: randomRuns, Seed: seed,
		Traces: map[string]string{}, FirstViolation: map[string]string{}}
	for _, name := range PolicyNames() {
		pol := Policies[name]
		st := &PolicyStats{Policy: name}
		cmp.Stats = append(cmp.Stats, st)
		add := func(sc *Scenario, sd uint64) (string, error) {
			r, err := RunConfig(sc.Config(pol, sd))
			if err != nil {
				return "", err
			}
			cfg := sc.Config(pol, sd)
			cfg.KeepGoing = true
			m, err := RunConfig(cfg)
			if err != nil {
				return "", err
			}
			st.Runs++
			if len(m.Violations) > 0 {
				st.ViolatingRuns++
				safety := false
				for _, n := range uniqueInts(m.Invariants()) {
					st.ByInvariant[n]++
					safety = safety || n != 6
				}
				if safety {
					st.SafetyRuns++
				}
				if containsInt(m.Invariants(), 6) {
					st.LivenessRuns++
				}
			}
			st.Fences += m.Metrics.Fences
			st.InactiveMin += float64(m.Metrics.InactivePG) / float64(Minute)
			st.NoQuorumMin += float64(m.Metrics.NoQuorum) / float64(Minute)
			st.WritesRefused += m.Metrics.WritesRefused
			st.StaleWrites += m.Metrics.StaleWrites
			st.MovedGB += m.Metrics.MovedMB / 1024
			st.Markdowns += m.Metrics.Markdowns
			if m.Metrics.FenceActions > 0 {
				st.FencingRuns++
				if m.Metrics.FencesNotOK == 0 {
					st.HealthOKKept++
				}
			}
			if m.Recovery >= 0 {
				st.Recovered++
				st.RecoverySum += m.Recovery
			}
			return r.Verdict(), nil
		}
		for _, sc := range scenarios {
			v, err := add(sc, sc.Seed)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", sc.File, err)
			}
			if cmp.Verdicts[sc.Name] == nil {
				cmp.Verdicts[sc.Name] = map[string]string{}
				cmp.Expected[sc.Name] = sc.Expect
				cmp.Scenarios = append(cmp.Scenarios, sc.Name)
			}
			cmp.Verdicts[sc.Name][name] = v
			if v != "pass" {
				r, err := RunConfig(withRecording(sc.Config(pol, sc.Seed)))
				if err != nil {
					return nil, err
				}
				key := sc.Name + "." + name
				cmp.Traces[key] = r.Text()
				cmp.FirstViolation[key] = r.Violations[0].String()
			}
		}
		for i := 0; i < randomRuns; i++ {
			sd := seed + uint64(i)
			v, err := add(RandomScenario(sd), sd)
			if err != nil {
				return nil, err
			}
			if v != "pass" && len(cmp.Breaks[name]) < 5 {
				cmp.Breaks[name] = append(cmp.Breaks[name], fmt.Sprintf("seed %d: %s (replay: fenceproof sim explore --policy %s --runs 1 --seed %d)", sd, v, name, sd))
			}
		}
		if progress != nil {
			progress(fmt.Sprintf("compare: %s done (%d runs, %d violating)", name, st.Runs, st.ViolatingRuns))
		}
	}
	return cmp, nil
}

func withRecording(c Config) Config {
	c.Record = true
	return c
}

func containsInt(a []int, v int) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

func uniqueInts(a []int) []int {
	sort.Ints(a)
	var out []int
	for i, v := range a {
		if i == 0 || v != a[i-1] {
			out = append(out, v)
		}
	}
	return out
}
