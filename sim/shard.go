package sim

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Shard selects part of an exploration: run j of an exploration belongs to
// shard j mod Of. The zero value (Of 0) is the whole exploration.
type Shard struct {
	// Index is this shard, 0 <= Index < Of.
	Index int
	// Of is the number of shards.
	Of int
}

// ParseShard parses "i/n" (0 <= i < n).
func ParseShard(s string) (Shard, error) {
	var sh Shard
	var rest string
	if n, _ := fmt.Sscanf(s, "%d/%d%s", &sh.Index, &sh.Of, &rest); n != 2 || sh.Of < 1 || sh.Index < 0 || sh.Index >= sh.Of {
		return Shard{}, fmt.Errorf("shard %q: want i/n with 0 <= i < n (e.g. 0/3)", s)
	}
	return sh, nil
}

// has reports whether run j belongs to the shard.
func (sh Shard) has(j int) bool { return sh.Of <= 1 || j%sh.Of == sh.Index }

// ExploreShard is Explore restricted to the runs of one shard; with
// safety only the safety invariants (all but 6) are checked; progress
// counts the shard's runs.
func ExploreShard(pol *Policy, runs int, seed uint64, sh Shard, safety bool, progress func(done, violations int)) ([]Finding, error) {
	var out []Finding
	done := 0
	for i := 0; i < runs; i++ {
		if !sh.has(i) {
			continue
		}
		sd := seed + uint64(i)
		sc := RandomScenario(sd)
		cfg := sc.Config(pol, sd)
		cfg.SafetyOnly = safety
		r, err := RunConfig(cfg)
		if err != nil {
			return nil, err
		}
		if len(r.Violations) > 0 {
			f, err := minimizeFinding(cfg, sc, r.Violations[0].Inv)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
		done++
		if progress != nil {
			progress(done, len(out))
		}
	}
	return out, nil
}

// FindingReport is a finding as a shard writes it for the merge step.
type FindingReport struct {
	Seed       uint64   `json:"seed"`
	Verdict    string   `json:"verdict"`
	Violations []string `json:"violations"`
	Faults     int      `json:"faults"`
	Scenario   string   `json:"scenario"` // ScenarioYAML of the minimized scenario
	Trace      string   `json:"trace"`    // the minimized run's timeline
}

// ShardReport is one shard's result; Merge joins the shards of one
// exploration into the result one process would give.
type ShardReport struct {
	Policy   string          `json:"policy"`
	Safety   bool            `json:"safety,omitempty"` // only the safety invariants were checked
	Seed     uint64          `json:"seed"`
	Runs     int             `json:"runs"`
	Shard    int             `json:"shard"`
	Shards   int             `json:"shards"`
	Findings []FindingReport `json:"findings"`
}

// Report converts findings to their serializable form.
func Report(fs []Finding) []FindingReport {
	out := make([]FindingReport, 0, len(fs))
	for _, f := range fs {
		fr := FindingReport{Seed: f.Seed, Verdict: f.Minimal.Verdict(), Faults: len(f.Scenario.Faults),
			Scenario: ScenarioYAML(f.Scenario), Trace: f.Minimal.Text()}
		for _, v := range f.Minimal.Violations {
			fr.Violations = append(fr.Violations, v.String())
		}
		out = append(out, fr)
	}
	return out
}

// MarshalShard encodes a shard's result.
func MarshalShard(r *ShardReport) ([]byte, error) { return json.MarshalIndent(r, "", " ") }

// Merge checks that the shard reports cover one exploration exactly (same
// policy, seed and runs; every shard once) and returns the whole
// exploration's report, findings in seed order.
func Merge(files map[string][]byte) (*ShardReport, error) {
	var all *ShardReport
	seen := map[int]string{}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var r ShardReport
		if err := json.Unmarshal(files[name], &r); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if r.Shards < 1 || r.Shard < 0 || r.Shard >= r.Shards {
			return nil, fmt.Errorf("%s: bad shard %d/%d", name, r.Shard, r.Shards)
		}
		if all == nil {
			all = &ShardReport{Policy: r.Policy, Safety: r.Safety, Seed: r.Seed, Runs: r.Runs, Shards: r.Shards}
		} else if r.Policy != all.Policy || r.Safety != all.Safety || r.Seed != all.Seed || r.Runs != all.Runs || r.Shards != all.Shards {
			return nil, fmt.Errorf("%s: shard of another exploration (policy %s, seed %d, runs %d, %d shards; first was %s, %d, %d, %d)",
				name, r.Policy, r.Seed, r.Runs, r.Shards, all.Policy, all.Seed, all.Runs, all.Shards)
		}
		if prev, dup := seen[r.Shard]; dup {
			return nil, fmt.Errorf("%s: shard %d/%d already given by %s", name, r.Shard, r.Shards, prev)
		}
		seen[r.Shard] = name
		all.Findings = append(all.Findings, r.Findings...)
	}
	if all == nil {
		return nil, fmt.Errorf("no shard reports")
	}
	for i := 0; i < all.Shards; i++ {
		if _, ok := seen[i]; !ok {
			return nil, fmt.Errorf("shard %d/%d is missing", i, all.Shards)
		}
	}
	sort.Slice(all.Findings, func(i, j int) bool { return all.Findings[i].Seed < all.Findings[j].Seed })
	return all, nil
}
