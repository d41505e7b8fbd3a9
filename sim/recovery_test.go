package sim

import (
	"fmt"
	"testing"
)

// recoveryCase is one point of the recovery-scaling table: a host of a
// 6-host cluster powers off for good and nothing replaces it, so Ceph marks
// its OSDs out after mon_osd_down_out_interval and backfills onto the rest.
type recoveryCase struct {
	name    string
	usedTiB float64
	osdsPer int
}

var recoveryCases = []recoveryCase{
	{"1TiB-6OSDs", 1, 1},
	{"10TiB-6OSDs", 10, 1},
	{"1TiB-12OSDs", 1, 2},
	{"10TiB-12OSDs", 10, 2},
}

// recoveryTime runs the case and returns the time from the host's loss to
// HEALTH_OK.
func recoveryTime(tb testing.TB, c recoveryCase) Time {
	tb.Helper()
	p := DefaultParams()
	p.PoolUsedGB = c.usedTiB * 1024
	p.OSDMaxBackfills = 1
	p.Jitter = 0
	cfg := Config{Name: "recovery-" + c.name, Cluster: Cluster{Machines: 6, OSDsPerMachine: c.osdsPer, PGs: 256, Mons: 3, OperatorOn: -1},
		Params: p, Policy: Policies["never"], Seed: 1, KeepGoing: true, Duration: 3 * Day,
		Faults: []Fault{{At: 10 * Minute, Kind: FaultPowerOff, Machine: 4}}}
	r, err := RunConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if r.Recovery < 0 {
		tb.Fatalf("%s: never recovered: %s", c.name, r.Summary())
	}
	return r.Recovery
}

// TestRecoveryScaling: with backfill reservations, recovery time grows
// with the data and shrinks with more OSDs (a property of the model, not a
// wall-clock measurement).
func TestRecoveryScaling(t *testing.T) {
	rt := map[string]Time{}
	for _, c := range recoveryCases {
		rt[c.name] = recoveryTime(t, c)
		t.Logf("%-13s recovery %s", c.name, rt[c.name].Dur())
	}
	for _, osds := range []string{"6OSDs", "12OSDs"} {
		small, big := rt["1TiB-"+osds], rt["10TiB-"+osds]
		// the 10-minute down->out wait is fixed; the backfill part scales
		if big-10*Minute < 5*(small-10*Minute) {
			t.Errorf("%s: 10 TiB recovers in %s, 1 TiB in %s: want the backfill >= 5x longer", osds, big.Dur(), small.Dur())
		}
	}
	for _, tib := range []string{"1TiB", "10TiB"} {
		few, many := rt[tib+"-6OSDs"], rt[tib+"-12OSDs"]
		if many >= few {
			t.Errorf("%s: 12 OSDs recover in %s, 6 OSDs in %s: want faster with more OSDs", tib, many.Dur(), few.Dur())
		}
	}
}

// BenchmarkRecoveryScaling reports the simulated recovery time of each
// case (sim-recovery-min), for make bench-sim.
func BenchmarkRecoveryScaling(b *testing.B) {
	for _, c := range recoveryCases {
		b.Run(c.name, func(b *testing.B) {
			var t Time
			for i := 0; i < b.N; i++ {
				t = recoveryTime(b, c)
			}
			b.ReportMetric(float64(t)/float64(Minute), "sim-recovery-min")
		})
	}
}

func ExampleParams_SetParam() {
	p := DefaultParams()
	fmt.Println(p.SetParam("osdMaxBackfills", "2"), p.OSDMaxBackfills)
	// Output: <nil> 2
}
