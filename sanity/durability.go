package sanity

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/csi-addons/spec/lib/go/identity"
	. "github.com/onsi/ginkgo/v2"

	"github.com/fenceproof/fenceproof/sanity/fencemodel"
)

func describeDurability(s *State) {
	Describe("Durability", func() {
		s.it("RESTART-001", func(ctx context.Context) {
			s.checkRestart(ctx)
		})
	})
}

// restartFences is how many fences RESTART-001 holds across the restart.
const restartFences = 300

// checkRestart is RESTART-001: hundreds of fences of both families and
// several widths, and some unfenced again, are in force when the driver
// restarts; after it every acknowledged fence is listed and every
// acknowledged unfence holds, and Unfences after it lift what they name
// and nothing else.
func (s *State) checkRestart(ctx context.Context) {
	GinkgoHelper()
	s.needState()
	var blocks []string
	add := func(ps []string) { blocks = append(blocks, ps...) }
	add(s.v4(restartFences/2-14, 32))
	add(s.v4(4, 28))
	if s.cfg.Profile.IPv6 == Required {
		add(s.v6(restartFences/2-20, 128))
		add(s.v6(10, 64))
		for range 4 {
			if p, ok := s.alloc.region(true, 48); ok {
				add([]string{p.String()})
			}
		}
	}
	gone := append(s.v4(5, 32), s.v6(5, 128)...)
	if s.cfg.Profile.IPv6 != Required {
		gone = gone[:5]
	}
	m := fencemodel.New(s.modelHostBits())
	apply := func(rpc fencemodel.RPC, bs []string) {
		for len(bs) > 0 {
			part := bs[:min(len(bs), s.requestSize())]
			bs = bs[len(part):]
			if err := m.Apply(rpc, part, s.send(ctx, rpc, part)); err != nil {
				failf("%s of %d blocks (%s to %s): %s", rpc, len(part), part[0], part[len(part)-1], err)
			}
		}
	}
	apply(fencemodel.Fence, append(slices.Clone(blocks), gone...))
	apply(fencemodel.Unfence, gone)
	all := append(slices.Clone(blocks), gone...)
	ours := func(p netip.Prefix) bool {
		for _, b := range all {
			if q, ok := blockOf(b); ok && q.Overlaps(p) {
				return true
			}
		}
		return false
	}
	// What a restart must keep is what was listed before it: a block the
	// driver lists otherwise all along is another rule's to judge.
	before := s.readFences(ctx, "before the driver restarts")
	s.claimMade(before, all)
	s.restartDriver(ctx)
	v := s.readFences(ctx, "after the driver restarted")
	for _, b := range s.sentinels.blocks {
		if !v.has(b) {
			s.sentinels.lostAtRestart = append(s.sentinels.lostAtRestart, b)
		}
	}
	lost, back := setDiff(before.raw, v.raw, s.lateBlocks())
	lost, back = slices.DeleteFunc(lost, notOurs(ours)), slices.DeleteFunc(back, notOurs(ours))
	check(len(lost)+len(back) == 0, "the driver restarted with %d fences in force (and %d unfenced before it): %d listed before the restart are gone after it (%s), %d not listed before it are listed after it (%s)",
		len(blocks), len(gone), len(lost), showFew(lost), len(back), showFew(back))
	check(len(s.sentinels.lostAtRestart) == 0, "after the driver restarted, the sentinels %s fenced at the start of the run are not listed", strings.Join(s.sentinels.lostAtRestart, ", "))
	var lift []string
	for i := 0; i < len(blocks); i += 2 {
		lift = append(lift, blocks[i])
	}
	apply(fencemodel.Unfence, lift)
	after := s.readFences(ctx, "after the Unfences that followed the restart")
	var still, missing []string
	for _, b := range blocks {
		switch {
		case slices.Contains(lift, b) && after.has(b):
			still = append(still, b)
		case !slices.Contains(lift, b) && before.has(b) && !after.has(b):
			missing = append(missing, b)
		}
	}
	check(len(still)+len(missing) == 0, "after the restart, Unfences of %d of the %d fences (every other one): %d are still listed (%s), %d of the others are gone (%s)",
		len(lift), len(blocks), len(still), showFew(still), len(missing), showFew(missing))
	note("%d fences of both families held across a restart (%d unfenced before it); %d lifted after it", len(blocks), len(gone), len(lift))
}

// notOurs is the filter that keeps the listed strings in the rule's blocks.
func notOurs(ours func(netip.Prefix) bool) func(string) bool {
	return func(c string) bool { p, ok := blockOf(c); return !ok || !ours(p) }
}

// restartDriver runs the restart command, then waits until Probe answers
// ready (the connection reconnects by itself; its backoff is reset so the
// wait is not stretched by it).
func (s *State) restartDriver(ctx context.Context) {
	GinkgoHelper()
	rctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout.Duration+s.cfg.RPCTimeout.Duration)
	defer cancel()
	cmd := exec.CommandContext(rctx, "sh", "-c", s.cfg.RestartCommand)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		failf("the restart command failed: %v: %s", err, show(strings.TrimSpace(out.String())))
	}
	deadline := time.Now().Add(s.cfg.ConnectTimeout.Duration)
	var last string
	for time.Now().Before(deadline) {
		s.conn.ResetConnectBackoff()
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		r, err := s.id.Probe(pctx, &identity.ProbeRequest{})
		pcancel()
		if err == nil && (r.GetReady() == nil || r.GetReady().GetValue()) {
			return
		}
		last = fmt.Sprintf("%s: %s", codeSpec(err), errText(err))
		time.Sleep(100 * time.Millisecond)
	}
	failf("the driver did not answer Probe ready within %s of the restart (last: %s)", s.cfg.ConnectTimeout.Duration, last)
}
