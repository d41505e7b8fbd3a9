package sanity

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// scaleBatch is the request size of the many-requests case.
const scaleBatch = 32

// honestRefusals are the codes a driver may refuse a fence with for capacity.
var honestRefusals = []string{"ResourceExhausted", "InvalidArgument"}

func describeCapacity(s *State) {
	Context("capacity", func() {
		table(s, "SCALE-001", func(ctx context.Context, batch int) {
			s.needList()
			n := s.cfg.ScaleSize
			var blocks []string
			if s.cfg.Profile.IPv6 == Required {
				blocks = s.v6(n, 128)
			} else {
				// The IPv4 documentation ranges hold 512 addresses outside
				// 192.0.2.0/24; an IPv4-only driver is checked with those.
				blocks = s.v4(min(n, 256), 32)
				note("IPv6 is optional: checked with %d IPv4 blocks", len(blocks))
			}
			if batch == 0 {
				batch = len(blocks)
			}
			var acked, refused []string
			for i := 0; i < len(blocks); i += batch {
				part := blocks[i:min(i+batch, len(blocks))]
				err := s.fence(ctx, part)
				switch {
				case err == nil:
					acked = append(acked, part...)
				default:
					expectCode(err, fmt.Sprintf("FenceClusterNetwork of %d blocks (%s...)", len(part), part[0]), honestRefusals...)
					refused = append(refused, part...)
				}
			}
			listed, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			got := map[string]bool{}
			for _, c := range canonicalAll(listed) {
				got[c] = true
			}
			var dropped, leaked []string
			for _, b := range acked {
				if !got[canonical(b)] {
					dropped = append(dropped, b)
				}
			}
			for _, b := range refused {
				if got[canonical(b)] {
					leaked = append(leaked, b)
				}
			}
			Expect(dropped).To(BeEmpty(), "%d of %d acknowledged blocks are not listed (silently dropped): %s", len(dropped), len(acked), firstFew(dropped))
			Expect(leaked).To(BeEmpty(), "%d refused blocks are listed: %s", len(leaked), firstFew(leaked))
			if len(refused) > 0 {
				note("the driver refused %d of %d blocks honestly", len(refused), len(blocks))
			}
			if len(acked) > 0 {
				expectOK(s.unfence(ctx, acked), fmt.Sprintf("UnfenceClusterNetwork of %d blocks", len(acked)))
			}
		}, Entry("in one request", 0), Entry(fmt.Sprintf("across requests of %d", scaleBatch), scaleBatch))
	})
}
