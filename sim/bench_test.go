package sim

import (
	"runtime"
	"testing"
	"time"
)

// benchConfig is the benchmark cluster: 1,000 nodes with 10 OSDs each
// (~100 PGs per OSD), 30 simulated days, a random machine failure every
// 30 minutes on average, each lasting an hour on average; 2,000 workloads
// with an RBD client each.
func benchConfig(seed uint64) Config {
	return Config{
		Name:               "bench-1000x10-30d",
		Cluster:            Cluster{Machines: 1000, OSDsPerMachine: 10, PGs: 333_333, Mons: 5, FenceKind: FenceDelete, OperatorOn: -1, Clients: 2000},
		Params:             DefaultParams(),
		Policy:             Policies["safe"],
		Seed:               seed,
		Duration:           30 * Day,
		KeepGoing:          true,
		RandomFailureEvery: 30 * Minute,
		RandomFailureFor:   Hour,
	}
}

// BenchmarkSim1000Nodes30Days reports simulator events per second and the
// wall time of one 30-day run of a 1,000-node, 10-OSD-per-node cluster.
func BenchmarkSim1000Nodes30Days(b *testing.B) {
	seed := testSeed(b)
	var events, mallocs uint64
	var wall time.Duration
	var ms runtime.MemStats
	for i := 0; i < b.N; i++ {
		s, err := New(benchConfig(seed))
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		m0 := ms.Mallocs
		start := time.Now()
		r := s.Run()
		wall += time.Since(start)
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - m0
		events += r.Events
	}
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(wall.Seconds()/float64(b.N), "wall-s/run")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	b.ReportMetric(float64(mallocs)/float64(events), "allocs/event")
}
