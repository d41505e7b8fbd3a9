package sanity

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/sanity/relations"
)

func describeListing(s *State) {
	Context("ListClusterFence", func() {
		s.it("LIST-002", func(ctx context.Context) {
			s.needList()
			b := s.v4(1, 32)
			expectOK(s.fence(ctx, b), "FenceClusterNetwork of "+b[0])
			if v6 := s.v6(1, 128); s.fence(ctx, v6) != nil {
				note("IPv6 %s was not fenced: only IPv4 entries were made by the suite", v6[0])
			}
			listed := s.listOrNotRun(ctx)
			var bad []string
			for _, c := range listed {
				if _, perr := netip.ParsePrefix(c); perr != nil {
					bad = append(bad, c)
				}
			}
			check(len(bad) == 0, "%d of %d listed entries are not CIDR blocks: %s", len(bad), len(listed), showFew(bad))
		})

		table(s, "FENCE-008", func(ctx context.Context, c blockShape) {
			if c.v6 {
				s.needIPv6(ctx)
			}
			b := s.region(c.v6, c.bits).String()
			expectOK(s.fence(ctx, []string{b}), "FenceClusterNetwork of "+b)
			expectOK(s.unfence(ctx, []string{b}), "UnfenceClusterNetwork of "+b)
		}, widthEntries()...)
	})
}

// describeRunWide registers the rules that judge every List answer and
// every reading of the fences of the run, so they run after the others
// (before the durability and hygiene rules).
func describeRunWide(s *State) {
	Describe("Run-wide", func() {
		s.it("LIST-001", func(ctx context.Context) {
			if s.listErr != nil {
				failf("%s", s.listErr)
			}
			if s.listMissing {
				notSupported("ListClusterFence is not implemented (profile listClusterFence: optional); the fences are read from: %s", s.stateSource())
			}
			_, err := s.list(ctx)
			settleCut(err)
			if err != nil {
				s.noteListFailure(err)
			}
			s.mu.Lock()
			st := s.lists
			s.mu.Unlock()
			note("%d List calls, %s in all, slowest %s, largest answer %d entries", st.Calls, st.Time.Round(time.Millisecond), st.Slowest.Round(time.Millisecond), st.Largest)
			check(len(st.Failures) == 0, "ListClusterFence failed %d times during the run: %s", len(st.Failures), strings.Join(st.Failures, "; "))
		})

		s.it("LIST-003", func(ctx context.Context) {
			s.needList()
			s.listOrNotRun(ctx)
			s.mu.Lock()
			dups := maps.Clone(s.dups)
			s.mu.Unlock()
			var named []string
			for _, k := range slices.Sorted(maps.Keys(dups)) {
				named = append(named, fmt.Sprintf("%s (as %s)", show(k), showAll(dups[k])))
			}
			check(len(named) == 0, "%d blocks were listed more than once in one List answer: %s", len(named), firstFew(named))
		})

		table(s, "FENCE-009", func(ctx context.Context, v6 bool) {
			s.checkOverFencing(ctx, v6)
		}, Entry("IPv4", false), Entry("IPv6", true))
	})
}

// needList ends a rule about ListClusterFence's own answers when there are
// none to judge: NOT SUPPORTED when the profile makes List optional and the
// driver does not implement it, NOT RUN when List failed before the first
// rule (LIST-001 fails for it).
func (s *State) needList() {
	GinkgoHelper()
	s.needRPC("ListClusterFence")
	if s.listErr != nil {
		notRun("%s (LIST-001 fails for it)", s.listErr)
	}
}

// listOrNotRun calls ListClusterFence itself (never the observe command);
// a failure ends the rule as NOT RUN and is LIST-001's.
func (s *State) listOrNotRun(ctx context.Context) []string {
	GinkgoHelper()
	listed, err := s.list(ctx)
	if err != nil {
		settleCut(err)
		s.noteListFailure(err)
		notRun("ListClusterFence answered %s: %s (LIST-001 fails for it)", codeSpec(err), errText(err))
	}
	return listed
}

// widthEntries are one entry per width class of each family.
func widthEntries() []TableEntry {
	var out []TableEntry
	for _, f := range []relations.Family{relations.IPv4, relations.IPv6} {
		for _, w := range f.Widths {
			out = append(out, Entry(fmt.Sprintf("%s /%d", f.Name, w), blockShape{f.Bits == 128, w}))
		}
	}
	return out
}

// blockShape is the family and length of a block to allocate.
type blockShape struct {
	v6   bool
	bits int
}
