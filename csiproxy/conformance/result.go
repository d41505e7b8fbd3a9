package conformance

import (
	"fmt"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// A run vouches for conformance only when every MUST rule ran: a filtered
// or cut run is INCOMPLETE, as in the fence suite.
func init() { book.Incomplete = rulebook.MustRulesRun }

// Result is a whole run: the engine's result and the API versions the host
// served.
type Result struct {
	rulebook.Result
	Served []string `json:"served"`
	// Seed replays the run (--seed); Profile is what it held the host to.
	Seed    uint64           `json:"seed"`
	Profile restrict.Profile `json:"profile"`
}

func newResult(s *state, base *rulebook.Result) *Result {
	r := &Result{Result: *base, Served: s.served, Seed: s.cfg.Seed, Profile: s.cfg.Profile}
	r.Endpoint = s.cfg.Endpoint
	if s.setupErr != nil {
		r.SetupError = s.setupErr.Error()
	}
	record := "none (a refusal is any error)"
	if s.recorded {
		record = "yes (a refusal must come before any Windows call)"
	}
	r.Facts = []rulebook.Fact{
		{Name: "seed", Value: fmt.Sprintf("%d (replay: --seed %d)", s.cfg.Seed, s.cfg.Seed)},
		{Name: "profile", Value: string(s.cfg.Profile)},
		{Name: "kubelet paths", Value: s.cfg.PluginsPath + ", " + s.cfg.PodPath},
		{Name: "served", Value: strings.Join(s.served, " ")},
		{Name: "host record", Value: record},
	}
	return r
}

// WriteReports writes the JUnit report (at junit, or
// dir/csiproxy-junit.xml when junit is ""), csiproxy.json, csiproxy.md and
// csiproxy.html into dir and returns their paths.
func (r *Result) WriteReports(dir, junit string) ([]string, error) {
	return rulebook.WriteReports(dir, "csiproxy", r, junit)
}
