package sanity

import (
	"net/netip"
	"testing"

	"github.com/fenceproof/fenceproof/sanity/relations"
)

// TestSequencesFitTheirRounds plans FENCE-010's rounds in empty
// documentation ranges: every case is placed, no two regions of a round
// overlap, every region lies in the documentation ranges, and the readings
// the rounds cost (a round lasts as long as its longest script) stay
// within the bound the suite's List budget counts on.
func TestSequencesFitTheirRounds(t *testing.T) {
	s := newState(Defaults())
	s.alloc.reset(nil)
	todo := append(relations.Cases(relations.IPv4), relations.Cases(relations.IPv6)...)
	total := len(todo)
	orderCases(todo)
	placed, readings, rounds := 0, 0, 0
	for len(todo) > 0 {
		round, later := s.planRound(todo)
		if len(round) == 0 {
			t.Fatalf("%d cases cannot be placed in empty documentation ranges, e.g. %s", len(todo), todo[0].Name)
		}
		var regions []netip.Prefix
		steps := 0
		for _, r := range round {
			steps = max(steps, len(r.c.Script))
			for _, p := range r.regions {
				if !inDocRanges(p) {
					t.Errorf("%s: region %v is outside the documentation ranges", r.c.Name, p)
				}
				for _, q := range regions {
					if q.Overlaps(p) {
						t.Errorf("round %d: %s's region %v overlaps %v", rounds, r.c.Name, p, q)
					}
				}
				regions = append(regions, p)
			}
		}
		for _, r := range round {
			s.alloc.release(r.regions)
		}
		placed, readings, rounds, todo = placed+len(round), readings+steps, rounds+1, later
	}
	t.Logf("%d cases in %d rounds, %d readings", placed, rounds, readings)
	if placed != total || readings > sequenceReadings {
		t.Errorf("%d of %d cases placed, %d readings (bound %d)", placed, total, readings, sequenceReadings)
	}
}
