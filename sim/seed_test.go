package sim

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

var seedFlag = flag.Uint64("sim.seed", 0, "seed for randomized tests (or env SIM_SEED); 0 means the fixed default 1")

// testSeed returns the seed of randomized tests: -sim.seed, else $SIM_SEED,
// else 1. It logs it so that a failure can be replayed.
func testSeed(tb testing.TB) uint64 {
	sd := *seedFlag
	if sd == 0 {
		if v := os.Getenv("SIM_SEED"); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				tb.Fatalf("SIM_SEED=%q: %v", v, err)
			}
			sd = n
		}
	}
	if sd == 0 {
		sd = 1
	}
	tb.Logf("seed %d (replay: SIM_SEED=%d or -sim.seed=%d)", sd, sd, sd)
	return sd
}
