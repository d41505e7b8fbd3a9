// Package clock bounds how far a node's wall clock may be from the clock
// of the process that runs `fenceproof fencing`, the way NTP does: ask the
// node for its time, note when the question left and the answer came back,
// and the node's reading was taken somewhere in between. With send time
// t0, the node's reading c and receive time t1, the node's clock is ahead
// by c-(t0+t1)/2 give or take (t1-t0)/2, whatever the two paths' delays;
// of several samples the one with the shortest round trip is the tightest.
//
// The bound a verdict uses (Bound) is |offset| + uncertainty, the largest
// of every estimate taken during a run (before the fence and after it):
// no assumption that the offset is steady, nor that it is zero.
package clock

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// Sample is one question to a node: when it left and came back (the
// asking process's clock, unix ns) and what the node's clock read.
type Sample struct {
	SentNs, NodeNs, ReceivedNs int64
}

// Estimate is what a set of samples says about one node's clock.
type Estimate struct {
	Node string
	// OffsetNs: how far the node's clock is ahead; UncertaintyNs: give or
	// take (half the shortest round trip).
	OffsetNs, UncertaintyNs int64
	Samples                 int
	AtNs                    int64 // when (the asking clock) the best sample was taken
}

// Bound is how far the node's clock may be from the asking clock.
func (e Estimate) Bound() time.Duration {
	off := e.OffsetNs
	if off < 0 {
		off = -off
	}
	return time.Duration(off + e.UncertaintyNs)
}

func (e Estimate) String() string {
	return fmt.Sprintf("%s: offset %+.3f ms ± %.3f ms (%d samples) → bound %.3f ms",
		e.Node, float64(e.OffsetNs)/1e6, float64(e.UncertaintyNs)/1e6, e.Samples, float64(e.Bound())/1e6)
}

// EstimateFrom picks the sample with the shortest round trip.
func EstimateFrom(node string, samples []Sample) (Estimate, error) {
	best := -1
	for i, s := range samples {
		if s.ReceivedNs < s.SentNs {
			continue // the asking clock stepped back meanwhile: useless
		}
		if best < 0 || s.ReceivedNs-s.SentNs < samples[best].ReceivedNs-samples[best].SentNs {
			best = i
		}
	}
	if best < 0 {
		return Estimate{Node: node}, fmt.Errorf("clock of %s: no usable sample of %d", node, len(samples))
	}
	s := samples[best]
	rtt := s.ReceivedNs - s.SentNs
	return Estimate{Node: node, OffsetNs: s.NodeNs - (s.SentNs + rtt/2), UncertaintyNs: (rtt + 1) / 2, Samples: len(samples), AtNs: s.SentNs}, nil
}

// Bound is the largest bound of the estimates (0 without any).
func Bound(es ...Estimate) time.Duration {
	var b time.Duration
	for _, e := range es {
		b = max(b, e.Bound())
	}
	return b
}

// Reading is the node's answer: its name and its wall clock.
type Reading struct {
	Node   string `json:"node"`
	WallNs int64  `json:"wall_ns"`
}

// Measure takes n samples through ask (which returns the node's answer).
func Measure(ctx context.Context, node string, n int, ask func(context.Context) ([]byte, error)) (Estimate, error) {
	var samples []Sample
	var lastErr error
	for i := 0; i < n; i++ {
		t0 := time.Now().UnixNano()
		b, err := ask(ctx)
		t1 := time.Now().UnixNano()
		if err != nil {
			lastErr = err
			continue
		}
		var r Reading
		if err := json.Unmarshal(b, &r); err != nil || r.WallNs == 0 {
			lastErr = fmt.Errorf("clock of %s: unexpected answer %q", node, clip(b))
			continue
		}
		if r.Node != node {
			return Estimate{Node: node}, fmt.Errorf("clock of %s: answered by %q", node, r.Node)
		}
		samples = append(samples, Sample{SentNs: t0, NodeNs: r.WallNs, ReceivedNs: t1})
	}
	if len(samples) == 0 {
		return Estimate{Node: node}, fmt.Errorf("clock of %s: no answer: %v", node, lastErr)
	}
	return EstimateFrom(node, samples)
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// Agent is what `fenceproof fencing agent` serves on each node of a run:
// its clock, and the writers' log copies in Root (the hostPath their
// EnvLogDir lies in), which it also removes at the end of a run.
//
//	GET    /time             Reading
//	GET    /logs/<run>/<f>   a log file of run <run>
//	DELETE /logs/<run>       remove run <run>'s directory
type Agent struct {
	Node, Root string
}

// ServeHTTP implements http.Handler.
func (a Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/time" && r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(Reading{Node: a.Node, WallNs: time.Now().UnixNano()})
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/logs/"), "/")
	if !strings.HasPrefix(r.URL.Path, "/logs/") || len(parts) > 2 || !validNames(parts) {
		http.Error(w, "want GET /time, GET /logs/<run>/<file> or DELETE /logs/<run>", http.StatusNotFound)
		return
	}
	switch {
	case r.Method == http.MethodGet && len(parts) == 2:
		f, err := os.Open(filepath.Join(a.Root, parts[0], parts[1]))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer f.Close()
		io.Copy(w, f)
	case r.Method == http.MethodDelete && len(parts) == 1:
		if err := os.RemoveAll(filepath.Join(a.Root, parts[0])); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	default:
		http.Error(w, "want GET /time, GET /logs/<run>/<file> or DELETE /logs/<run>", http.StatusMethodNotAllowed)
	}
}

// validNames: each part is a plain name (no path separators, no "..").
func validNames(parts []string) bool {
	for _, p := range parts {
		if !contract.ValidName(p) || strings.Trim(p, ".") == "" {
			return false
		}
	}
	return true
}
