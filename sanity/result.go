package sanity

import (
	"fmt"
	"io"
	"strings"

	"github.com/fenceproof/fenceproof/rulebook"
)

// Result is the verdict of a whole run, what the reports are made from: the
// engine's result (rules, verdicts, timing) and what the suite learnt about
// the driver.
type Result struct {
	rulebook.Result
	DriverName   string            `json:"driverName"`
	DriverVer    string            `json:"driverVersion"`
	Manifest     map[string]string `json:"manifest,omitempty"`
	Capabilities []string          `json:"capabilities"`
	Profile      Profile           `json:"profile"`
	Calls        int               `json:"calls"`
	// StateSource is where the state rules read the fences from:
	// ListClusterFence, the observe command, or none.
	StateSource string `json:"stateSource"`
}

// buildResult completes the engine's result of a run with what the suite
// knows about the driver.
func buildResult(s *State, base *rulebook.Result) *Result {
	res := &Result{Result: *base, Profile: s.cfg.Profile, Calls: len(s.Calls()), Capabilities: capNames(s.Caps)}
	res.Endpoint, res.Seed = s.cfg.Endpoint, s.Seed
	if s.Identity != nil {
		res.DriverName, res.DriverVer, res.Manifest = s.Identity.GetName(), s.Identity.GetVendorVersion(), s.Identity.GetManifest()
	}
	if s.setupErr != nil {
		res.SetupError = redact(s.setupErr.Error())
	} else if s.fc != nil {
		res.StateSource = s.stateSource()
	}
	p := res.Profile
	res.Facts = []rulebook.Fact{
		{Name: "driver", Value: strings.TrimSpace(res.DriverName + " " + res.DriverVer)},
		{Name: "capabilities", Value: strings.Join(res.Capabilities, ", ")},
		{Name: "profile", Value: fmt.Sprintf("hostBits=%s, ipv6=%s, listClusterFence=%s", p.HostBits, p.IPv6, p.ListClusterFence)},
		{Name: "RPCs sent", Value: fmt.Sprint(res.Calls)},
		{Name: "state read from", Value: res.StateSource},
	}
	return res
}

// WriteReports writes sanity.json, sanity.md and sanity.html into dir and
// returns their paths.
func (r *Result) WriteReports(dir string) ([]string, error) {
	return rulebook.WriteReports(dir, "sanity", r)
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error { return rulebook.WriteJSON(w, r) }
