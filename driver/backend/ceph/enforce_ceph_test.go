//go:build ceph

package ceph_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/audit"
	"github.com/fenceproof/fenceproof/driver"
	rswriter "github.com/fenceproof/fenceproof/refstore/writer"
)

// enforcementRun fences fencedBlock while two writers inside it and a
// neighbour outside it write, holds the fence, lifts it, and returns the
// oracle's verdict with the figures. The mon runs with Ceph's default
// paxos_propose_interval (1 s) so the commit time is what a user sees.
type enforcementRun struct {
	res        *audit.Result
	fenceRPC   time.Duration // the Fence RPC, i.e. the mon commit and the read-back
	unfenceRPC time.Duration
	entries    []string // the blocklist entries while fenced
	epochs     [2]int   // OSD map epoch before and after the Fence
	neighbour  map[string]int
	fenced     map[string]int
	monMs      float64 // the Fence's mon commands to the OSD map read back
	barrierMs  float64 // the Fence's OSD barrier
}

// commitFigures reads the first committed change that added entries from
// a driver log: how long the mon and the OSD barrier took.
func commitFigures(t *testing.T, log string) (mon, barrier float64) {
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		var c struct {
			Msg       string  `json:"msg"`
			Added     int     `json:"added"`
			MonMs     float64 `json:"mon_ms"`
			BarrierMs float64 `json:"barrier_ms"`
		}
		if json.Unmarshal([]byte(l), &c) == nil && c.Msg == "ceph blocklist change committed" && c.Added > 0 {
			return c.MonMs, c.BarrierMs
		}
	}
	return 0, 0
}

func runEnforcement(t *testing.T, ranges string, faults ...string) enforcementRun {
	t.Helper()
	paxos(t, "1", "0.05")
	rd, err := startDriver(t, t.TempDir(), func(o *driver.Options) {
		o.Ceph.Ranges = ranges
		o.Faults = faults
	})
	if err != nil {
		t.Fatal(err)
	}
	n := startWriter(t, env.neighbour, "neighbour")
	a := startWriter(t, env.fenced[0], "fenced-a")
	b := startWriter(t, env.fenced[1], "fenced-b")
	time.Sleep(time.Second)
	var r enforcementRun
	_, r.epochs[0] = blocklist(t)
	if r.fenceRPC, err = rd.fenceRPC(10*time.Second, fencedBlock); err != nil {
		t.Fatalf("Fence %s: %v", fencedBlock, err)
	}
	bl, ep := blocklist(t)
	r.epochs[1] = ep
	for k := range bl {
		if strings.HasPrefix(k, "10.99.0.") || strings.HasPrefix(k, "cidr:10.99.0.") {
			r.entries = append(r.entries, k)
		}
	}
	slices.Sort(r.entries)
	time.Sleep(2 * time.Second)
	if r.unfenceRPC, err = rd.unfenceRPC(10*time.Second, fencedBlock); err != nil {
		t.Fatalf("Unfence %s: %v", fencedBlock, err)
	}
	time.Sleep(1500 * time.Millisecond)
	for _, w := range []*runningWriter{n, a, b} {
		w.stop()
	}
	r.res, _ = oracle(t, rd, n, a, b)
	r.neighbour, r.fenced = n.w.Counts(), a.w.Counts()
	r.monMs, r.barrierMs = commitFigures(t, rd.log)
	name := "ceph-enforcement-ranges-" + ranges
	for _, f := range faults {
		name += "-" + strings.NewReplacer("=", "-", ".", "-").Replace(f)
	}
	md := r.res.Markdown(fmt.Sprintf("Ceph enforcement, range entries %s, faults %v", ranges, faults))
	os.WriteFile(filepath.Join(reportDir(t), name+".md"), []byte(md), 0o644)
	return r
}

// firstRefusal is the earliest first refusal − ack over the fenced sources.
func (r enforcementRun) firstRefusal() (float64, bool) {
	best, ok := 0.0, false
	for _, e := range r.res.Episodes {
		for _, s := range e.Sources {
			if s.Fenced && s.FirstRefusedNs > 0 && (!ok || s.RefusalMs < best) {
				best, ok = s.RefusalMs, true
			}
		}
	}
	return best, ok
}

// TestFencedWritersRefusedNeighbourWrites is the enforcement test on real
// Ceph, for range entries and for per-address entries: the writers inside
// the fenced block get -108 from the OSD from the Fence's ack until the
// Unfence, the neighbour writes throughout without one error, no write
// sent after the ack is acknowledged to a fenced writer, every
// acknowledged object reads back intact, and the fenced writers resume.
func TestFencedWritersRefusedNeighbourWrites(t *testing.T) {
	need(t)
	for _, mode := range []struct {
		ranges  string
		entries []string
	}{
		{"on", []string{"cidr:10.99.0.4:0/30"}},
		{"off", []string{"10.99.0.4:0/0", "10.99.0.5:0/0", "10.99.0.6:0/0", "10.99.0.7:0/0"}},
	} {
		t.Run("ranges="+mode.ranges, func(t *testing.T) {
			r := runEnforcement(t, mode.ranges)
			if !r.res.OK() {
				t.Fatalf("oracle: %s\n%s", r.res.Summary(), r.res.Markdown("failed run"))
			}
			if !slices.Equal(r.entries, mode.entries) {
				t.Errorf("blocklist entries while fenced: %v, want %v", r.entries, mode.entries)
			}
			if r.epochs[1] <= r.epochs[0] {
				t.Errorf("OSD map epoch %d before the Fence, %d after its ack", r.epochs[0], r.epochs[1])
			}
			ref, ok := r.firstRefusal()
			if !ok {
				t.Fatalf("no fenced writer was refused: %v", r.fenced)
			}
			if r.neighbour[rswriter.OutcomeOK] < 100 || len(r.neighbour) != 1 {
				t.Errorf("neighbour: %v, want only ok writes, at least 100", r.neighbour)
			}
			if r.fenced[rswriter.OutcomeRefused] == 0 {
				t.Errorf("fenced writer: %v, want -108 refusals", r.fenced)
			}
			resumed := false
			for _, e := range r.res.Episodes {
				for _, s := range e.Sources {
					resumed = resumed || s.Fenced && s.FirstAfterNs > 0
				}
			}
			if !resumed {
				t.Errorf("no fenced writer wrote again after the Unfence")
			}
			t.Logf("FIGURES ranges=%s: Fence RPC %.0f ms (mon commit to OSD map read back %.0f ms, OSD barrier %.0f ms), epoch %d -> %d, entries %v; first refused write %.1f ms after the ack; neighbour %v; fenced-a %v; Unfence RPC %.0f ms",
				mode.ranges, ms(r.fenceRPC), r.monMs, r.barrierMs, r.epochs[0], r.epochs[1], r.entries, ref, r.neighbour, r.fenced, ms(r.unfenceRPC))
		})
	}
}

// TestOracleCatchesAckBeforeEnforceOnCeph: the driver's ack-before-enforce
// fault acknowledges the Fence 1.5 s before it reaches the blocklist; the
// fenced writers' writes acknowledged in between are writes after the
// fence, and the oracle must say so.
func TestOracleCatchesAckBeforeEnforceOnCeph(t *testing.T) {
	need(t)
	r := runEnforcement(t, "on", "ack-before-enforce=1500ms")
	if r.res.OK() {
		t.Fatalf("the oracle found nothing wrong with a driver that acknowledges 1.5 s before enforcing: %s", r.res.Summary())
	}
	if v := r.res.First(); v.Kind != audit.KindWriteAfterFence {
		t.Fatalf("first violation %s, want %s", v.Kind, audit.KindWriteAfterFence)
	}
	t.Logf("caught: %s", r.res.First())
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
