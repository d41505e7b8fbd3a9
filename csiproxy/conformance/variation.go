package conformance

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/hostrecord"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// A host must refuse a bad request however it comes, not only as a
// conformance suite sends it: one bad field at a time, back to back, one
// request at a time. So each run also sends, at RPCs and positions drawn
// from its seed, requests with two bad fields, requests after a pause of
// a driver's pace, and requests while others are being checked.

// The pauses: two per run, each drawn between pauseMin and pauseMax
// (uniform in its logarithm).
const (
	pausedRPCs = 2
	pauseMin   = 150 * time.Millisecond
	pauseMax   = 1500 * time.Millisecond
	// loadedRPCs are how many RPCs per run have their probes on one
	// version sent while loadSenders valid requests run alongside.
	loadedRPCs  = 3
	loadSenders = 3
)

// variation is how the probes of one RPC are sent.
type variation struct {
	// pause is the quiet before its first sent probe (0: none).
	pause time.Duration
	// loaded is the version whose probes go out under load ("": none;
	// "*" until the version is drawn, at the RPC).
	loaded string
}

// variationOf draws, once per run, which RPCs of those whose refusal
// rules will probe something get a pause and which get load.
func (s *state) variationOf(r restrict.RPC, vs []api.GroupVersion) variation {
	if s.varied == nil {
		var eligible []string
		for _, e := range restrict.RPCs {
			if len(s.of(e.Group, e.Method)) > 0 && s.probed(e) && s.needs(e) == "" {
				eligible = append(eligible, e.Rule())
			}
		}
		s.varied = map[string]variation{}
		for i, k := range s.drawIndices(len(eligible), pausedRPCs+loadedRPCs) {
			v := s.varied[eligible[k]]
			if i < pausedRPCs {
				v.pause = time.Duration(float64(pauseMin) * math.Pow(float64(pauseMax)/float64(pauseMin), float64(s.draw.IntN(1000))/999))
			} else {
				v.loaded = "*"
			}
			s.varied[eligible[k]] = v
		}
	}
	v := s.varied[r.Rule()]
	if v.loaded != "" {
		v.loaded = vs[s.draw.IntN(len(vs))].Version
	}
	return v
}

// drawIndices draws n indices below max, distinct while they can be.
func (s *state) drawIndices(below, n int) []int {
	if below == 0 {
		return nil
	}
	perm := make([]int, below)
	for i := range perm {
		perm[i] = i
	}
	var out []int
	for i := range n {
		if i%below == 0 {
			for j := below - 1; j > 0; j-- {
				k := s.draw.IntN(j + 1)
				perm[j], perm[k] = perm[k], perm[j]
			}
		}
		out = append(out, perm[i%below])
	}
	return out
}

// underLoad runs PathExists requests of fresh names in a Windows
// directory, loadSenders at a time, until the returned stop is called: the
// requests sent meanwhile meet a host busy checking others. The load is
// refused by its checks, so a faithful host makes no Windows call for it;
// a host that records calls and makes some for it alone gets no load (its
// record of a probe sent meanwhile would hold the load's calls).
func (s *state) underLoad(ctx context.Context) (stop func()) {
	fs := s.fs()
	if fs == nil {
		return func() {}
	}
	paths := make([]string, loadSenders)
	for i := range paths {
		paths[i] = s.draw.Spell(`{outside}\{s}`, restrict.KindPath, s.name())
	}
	cctx, cancelCall := s.call(ctx)
	wctx, calls := hostrecord.Watch(cctx)
	_, _ = fs.PathExists(wctx, &api.FilesystemPathExistsRequest{Path: paths[0]})
	cancelCall()
	if len(calls.Names) > 0 {
		return func() {}
	}
	// each sender finishes the request it has out (not cancelled: the
	// host would go on handling it, and its calls would count for the
	// next probe's)
	var done atomic.Bool
	var wg sync.WaitGroup
	for _, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() && ctx.Err() == nil {
				cctx, cancel := s.call(ctx)
				_, _ = fs.PathExists(cctx, &api.FilesystemPathExistsRequest{Path: p})
				cancel()
			}
		}()
	}
	return func() { done.Store(true); wg.Wait() }
}

// pairOf draws, for a probe of field fl, a bad value for another checked
// field of the RPC the profile probes (none when it has none): a request
// with two bad fields must be refused like one with one.
func (s *state) pairOf(r restrict.RPC, fl restrict.Field) (restrict.Field, restrict.Probe, bool) {
	var others []restrict.Field
	for _, o := range r.Fields {
		if o.Name != fl.Name && o.Kind != restrict.KindFree && len(s.pairCases(r, o)) > 0 {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		return restrict.Field{}, restrict.Probe{}, false
	}
	o := others[s.draw.IntN(len(others))]
	cs := s.pairCases(r, o)
	c := cs[s.draw.IntN(len(cs))]
	return o, s.draw.Probe(c, o.Kind), true
}

// pairCases are the cases of a field safe to send as a second bad value:
// probed by the profile, needing nothing made or configured, refused by
// the request alone, and naming only fresh entries if a path.
func (s *state) pairCases(r restrict.RPC, o restrict.Field) []restrict.Case {
	var out []restrict.Case
	for _, c := range restrict.CasesOf(o.Kind) {
		_, ok := s.cfg.Profile.RuleOf(c, r, o)
		if rule, _ := restrict.RuleByID(c.Rule); !ok || rule.State || c.ByWindows || c.Make != restrict.MakeNothing || c.Rule == "SYSDISK-001" || disruptive(r, c) ||
			slices.ContainsFunc([]string{"{escape}", "{osdisk}", "{osvolume}"}, func(ph string) bool { return strings.Contains(c.Value, ph) }) ||
			o.Kind.IsPath() && !strings.Contains(c.Value, "{s}") && !strings.Contains(c.Value, "{u}") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// sendAs is how one probe goes out: after a pause, under load, with a
// second bad field.
type sendAs struct {
	pause  time.Duration
	loaded bool
	pair   *pairedField
}

// pairedField is a second bad field of a probe.
type pairedField struct {
	field restrict.Field
	probe restrict.Probe
}

// pairProbe draws a probe with two bad fields of the RPC (false when it
// has no two fields to pair).
func (s *state) pairProbe(r restrict.RPC) (restrict.Field, string, restrict.Probe, *pairedField, bool) {
	fields := slices.Clone(r.Fields)
	for i := len(fields) - 1; i > 0; i-- {
		k := s.draw.IntN(i + 1)
		fields[i], fields[k] = fields[k], fields[i]
	}
	for _, fl := range fields {
		cs := s.pairCases(r, fl)
		if fl.Kind == restrict.KindFree || len(cs) == 0 {
			continue
		}
		o, op, ok := s.pairOf(r, fl)
		if !ok {
			continue
		}
		c := cs[s.draw.IntN(len(cs))]
		rule, _ := s.cfg.Profile.RuleOf(c, r, fl)
		return fl, rule, s.draw.Probe(c, fl.Kind), &pairedField{o, op}, true
	}
	return restrict.Field{}, "", restrict.Probe{}, nil, false
}
