package sanity

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/rulebook"
)

// ENFORCE-001 looks past List: on a seeded sample of blocks of every width
// class it asks the enforce command (enforcecmd.go) to write from addresses
// inside and beside each block, before the Fence, right after the Fence is
// acknowledged, and after the Unfence. A driver whose List says what was
// asked but whose storage refuses something else (only a block's first
// address, the neighbouring block, nothing yet) fails it.

// enforceWidths are the width classes of the sample, per family: a host, a
// small, a medium and a wide block.
var enforceWidths = map[bool][]int{false: {32, 30, 27, 24}, true: {128, 120, 64, 48}}

// enforceStream keeps the sample's random draws apart from the other
// rules': the same seed gives the same sample whatever ran before.
const enforceStream = 0xe4f0

// probeParallel is how many writes the rule tries at once.
const probeParallel = 16

// retriesAllowed is how often an address that must be allowed is tried
// again when the command says refused: a write that landed where it must
// not is proof, a refused one may be the machine's load.
const retriesAllowed = 2

// writeProbe is one address of the sample and where it lies.
type writeProbe struct {
	addr   netip.Addr
	block  netip.Prefix
	inside bool
	where  string // "its first address", "just below it", ...
}

func (p writeProbe) String() string {
	rel := "inside"
	if !p.inside {
		rel = "outside"
	}
	return fmt.Sprintf("%s (%s %s, %s)", p.addr, rel, p.block, p.where)
}

func describeEnforcement(s *State) {
	Describe("Enforcement", func() {
		table(s, "ENFORCE-001", func(ctx context.Context, v6 bool) { s.checkEnforcement(ctx, v6) },
			Entry("IPv4", false), Entry("IPv6", true))
	})
}

// enforceSample takes the blocks of one family's sample and the addresses
// to write from: for each width class, a block placed at random in a parent
// four times its size, its first, last and a random address inside, the
// addresses just below and just above it and a random one in the rest of
// the parent outside it. The /24 of IPv4 is the whole 192.0.2.0/24, with
// a random address of a block of the pools outside it.
func (s *State) enforceSample(v6 bool) ([]netip.Prefix, []writeProbe) {
	stream := uint64(enforceStream)
	if v6 {
		stream++
	}
	rng := rand.New(rand.NewPCG(uint64(s.Seed), stream))
	var blocks []netip.Prefix
	var probes []writeProbe
	add := func(b netip.Prefix, inside bool, where string, a netip.Addr) {
		for _, p := range probes {
			if p.addr == a {
				return
			}
		}
		probes = append(probes, writeProbe{addr: a, block: b, inside: inside, where: where})
	}
	for _, w := range enforceWidths[v6] {
		var b netip.Prefix
		if !v6 && w == 24 {
			b = s.wideBlock()
			add(b, false, "in a block of the pools apart from it", randomIn(s.take(false, 28), rng))
		} else {
			parent := s.take(v6, w-2)
			q := 1 + rng.IntN(2) // the second or third quarter: both neighbours are in the parent
			quarter := func(i int) netip.Prefix {
				p := netip.PrefixFrom(parent.Addr(), w)
				for range i {
					p = netip.PrefixFrom(after(p), w)
				}
				return p
			}
			b = quarter(q)
			add(b, false, "just below it", lastAddr(quarter(q-1)))
			add(b, false, "just above it", quarter(q+1).Addr())
			add(b, false, "beside it in the same "+parent.String(), randomIn(quarter(3-3*(q-1)), rng))
		}
		blocks = append(blocks, b)
		add(b, true, "its first address", b.Addr())
		add(b, true, "its last address", lastAddr(b))
		add(b, true, "an address inside it", randomIn(b, rng))
	}
	return blocks, probes
}

// randomIn is a random address of p.
func randomIn(p netip.Prefix, rng *rand.Rand) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		if rng.IntN(2) == 1 {
			b[i/8] |= 1 << (7 - i%8)
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// checkEnforcement is ENFORCE-001 for one family.
func (s *State) checkEnforcement(ctx context.Context, v6 bool) {
	family := "IPv4"
	if v6 {
		family = "IPv6"
	}
	blocks, probes := s.enforceSample(v6)
	cidrs := make([]string, len(blocks))
	for i, b := range blocks {
		cidrs[i] = b.String()
	}
	// Before any fence every address must be writable: otherwise a refusal
	// later says nothing about the driver.
	before := s.tryWrites(ctx, probes, writeAllowed)
	if n := before.count(writeUntestable); n > 0 {
		if n < len(probes) {
			notRun("the enforce command answered untestable for %d of %d %s addresses (%s), so it cannot judge the family", n, len(probes), family, before.first(writeUntestable))
		}
		if family == "IPv6" && s.cfg.Profile.IPv6 == Optional {
			notSupported("the enforce command cannot write from IPv6 addresses (it answered untestable), and the profile makes IPv6 optional")
		}
		notRun("the enforce command cannot write from %s addresses (it answered untestable for %s)", family, before.first(writeUntestable))
	}
	if before.err != nil {
		notRun("%s", before.err)
	}
	if p, ok := before.firstWith(writeRefused); ok {
		notRun("before any fence of this rule, a write from %s was refused (a fence that existed before the run, or the command cannot write from there), so a refusal after the Fence would prove nothing", p)
	}

	err := s.fence(ctx, cidrs)
	settleCut(err)
	if err != nil {
		notRun("FenceClusterNetwork of the sample %v answered %s: %s (FENCE-008 judges the answer); nothing was probed", cidrs, codeSpec(err), errText(err))
	}
	acked := time.Now()
	fenced := s.tryWrites(ctx, probes, "")
	// events are what went wrong, with the Unfence among them, in time.
	type event struct {
		at   time.Time // when the write started
		what string
	}
	var events []event
	broken := 0
	for i, p := range probes {
		switch got := fenced.answers[i]; {
		case p.inside && got == writeAllowed:
			events = append(events, event{fenced.at[i], fmt.Sprintf("a write from %s was allowed", p)})
			broken++
		case !p.inside && got == writeRefused:
			events = append(events, event{fenced.at[i], fmt.Sprintf("a write from %s was refused (tried %d times)", p, 1+retriesAllowed)})
			broken++
		}
	}
	var inside []writeProbe
	for _, p := range probes {
		if p.inside {
			inside = append(inside, p)
		}
	}
	err = s.unfence(ctx, cidrs)
	settleCut(err)
	unfenced := time.Now()
	var after probeRound
	if err == nil {
		events = append(events, event{unfenced, "UnfenceClusterNetwork of the sample was acknowledged"})
		after = s.tryWrites(ctx, inside, writeAllowed)
		for i, p := range inside {
			if after.answers[i] == writeRefused {
				events = append(events, event{after.at[i], fmt.Sprintf("a write from %s was still refused (tried %d times)", p, 1+retriesAllowed)})
				broken++
			}
		}
	}
	if broken > 0 {
		slices.SortStableFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
		lines := make([]string, len(events))
		for i, v := range events {
			lines[i] = fmt.Sprintf("+%s %s", v.at.Sub(acked).Round(time.Millisecond), v.what)
		}
		failf("the storage did not enforce what the driver acknowledged; after FenceClusterNetwork of %s was acknowledged (+0s), in the order the writes started:\n  %s",
			strings.Join(cidrs, ", "), strings.Join(clipLines(lines, 14), "\n  "))
	}
	switch {
	case fenced.err != nil:
		notRun("%s", fenced.err)
	case err != nil:
		notRun("UnfenceClusterNetwork of the sample %v answered %s: %s (FENCE-008 judges the answer); the writes after it were not tried", cidrs, codeSpec(err), errText(err))
	case after.err != nil:
		notRun("%s", after.err)
	}
	note("%s: %d blocks (%s), %d addresses written from before the Fence, after it and (inside) after the Unfence", family, len(blocks), strings.Join(cidrs, ", "), len(probes))
}

// probeRound is the answers of one round of writes, in the probes' order,
// with when each write was started, and the first error of the command.
type probeRound struct {
	answers []writeAnswer
	at      []time.Time
	probes  []writeProbe
	err     error
}

func (r probeRound) count(a writeAnswer) int {
	n := 0
	for _, x := range r.answers {
		if x == a {
			n++
		}
	}
	return n
}

func (r probeRound) firstWith(a writeAnswer) (writeProbe, bool) {
	i := slices.Index(r.answers, a)
	if i < 0 {
		return writeProbe{}, false
	}
	return r.probes[i], true
}

func (r probeRound) first(a writeAnswer) string {
	p, _ := r.firstWith(a)
	return p.String()
}

// tryWrites runs the enforce command for every probe, probeParallel at a
// time. An address whose answer is refused where want says allowed is
// tried again, up to retriesAllowed times. The run's cut ends the case.
func (s *State) tryWrites(ctx context.Context, probes []writeProbe, want writeAnswer) probeRound {
	GinkgoHelper()
	if c := s.cut(); c != nil {
		rulebook.Cut(c.kind, "%s", c.why)
	}
	r := probeRound{answers: make([]writeAnswer, len(probes)), at: make([]time.Time, len(probes)), probes: probes}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, probeParallel)
	for i, p := range probes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			wantHere := want
			if wantHere == "" && !p.inside {
				wantHere = writeAllowed
			}
			var a writeAnswer
			var err error
			start := time.Now()
			for try := 0; try <= retriesAllowed; try++ {
				if a, err = s.tryWrite(ctx, p.addr); err != nil || a != writeRefused || wantHere != writeAllowed {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			r.answers[i], r.at[i] = a, start
			if err != nil && r.err == nil {
				r.err = err
			}
		}()
	}
	wg.Wait()
	return r
}

// clipLines keeps the first n lines and says how many more there were.
func clipLines(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(slices.Clone(lines[:n]), fmt.Sprintf("and %d more", len(lines)-n))
}
