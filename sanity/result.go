package sanity

import (
	"fmt"
	"io"
	"strings"
	"time"

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
	// Budget is the run's time budget (--timeout) and Hold --hold.
	Budget time.Duration `json:"budget"`
	Hold   time.Duration `json:"hold"`
	// SentinelAge is the sentinels' age at EXPIRE-001's last reading, at
	// the end of the run: the fences' lifetime the run proves (0 when it
	// did not read them).
	SentinelAge time.Duration `json:"sentinelAge"`
	// ListClusterFence is what the run's List calls cost.
	ListClusterFence listStats `json:"listClusterFence"`
	// Redaction says which secret values were looked for in the driver's
	// answers and removed from every output, in which forms, and which
	// were not looked for.
	Redaction Redaction `json:"redaction"`
	// Unreachable says why the endpoint could not be reached (verdict
	// UNREACHABLE).
	Unreachable string `json:"unreachable,omitempty"`
}

// The engine's policy for this suite: a MUST rule, or a case of one, that
// did not run (cut by the budget or a signal, filtered out, missing a
// dependency such as free blocks or a readable List) keeps a run that
// failed nothing from CONFORMS. SKIP is left for what the user did not ask
// for (the rules' OptIn), NOT SUPPORTED for the choices the profile allows.
func init() { book.Incomplete = rulebook.MustRulesRun }

// buildResult completes the engine's result of a run with what the suite
// knows about the driver. Driver-supplied strings are kept cleaned: secrets
// redacted, unprintable bytes escaped.
func buildResult(s *State, base *rulebook.Result) *Result {
	res := &Result{Result: *base, Profile: s.cfg.Profile, Calls: len(s.Calls()), Capabilities: capNames(s.Caps),
		Budget: s.cfg.RunBudget(), Hold: s.cfg.Hold.Duration, SentinelAge: s.sentinels.lastAge, Redaction: s.secrets.scope}
	res.Endpoint, res.Seed = s.cfg.Endpoint, s.Seed
	s.mu.Lock()
	res.ListClusterFence = s.lists
	s.mu.Unlock()
	if s.Identity != nil {
		res.DriverName, res.DriverVer = clean(s.Identity.GetName()), clean(s.Identity.GetVendorVersion())
		if m := s.Identity.GetManifest(); len(m) > 0 {
			res.Manifest = map[string]string{}
			for k, v := range m {
				res.Manifest[clean(k)] = clean(v)
			}
		}
	}
	switch {
	case s.unreachable != nil:
		res.Unreachable = clean(s.unreachable.Error())
		res.SetUnreachable(res.Unreachable)
	case s.setupErr != nil:
		res.SetupError = clean(s.setupErr.Error())
	case s.fc != nil:
		res.StateSource = s.stateSource()
	}
	p := res.Profile
	l := res.ListClusterFence
	res.Facts = []rulebook.Fact{
		{Name: "driver", Value: strings.TrimSpace(res.DriverName + " " + res.DriverVer)},
		{Name: "capabilities", Value: strings.Join(res.Capabilities, ", ")},
		{Name: "profile", Value: fmt.Sprintf("hostBits=%s, ipv6=%s, listClusterFence=%s", p.HostBits, p.IPv6, p.ListClusterFence)},
		{Name: "RPCs sent", Value: fmt.Sprint(res.Calls)},
		{Name: "state read from", Value: res.StateSource},
		{Name: "time budget", Value: fmt.Sprintf("--timeout %s, of which the run used %s; the sentinels were last read at age %s, at the end of the run (--hold %s)", res.Budget, res.Duration.Round(time.Millisecond), res.SentinelAge.Round(time.Millisecond), res.Hold)},
		{Name: "ListClusterFence cost", Value: fmt.Sprintf("%d calls (at most %d in a full run, and %d more while EXPIRE-001 watched, a fifth of its time at most), %s in all, slowest %s, largest answer %d entries", l.Calls-l.Watch, ListCallBound, l.Watch, l.Time.Round(time.Millisecond), l.Slowest.Round(time.Millisecond), l.Largest)},
		{Name: "secrets", Value: res.Redaction.String()},
	}
	return res
}

// ListCallBound is the most ListClusterFence calls a full run makes besides
// EXPIRE-001's watch (the state rules read the fences a fixed number of
// times, FENCE-010 after each of its steps, about 75; FENCE-007 reads them
// every fifth step when List is slow or long). The suite's tests check it.
const ListCallBound = 270

// WriteReports writes the JUnit report (at junit, or dir/sanity-junit.xml
// when junit is ""), sanity.json, sanity.md and sanity.html into dir and
// returns their paths.
func (r *Result) WriteReports(dir, junit string) ([]string, error) {
	return rulebook.WriteReports(dir, "sanity", r, junit)
}

// WriteJSON writes the result as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error { return rulebook.WriteJSON(w, r) }
