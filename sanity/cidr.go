package sanity

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/sanity/fencemodel"
	"github.com/fenceproof/fenceproof/sanity/relations"
)

// looseCase builds, from a fresh /32, a string that is not a clean CIDR and
// the canonical block it could stand for.
type looseCase func(s *State) (raw, canon string)

func bareIP(v6 bool) looseCase {
	return func(s *State) (string, string) {
		p := s.take(v6, map[bool]int{false: 32, true: 128}[v6])
		return p.Addr().String(), p.String()
	}
}

func padded(left, right string) looseCase {
	return func(s *State) (string, string) {
		p := s.v4(1, 32)[0]
		return left + p + right, p
	}
}

func looseEntries() []TableEntry {
	return []TableEntry{
		Entry("bare IPv4 address", bareIP(false)),
		Entry("bare IPv6 address", bareIP(true)),
		Entry("leading space", padded(" ", "")),
		Entry("trailing space", padded("", " ")),
		Entry("tab and newline", padded("\t", "\n")),
	}
}

func describeCIDRs(s *State) {
	Context("CIDR validation", func() {
		s.it("CIDR-001", func(ctx context.Context) {
			s.checkCorpus(ctx)
		})

		s.it("CIDR-002", func(ctx context.Context) {
			s.needState()
			// Side effects are checked before the code, so that a driver
			// that applies the valid block and then fails with the wrong
			// code is charged with the side effect too.
			good := s.v4(2, 32)
			err := s.fence(ctx, []string{good[0], "not-a-cidr", good[1]})
			settleCut(err)
			if err != nil {
				s.expectNotFenced(ctx, good, "after a mixed FenceClusterNetwork answered "+codeSpec(err))
			}
			expectCode(err, "FenceClusterNetwork of valid+invalid", "InvalidArgument")

			kept := s.v4(1, 32)
			expectOK(s.fence(ctx, kept), "FenceClusterNetwork of "+kept[0])
			err = s.unfence(ctx, []string{kept[0], "198.51.100.0/33"})
			settleCut(err)
			if err != nil {
				s.expectFenced(ctx, kept, "after a mixed UnfenceClusterNetwork answered "+codeSpec(err))
			}
			expectCode(err, "UnfenceClusterNetwork of valid+invalid", "InvalidArgument")
		})

		table(s, "CIDR-003", func(ctx context.Context, c looseCase) {
			s.needState()
			raw, canon := c(s)
			if strings.Contains(canon, ":") {
				s.needIPv6(ctx)
			}
			err := s.fence(ctx, []string{raw})
			settleCut(err)
			if err != nil {
				expectCode(err, "FenceClusterNetwork of "+show(raw), "InvalidArgument")
				s.expectNotFenced(ctx, []string{canon}, "after a rejected "+show(raw))
				return
			}
			v := s.readFences(ctx, "after FenceClusterNetwork of "+show(raw))
			check(v.spelled(canon), "%s was accepted but %s is not listed in canonical form (the suite's entries listed: %s)", show(raw), canon, showFew(s.ours(v.raw)))
			check(!v.spelled(raw), "%s was stored verbatim", show(raw))
		}, looseEntries()...)

		table(s, "CIDR-004", func(ctx context.Context, c looseCase) {
			raw, _ := c(s)
			expectCode(s.fence(ctx, []string{raw}), "FenceClusterNetwork of "+show(raw), "InvalidArgument")
		}, looseEntries()...)

		table(s, "CIDR-005", func(ctx context.Context, v6 bool) {
			s.needState()
			var raw, canon string
			if v6 {
				s.needIPv6(ctx)
				p := s.take(true, 64)
				raw, canon = netip.PrefixFrom(p.Addr().Next(), 64).String(), p.String()
			} else {
				w := s.wideBlock()
				raw, canon = netip.PrefixFrom(w.Addr().Next(), 24).String(), w.String()
			}
			err := s.fence(ctx, []string{raw})
			settleCut(err)
			mode := s.cfg.Profile.HostBits
			switch {
			case err != nil && mode != HostBitsNormalise:
				expectCode(err, "FenceClusterNetwork of "+raw, "InvalidArgument")
				s.expectNotFenced(ctx, []string{canon}, "after a rejected "+raw)
				note("host bits: rejected")
			case err != nil:
				failf("FenceClusterNetwork of %s: expected OK (profile hostBits=normalise), got %s: %s", raw, codeSpec(err), errText(err))
			case mode == HostBitsReject:
				failf("FenceClusterNetwork of %s: expected INVALID_ARGUMENT (profile hostBits=reject), got OK", raw)
			default:
				v := s.readFences(ctx, "after FenceClusterNetwork of "+raw)
				check(v.spelled(canon), "%s was accepted but is not listed as %s (the suite's entries listed: %s)", raw, canon, showFew(s.ours(v.raw)))
				check(!v.spelled(raw), "%s was listed with its host bits", raw)
				note("host bits: normalised")
			}
		}, Entry("IPv4 a /24 written with a host bit", false), Entry("IPv6 a /64 written with a host bit", true))

		s.it("CIDR-006", func(ctx context.Context) {
			s.checkWidths(ctx, relations.IPv4)
		})

		s.it("CIDR-014", func(ctx context.Context) {
			s.needIPv6(ctx)
			s.checkWidths(ctx, relations.IPv6)
		})

		s.it("CIDR-007", func(ctx context.Context) {
			s.needState()
			s.needIPv6(ctx)
			p := s.take(true, 64)
			compressed := p.String()
			expanded := expand(p)
			upper := strings.ToUpper(compressed)
			for _, form := range []string{compressed, expanded, upper} {
				expectOK(s.fence(ctx, []string{form}), "FenceClusterNetwork of "+form)
			}
			v := s.readFences(ctx, "after fencing one block in three spellings")
			check(v.count(compressed) == 1, "%s fenced as %s, %s and %s must be one fence; it is listed %d times (the suite's entries listed: %s)",
				compressed, compressed, expanded, upper, v.count(compressed), showFew(s.ours(v.raw)))
			expectOK(s.unfence(ctx, []string{expanded}), "UnfenceClusterNetwork of "+expanded)
			s.expectNotFenced(ctx, []string{compressed}, "after unfencing the expanded form")
			host := s.v6(1, 128)
			expectOK(s.fence(ctx, host), "FenceClusterNetwork of "+host[0])
			s.expectFenced(ctx, host, "after FenceClusterNetwork")
		})

		s.it("CIDR-008", func(ctx context.Context) {
			s.needState()
			a := s.v4(1, 32)[0]
			expectOK(s.fence(ctx, []string{a, a}), "FenceClusterNetwork of "+a+" twice in one request")
			expectOK(s.fence(ctx, []string{a}), "FenceClusterNetwork of "+a+" again")
			v := s.readFences(ctx, "after fencing one block three times")
			check(v.count(a) == 1, "%s is listed %d times", a, v.count(a))
		})

		s.it("CIDR-009", func(ctx context.Context) {
			s.needState()
			outer := s.take(false, 28)
			inner := sub(outer, 29)
			o := outer.String()
			expectOK(s.fence(ctx, []string{o}), "FenceClusterNetwork of "+o)
			expectOK(s.fence(ctx, []string{inner}), "FenceClusterNetwork of "+inner)
			s.expectFenced(ctx, []string{o, inner}, "after fencing overlapping blocks")
			expectOK(s.unfence(ctx, []string{inner}), "UnfenceClusterNetwork of "+inner)
			s.expectFenced(ctx, []string{o}, "after unfencing the inner block "+inner)
			expectOK(s.fence(ctx, []string{inner}), "FenceClusterNetwork of "+inner)
			expectOK(s.unfence(ctx, []string{o}), "UnfenceClusterNetwork of "+o)
			s.expectFenced(ctx, []string{inner}, "after unfencing the outer block "+o)
		})

		s.it("CIDR-010", func(ctx context.Context) {
			s.needState()
			wide := []string{"240.0.0.0/8", "240.0.0.0/4"}
			expectOK(s.fence(ctx, wide), "FenceClusterNetwork of reserved 240.0.0.0/8 and /4")
			s.expectFenced(ctx, wide, "after fencing wide prefixes")
		})
	})
}

// checkWidths fences a fresh block of every width class of the family,
// each in a request of its own, reads the fences once and checks that each
// block is listed as exactly itself: once, and nothing else inside or
// around it (a /48 listed as its first /64, a /127 as a /128).
func (s *State) checkWidths(ctx context.Context, f relations.Family) {
	GinkgoHelper()
	s.needState()
	m := fencemodel.New(s.modelHostBits())
	var blocks []netip.Prefix
	for _, w := range f.Widths {
		p := s.region(f.Bits == 128, w)
		blocks = append(blocks, p)
		b := []string{p.String()}
		if err := m.Apply(fencemodel.Fence, b, s.send(ctx, fencemodel.Fence, b)); err != nil {
			failf("FenceClusterNetwork of %s: %s", p, err)
		}
	}
	v := s.readFences(ctx, fmt.Sprintf("after fencing a %s block of every width class", f.Name))
	var wrong []string
	for _, p := range blocks {
		if d := m.Diff(v.raw, p.Overlaps); !d.Empty() {
			wrong = append(wrong, fmt.Sprintf("/%d %s: %s", p.Bits(), p, d))
		}
	}
	check(len(wrong) == 0, "%d of %d %s width classes are not listed as the block fenced: %s", len(wrong), len(blocks), f.Name, strings.Join(wrong, "; "))
	note("%s blocks of %d widths (/%d to /%d) fenced and listed as themselves", f.Name, len(blocks), f.Widths[0], f.Widths[len(f.Widths)-1])
}

// checkCorpus is CIDR-001: every string of the malformed-input corpus is
// rejected by Fence and by Unfence with INVALID_ARGUMENT, and neither it nor
// any block a lenient parser reads it as is listed. The fences are read
// once, after every Fence.
func (s *State) checkCorpus(ctx context.Context) {
	region := corpusRegion{v4: s.wideBlock(), v6: s.take(true, 48)}
	var sent []malformed
	var held []string
	for _, m := range corpusFor(region.v4, region.v6) {
		if m.outside && !s.cfg.Destructive {
			held = append(held, show(m.cidr))
			continue
		}
		sent = append(sent, m)
	}
	if len(held) > 0 {
		note("not sent without --destructive, because a lenient parser reads them as blocks outside the documentation ranges: %s", strings.Join(held, ", "))
	}
	var wrong []string
	answer := func(rpc string, m malformed, err error) {
		settleCut(err)
		if codeName(err) != "InvalidArgument" {
			wrong = append(wrong, fmt.Sprintf("%s of %s (%s: %s) answered %s", rpc, show(m.cidr), m.class, m.why, codeSpec(err)))
		}
	}
	accepted := make([]bool, len(sent))
	for i, m := range sent {
		s.tracker.account(m.readAs...)
		err := s.fence(ctx, []string{m.cidr})
		accepted[i] = err == nil
		answer("FenceClusterNetwork", m, err)
	}
	var listed []string
	if s.stateSource() != SourceNone {
		v := s.readFences(ctx, "after the malformed Fences")
		for _, c := range v.raw {
			if s.preSet[blockKey(c)] {
				continue
			}
			// Credit the entry to the strings that could mean it, the
			// ones the driver accepted first: a refused string did not
			// make it.
			p, ok := blockOf(c)
			var took, refused []string
			for i, m := range sent {
				if c == m.cidr || (ok && slicesContainsBlock(m.readAs, p)) {
					if accepted[i] {
						took = append(took, fmt.Sprintf("%s (%s)", show(m.cidr), m.class))
					} else {
						refused = append(refused, show(m.cidr))
					}
				}
			}
			switch {
			case len(took) > 0:
				listed = append(listed, fmt.Sprintf("%s is listed, which the accepted %s could mean", show(c), strings.Join(took, ", ")))
			case len(refused) > 0:
				listed = append(listed, fmt.Sprintf("%s is listed, which only %s could mean, though the driver refused them", show(c), strings.Join(refused, ", ")))
			case ok && region.touches(p):
				listed = append(listed, fmt.Sprintf("%s is listed, inside the blocks the malformed strings were made from: one of them was read as it", show(c)))
			default:
				continue
			}
			s.tracker.account(c)
		}
	}
	for _, m := range sent {
		answer("UnfenceClusterNetwork", m, s.unfence(ctx, []string{m.cidr}))
	}
	check(len(listed) == 0, "%d entries are listed that malformed strings made: %s", len(listed), strings.Join(listed[:min(len(listed), 10)], "; "))
	check(len(wrong) == 0, "%d of %d requests with a malformed CIDR were not rejected with INVALID_ARGUMENT: %s", len(wrong), 2*len(sent), firstFew(wrong))
	if s.stateSource() == SourceNone {
		notRun("every malformed string was rejected with INVALID_ARGUMENT; whether any was listed could not be read: %s", s.stateGap())
	}
	note("%d malformed strings rejected by Fence and Unfence, none listed", len(sent))
}

// slicesContainsBlock reports whether one of the strings names block p.
func slicesContainsBlock(xs []string, p netip.Prefix) bool {
	for _, x := range xs {
		if q, ok := blockOf(x); ok && q == p {
			return true
		}
	}
	return false
}

// needIPv6 ends IPv6 cases as NOT SUPPORTED when IPv6 is optional and the
// driver rejects it.
func (s *State) needIPv6(ctx context.Context) {
	GinkgoHelper()
	if !s.acceptsIPv6(ctx) {
		notSupported("the driver rejects IPv6 (profile ipv6: optional)")
	}
}

// acceptsIPv6 reports whether IPv6 is to be checked: always when the
// profile requires it, else when the driver does not reject an IPv6 Fence.
func (s *State) acceptsIPv6(ctx context.Context) bool {
	GinkgoHelper()
	if s.cfg.Profile.IPv6 == Required {
		return true
	}
	err := s.fence(ctx, s.v6(1, 128))
	settleCut(err)
	return codeName(err) != "InvalidArgument"
}

// expand spells an IPv6 prefix with every group written out in full.
func expand(p netip.Prefix) string {
	b := p.Addr().As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		const hex = "0123456789abcdef"
		for _, v := range []byte{b[i] >> 4, b[i] & 15, b[i+1] >> 4, b[i+1] & 15} {
			sb.WriteByte(hex[v])
		}
	}
	return sb.String() + "/" + strconv.Itoa(p.Bits())
}
