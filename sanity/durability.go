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
// It returns how long the Fence took.
func (s *State) makeSentinel(ctx context.Context) time.Duration {
	b, err := s.alloc.block(false, 32)
	if err != nil {
		s.sentinelFence.err = err
		return 0
	}
	s.sentinelFence.block = b.String()
	s.sentinelFence.at = time.Now()
	s.sentinelFence.err = s.fence(ctx, []string{s.sentinelFence.block})
	return time.Since(s.sentinelFence.at)
}

// ExpiryMinimum is the default hold (--hold): the sentinel fence made at the
// start of the run is at least this old when EXPIRE-001 last reads it, even
// when the run is short, so that a driver whose fences lapse within a CI run
// fails.
const ExpiryMinimum = 15 * time.Second

func describeDurability(s *State) {
	Describe("Durability", func() {
		s.it("EXPIRE-001", func(ctx context.Context) {
			s.needState()
			if s.sentinelFence.block == "" {
				notRun("the sentinel fence could not be made: %v", s.sentinelFence.err)
			}
			expectOK(s.sentinelFence.err, "FenceClusterNetwork of the sentinel "+s.sentinelFence.block+" at the start of the run")
			hold := s.cfg.Hold.Duration
			if wait := time.Until(s.sentinelFence.at.Add(hold)); wait > 0 {
				if wait > s.left() {
					s.cutNow(fmt.Sprintf("the sentinel must be %s old (--hold), which needs %s more, and the run's time budget leaves %s", hold, wait.Round(time.Millisecond), max(s.left(), 0).Round(time.Millisecond)))
				}
				GinkgoWriter.Printf("holding %s so that the sentinel %s is %s old\n", wait.Round(time.Millisecond), s.sentinelFence.block, hold)
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return
				}
			}
			age := time.Since(s.sentinelFence.at).Round(time.Millisecond)
			s.expectFenced(ctx, []string{s.sentinelFence.block}, fmt.Sprintf("%s after the sentinel was fenced", age))
			if hold < ExpiryMinimum {
				note("sentinel %s still listed at age %s (--hold %s, below the default %s: a fence that lapses later is not caught)", s.sentinelFence.block, age, hold, ExpiryMinimum)
			} else {
				note("sentinel %s still listed at age %s (--hold %s)", s.sentinelFence.block, age, hold)
			}
		})
		s.it("RESTART-001", func(ctx context.Context) {
			s.needState()
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
