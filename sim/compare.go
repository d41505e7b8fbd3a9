package sim

import (
	"fmt"
	"sort"
	"strings"
)

// PolicyStats aggregates a policy's runs in a comparison.
type PolicyStats struct {
	Policy        string             // policy name
	Runs          int                // runs (scenarios + random schedules)
	ViolatingRuns int                // runs that broke an invariant (going on after the first)
	SafetyRuns    int                // runs that broke a safety invariant (all but 6)
	LivenessRuns  int                // runs that broke invariant 6 (liveness)
	ByInvariant   [numInvariants]int // runs that broke invariant n, at index n
	UnavailMin    float64            // minutes with some PG not active or no quorum, summed
	RecoverySum   Time               // time to recovery, summed over recovered runs
	Recovered     int                // runs that ended HEALTH_OK after their faults
	Fences        int                // fences, summed

	InactiveMin   float64 // minutes with some PG inactive (with quorum), summed
	NoQuorumMin   float64 // minutes without mon quorum, summed
	WritesRefused float64 // client writes refused, summed
	StaleWrites   float64 // writes accepted from stale clients (split-brain), summed
	MovedGB       float64 // data moved by recovery and backfill, summed
	Markdowns     int     // OSDs marked down (flaps included), summed
	FencingRuns   int     // runs with at least one fence action
	HealthOKKept  int     // of those, runs where every fence action came on HEALTH_OK
}

// less ranks policies: safety first (runs that broke an invariant), then
// availability (writes refused, then minutes with inactive PGs or no quorum).
func (p *PolicyStats) less(q *PolicyStats) bool {
	if p.ViolatingRuns != q.ViolatingRuns {
		return p.ViolatingRuns < q.ViolatingRuns
	}
	if p.WritesRefused != q.WritesRefused {
		return p.WritesRefused < q.WritesRefused
	}
	return p.InactiveMin+p.NoQuorumMin < q.InactiveMin+q.NoQuorumMin
}

// Ranked returns the policies' stats best first.
func (c *Comparison) Ranked() []*PolicyStats {
	r := append([]*PolicyStats(nil), c.Stats...)
	sort.SliceStable(r, func(i, j int) bool { return r[i].less(r[j]) })
	return r
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
			st.UnavailMin += float64(m.Metrics.Unavailable) / float64(Minute)
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

// Markdown renders the comparison as Markdown tables.
func (c *Comparison) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# fenceproof sim compare\n\n%d scripted scenarios + %d random schedules (seeds %d..%d) per policy.\n\n", len(c.Scenarios), c.RandomRuns, c.Seed, c.Seed+uint64(max(c.RandomRuns, 1))-1)
	b.WriteString("Ranked by safety (runs that broke an invariant), then availability (writes refused, then minutes with inactive PGs or without quorum). Availability figures come from runs that go on after a violation. *HEALTH_OK before fence* is the seed design's rule: runs where every fence action came on HEALTH_OK, of the runs that fenced.\n\n")
	b.WriteString("| rank | policy | runs | violating runs |")
	for n := 1; n < numInvariants; n++ {
		fmt.Fprintf(&b, " inv%d |", n)
	}
	b.WriteString(" inactive PGs (min) | no quorum (min) | writes refused | stale writes accepted | HEALTH_OK before fence | mean time to recovery (min) | fences | data moved (GB) | OSD markdowns |\n|")
	for n := 0; n < numInvariants+12; n++ {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for i, s := range c.Ranked() {
		fmt.Fprintf(&b, "| %d | %s | %d | %d |", i+1, s.Policy, s.Runs, s.ViolatingRuns)
		for n := 1; n < numInvariants; n++ {
			fmt.Fprintf(&b, " %d |", s.ByInvariant[n])
		}
		fmt.Fprintf(&b, " %.1f | %.1f | %.0f | %.0f | %d/%d | %.1f | %d | %.0f | %d |\n", s.InactiveMin, s.NoQuorumMin, s.WritesRefused, s.StaleWrites, s.HealthOKKept, s.FencingRuns, s.MeanRecoveryMin(), s.Fences, s.MovedGB, s.Markdowns)
	}
	b.WriteString("\n## Scripted scenarios (verdict; `!` marks a verdict that differs from the scenario's expectation)\n\n| scenario |")
	for _, p := range PolicyNames() {
		fmt.Fprintf(&b, " %s |", p)
	}
	b.WriteString("\n|---|")
	for range PolicyNames() {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, sc := range c.Scenarios {
		fmt.Fprintf(&b, "| %s |", sc)
		for _, p := range PolicyNames() {
			v := c.Verdicts[sc][p]
			if e, ok := c.Expected[sc][p]; ok && e != v {
				v += " !"
			}
			fmt.Fprintf(&b, " %s |", v)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Where each policy breaks (scripted scenarios; full traces in sim-compare-traces/)\n\n| scenario | policy | first violation | trace |\n|---|---|---|---|\n")
	for _, sc := range c.Scenarios {
		for _, p := range PolicyNames() {
			key := sc + "." + p
			if v, ok := c.FirstViolation[key]; ok {
				fmt.Fprintf(&b, "| %s | %s | %s | [%s.txt](sim-compare-traces/%s.txt) |\n", sc, p, strings.ReplaceAll(v, "|", "/"), key, key)
			}
		}
	}
	b.WriteString("\n## Random schedules that broke an invariant (first 5 per policy)\n\n")
	for _, p := range PolicyNames() {
		for _, s := range c.Breaks[p] {
			fmt.Fprintf(&b, "- %s %s\n", p, s)
		}
	}
	return b.String()
}

// Text renders the comparison as a plain-text table.
func (c *Comparison) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %-9s %5s %9s", "rank", "policy", "runs", "violating")
	for n := 1; n < numInvariants; n++ {
		fmt.Fprintf(&b, " %4s", fmt.Sprintf("inv%d", n))
	}
	fmt.Fprintf(&b, " %12s %10s %14s %12s %9s %12s %7s %9s %9s\n", "inactive-min", "noquorum-min", "writes-refused", "stale-writes", "OK-rule", "mean-TTR-min", "fences", "moved-GB", "markdowns")
	for i, s := range c.Ranked() {
		fmt.Fprintf(&b, "%-4d %-9s %5d %9d", i+1, s.Policy, s.Runs, s.ViolatingRuns)
		for n := 1; n < numInvariants; n++ {
			fmt.Fprintf(&b, " %4d", s.ByInvariant[n])
		}
		fmt.Fprintf(&b, " %12.1f %12.1f %14.0f %12.0f %9s %12.1f %7d %9.0f %9d\n", s.InactiveMin, s.NoQuorumMin, s.WritesRefused, s.StaleWrites, fmt.Sprintf("%d/%d", s.HealthOKKept, s.FencingRuns), s.MeanRecoveryMin(), s.Fences, s.MovedGB, s.Markdowns)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-28s", "scenario")
	for _, p := range PolicyNames() {
		fmt.Fprintf(&b, " %-16s", p)
	}
	b.WriteString("\n")
	for _, sc := range c.Scenarios {
		fmt.Fprintf(&b, "%-28s", sc)
		for _, p := range PolicyNames() {
			v := c.Verdicts[sc][p]
			if e, ok := c.Expected[sc][p]; ok && e != v {
				v += "!"
			}
			fmt.Fprintf(&b, " %-16s", v)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// SVG renders four bar charts: violating runs, data unavailability, mean
// time to recovery and fences, per policy.
func (c *Comparison) SVG() string {
	type metric struct {
		title string
		val   func(*PolicyStats) float64
	}
	ms := []metric{
		{"violating runs", func(s *PolicyStats) float64 { return float64(s.ViolatingRuns) }},
		{"data unavailable (min)", func(s *PolicyStats) float64 { return s.UnavailMin }},
		{"writes refused (thousands)", func(s *PolicyStats) float64 { return s.WritesRefused / 1000 }},
		{"stale writes accepted", func(s *PolicyStats) float64 { return s.StaleWrites }},
		{"mean time to recovery (min)", func(s *PolicyStats) float64 { return s.MeanRecoveryMin() }},
		{"fences", func(s *PolicyStats) float64 { return float64(s.Fences) }},
	}
	colors := []string{"#e53935", "#fb8c00", "#8e24aa", "#43a047", "#1e88e5", "#6d4c41"}
	const pw, ph = 240.0, 220.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", pw*float64(len(ms))+20, ph+40)
	for mi, m := range ms {
		x0 := 10 + pw*float64(mi)
		top := 0.0
		for _, s := range c.Stats {
			top = max(top, m.val(s))
		}
		if top == 0 {
			top = 1
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="16" font-size="12">%s</text>`+"\n", x0, m.title)
		bw := (pw - 30) / float64(len(c.Stats))
		for i, s := range c.Stats {
			v := m.val(s)
			h := (ph - 60) * v / top
			x := x0 + float64(i)*bw
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %.1f</title></rect>`+"\n", x, ph-20-h, bw-6, h, colors[i%len(colors)], s.Policy, v)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%.0f</text>`+"\n", x+(bw-6)/2, ph-24-h, v)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x+(bw-6)/2, ph-6, s.Policy)
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}
