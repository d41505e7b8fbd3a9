package sanity

import (
	"context"
	"net/netip"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// looseCase builds, from a fresh /32, a string that is not a clean CIDR and
// the canonical block it could stand for.
type looseCase func(s *State) (raw, canon string)

func bareIP(v6 bool) looseCase {
	return func(s *State) (string, string) {
		p := s.alloc.block(v6, map[bool]int{false: 32, true: 128}[v6])
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
		table(s, "CIDR-001", func(ctx context.Context, bad string) {
			expectCode(s.fence(ctx, []string{bad}), "FenceClusterNetwork of "+quote(bad), "InvalidArgument")
			expectCode(s.unfence(ctx, []string{bad}), "UnfenceClusterNetwork of "+quote(bad), "InvalidArgument")
			if s.stateSource() == SourceNone {
				return
			}
			listed, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			Expect(listed).NotTo(ContainElement(bad), "%s was rejected but is listed", quote(bad))
		},
			Entry("empty string", ""),
			Entry("garbage", "not-a-cidr"),
			Entry("IPv4 prefix length 33", "198.51.100.0/33"),
			Entry("IPv4 octet out of range", "300.1.1.1/32"),
			Entry("IPv6 prefix length 129", "fd00::/129"),
			Entry("negative prefix length", "198.51.100.0/-1"),
			Entry("missing prefix length", "198.51.100.0/"),
			Entry("two prefix lengths", "198.51.100.0/24/24"),
			Entry("IPv4 host:port", "198.51.100.7:8080"),
			Entry("IPv6 [host]:port", "[2001:db8::7]:443"),
			Entry("IPv6 zone", "fe80::1%eth0/64"),
			Entry("hostname", "storage.example.com/32"),
		)

		s.it("CIDR-002", func(ctx context.Context) {
			s.needList()
			// Side effects are checked before the code, so that a driver
			// that applies the valid block and then fails with the wrong
			// code (ceph-csi) is charged with the side effect too.
			good := s.v4(2, 32)
			err := s.fence(ctx, []string{good[0], "not-a-cidr", good[1]})
			if err != nil {
				s.expectNotFenced(ctx, good, "after a mixed FenceClusterNetwork answered "+codeName(err))
			}
			expectCode(err, "FenceClusterNetwork of valid+invalid", "InvalidArgument")

			kept := s.v4(1, 32)
			expectOK(s.fence(ctx, kept), "FenceClusterNetwork of "+kept[0])
			err = s.unfence(ctx, []string{kept[0], "198.51.100.0/33"})
			if err != nil {
				s.expectFenced(ctx, kept, "after a mixed UnfenceClusterNetwork answered "+codeName(err))
			}
			expectCode(err, "UnfenceClusterNetwork of valid+invalid", "InvalidArgument")
		})

		table(s, "CIDR-003", func(ctx context.Context, c looseCase) {
			s.needList()
			raw, canon := c(s)
			if strings.Contains(canon, ":") {
				s.needIPv6(ctx)
			}
			err := s.fence(ctx, []string{raw})
			if err != nil {
				expectCode(err, "FenceClusterNetwork of "+quote(raw), "InvalidArgument")
				s.expectNotFenced(ctx, []string{canon}, "after a rejected "+quote(raw))
				return
			}
			listed, lerr := s.observed(ctx)
			expectOK(lerr, "ListClusterFence")
			Expect(listed).To(ContainElement(canon), "%s was accepted but %s is not listed (listed: %v)", quote(raw), canon, s.ours(listed))
			Expect(listed).NotTo(ContainElement(raw), "%s was stored verbatim", quote(raw))
		}, looseEntries()...)

		table(s, "CIDR-004", func(ctx context.Context, c looseCase) {
			raw, _ := c(s)
			expectCode(s.fence(ctx, []string{raw}), "FenceClusterNetwork of "+quote(raw), "InvalidArgument")
		}, looseEntries()...)

		table(s, "CIDR-005", func(ctx context.Context, v6 bool) {
			s.needList()
			var raw, canon string
			if v6 {
				s.needIPv6(ctx)
				p := s.alloc.block(true, 64)
				raw, canon = netip.PrefixFrom(p.Addr().Next(), 64).String(), p.String()
			} else {
				if !s.wideBlockFree() {
					skipBecause("192.0.2.0/24 overlaps a fence that existed before the run")
				}
				raw, canon = "192.0.2.77/24", "192.0.2.0/24"
			}
			err := s.fence(ctx, []string{raw})
			mode := s.cfg.Profile.HostBits
			switch {
			case err != nil && mode != HostBitsNormalise:
				expectCode(err, "FenceClusterNetwork of "+raw, "InvalidArgument")
				s.expectNotFenced(ctx, []string{canon, raw}, "after a rejected "+raw)
				note("host bits: rejected")
			case err != nil:
				Fail("FenceClusterNetwork of " + raw + ": expected OK (profile hostBits=normalise), got " + codeName(err) + ": " + errMessage(err))
			case mode == HostBitsReject:
				Fail("FenceClusterNetwork of " + raw + ": expected INVALID_ARGUMENT (profile hostBits=reject), got OK")
			default:
				listed, lerr := s.observed(ctx)
				expectOK(lerr, "ListClusterFence")
				Expect(listed).To(ContainElement(canon), "%s was accepted but is not listed as %s (listed: %v)", raw, canon, s.ours(listed))
				Expect(listed).NotTo(ContainElement(raw), "%s was listed with its host bits", raw)
				note("host bits: normalised")
			}
		}, Entry("IPv4 192.0.2.77/24", false), Entry("IPv6 ::1/64 inside a /64", true))

		table(s, "CIDR-006", func(ctx context.Context, bits int) {
			s.needList()
			block := s.v4(1, bits)
			expectOK(s.fence(ctx, block), "FenceClusterNetwork of "+block[0])
			s.expectFenced(ctx, block, "after FenceClusterNetwork")
		}, Entry("/32", 32), Entry("/31", 31), Entry("/30", 30), Entry("/28", 28), Entry("/26", 26))

		s.it("CIDR-007", func(ctx context.Context) {
			s.needList()
			s.needIPv6(ctx)
			p := s.alloc.block(true, 64)
			compressed := p.String()
			expanded := expand(p)
			upper := strings.ToUpper(compressed)
			for _, form := range []string{compressed, expanded, upper} {
				expectOK(s.fence(ctx, []string{form}), "FenceClusterNetwork of "+form)
			}
			listed, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			Expect(countCanonical(listed, compressed)).To(Equal(1),
				"%s fenced as %s, %s and %s must be one fence (listed: %v)", compressed, compressed, expanded, upper, s.ours(listed))
			expectOK(s.unfence(ctx, []string{expanded}), "UnfenceClusterNetwork of "+expanded)
			s.expectNotFenced(ctx, []string{compressed}, "after unfencing the expanded form")
			host := s.v6(1, 128)
			expectOK(s.fence(ctx, host), "FenceClusterNetwork of "+host[0])
			s.expectFenced(ctx, host, "after FenceClusterNetwork")
		})

		s.it("CIDR-008", func(ctx context.Context) {
			s.needList()
			a := s.v4(1, 32)[0]
			expectOK(s.fence(ctx, []string{a, a}), "FenceClusterNetwork of "+a+" twice in one request")
			expectOK(s.fence(ctx, []string{a}), "FenceClusterNetwork of "+a+" again")
			listed, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			Expect(countCanonical(listed, a)).To(Equal(1), "%s is listed %d times", a, countCanonical(listed, a))
		})

		s.it("CIDR-009", func(ctx context.Context) {
			s.needList()
			outer := s.alloc.block(false, 28)
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
			if !s.cfg.Destructive {
				skipBecause("fencing prefixes outside the documentation ranges needs --destructive")
			}
			s.needList()
			wide := []string{"240.0.0.0/8", "240.0.0.0/4"}
			expectOK(s.fence(ctx, wide), "FenceClusterNetwork of reserved 240.0.0.0/8 and /4")
			s.expectFenced(ctx, wide, "after fencing wide prefixes")
		})
	})
}

// needList skips rules that observe state when ListClusterFence is optional
// and not implemented. When List failed at the start of the run, the rule
// fails under a required profile (LIST-001 names the failure) and is
// skipped under an optional one, with the reason.
func (s *State) needList() {
	if s.stateSource() == SourceObserve {
		return
	}
	if s.listMissing {
		notSupported("ListClusterFence is not implemented (profile listClusterFence: optional) and this rule observes state through it; give --observe-command to read the storage's fences instead")
	}
	if s.listErr != nil {
		if s.cfg.Profile.ListClusterFence == Optional {
			skipBecause("this rule observes state through ListClusterFence, which is broken (LIST-001): %v", s.listErr)
		}
		Fail("this rule observes state through ListClusterFence, which is broken (LIST-001): " + s.listErr.Error())
	}
}

// needIPv6 skips IPv6 rules when IPv6 is optional and the driver rejects it.
func (s *State) needIPv6(ctx context.Context) {
	if s.cfg.Profile.IPv6 == Required {
		return
	}
	probe := s.v6(1, 128)
	if err := s.fence(ctx, probe); codeName(err) == "InvalidArgument" {
		notSupported("the driver rejects IPv6 (profile ipv6: optional)")
	}
}

// expectFenced asserts that every block is listed (in canonical form).
func (s *State) expectFenced(ctx context.Context, blocks []string, when string) {
	GinkgoHelper()
	listed, err := s.observed(ctx)
	expectOK(err, "ListClusterFence "+when)
	got := canonicalAll(listed)
	for _, b := range blocks {
		Expect(got).To(ContainElement(canonical(b)), "%s: %s is not listed (listed: %v)", when, b, s.ours(listed))
	}
}

func countCanonical(listed []string, block string) int {
	n := 0
	for _, c := range canonicalAll(listed) {
		if c == canonical(block) {
			n++
		}
	}
	return n
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

func quote(s string) string {
	return "\"" + strings.NewReplacer("\t", `\t`, "\n", `\n`).Replace(s) + "\""
}
