package sanity

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/csi-addons/spec/lib/go/identity"
	. "github.com/onsi/ginkgo/v2"
)

// sentinelFence is fenced before the first spec and checked by EXPIRE-001.
type sentinelFence struct {
	block string
	at    time.Time
	err   error
}

// makeSentinel fences the sentinel block; called once the driver is ready.
func (s *State) makeSentinel(ctx context.Context) {
	defer func() {
		// The allocator skips (panics) when the pools are exhausted.
		if r := recover(); r != nil {
			s.sentinelFence.err = fmt.Errorf("no free block for the sentinel")
		}
	}()
	s.sentinelFence.block = s.alloc.block(false, 32).String()
	s.sentinelFence.at = time.Now()
	s.sentinelFence.err = s.fence(ctx, []string{s.sentinelFence.block})
}

func describeDurability(s *State) {
	Describe("Durability", func() {
		s.it("EXPIRE-001", func(ctx context.Context) {
			s.needList()
			if s.sentinelFence.block == "" {
				skipBecause("the sentinel fence was not made: %v", s.sentinelFence.err)
			}
			expectOK(s.sentinelFence.err, "FenceClusterNetwork of the sentinel "+s.sentinelFence.block+" at the start of the run")
			wait := time.Until(s.sentinelFence.at.Add(s.cfg.Hold.Duration))
			if wait > 0 {
				GinkgoWriter.Printf("holding %s so that the sentinel %s is %s old\n", wait.Round(time.Millisecond), s.sentinelFence.block, s.cfg.Hold.Duration)
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					Fail("the run ended during the hold: " + context.Cause(ctx).Error())
				}
			}
			s.expectFenced(ctx, []string{s.sentinelFence.block}, fmt.Sprintf("%s after the sentinel was fenced", time.Since(s.sentinelFence.at).Round(time.Millisecond)))
			note("sentinel %s still listed after %s", s.sentinelFence.block, time.Since(s.sentinelFence.at).Round(time.Millisecond))
		})
		s.it("RESTART-001", func(ctx context.Context) {
			if s.cfg.RestartCommand == "" {
				skipBecause("no --restart-command: give the command that restarts your driver (e.g. 'kubectl -n storage rollout restart deploy/csi-controller && kubectl -n storage rollout status deploy/csi-controller') to check fences survive a restart")
			}
			s.needList()
			kept := append(s.v4(2, 32), s.v4(1, 28)...)
			if s.cfg.Profile.IPv6 == Required {
				kept = append(kept, s.v6(1, 64)...)
			}
			gone := s.v4(1, 32)
			expectOK(s.fence(ctx, append(kept, gone...)), fmt.Sprintf("FenceClusterNetwork of %v", append(kept, gone...)))
			expectOK(s.unfence(ctx, gone), "UnfenceClusterNetwork of "+gone[0])
			s.restartDriver(ctx)
			s.expectFenced(ctx, kept, "after the driver restarted")
			s.expectNotFenced(ctx, gone, "after the driver restarted")
			if s.sentinelFence.err == nil && s.sentinelFence.block != "" {
				s.expectFenced(ctx, []string{s.sentinelFence.block}, "after the driver restarted (the sentinel fence made at the start)")
			}
		})

	})
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
		Fail(fmt.Sprintf("restart command failed: %v: %s", err, redact(strings.TrimSpace(out.String()))))
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
		last = fmt.Sprintf("%s: %s", codeName(err), errMessage(err))
		time.Sleep(100 * time.Millisecond)
	}
	Fail(fmt.Sprintf("the driver did not answer Probe ready within %s of the restart (last: %s)", s.cfg.ConnectTimeout.Duration, last))
}
