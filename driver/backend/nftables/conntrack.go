//go:build linux

package nftables

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"syscall"
	"time"

	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// Conntrack: the entries of fenced sources are deleted (in the background,
// batched) so that GetFenceClients stops reporting them; Peers lists the
// established ones.

// srcFilter matches conntrack flows whose original source is fenced and not
// protected; both lists are merged (cidr.Merge), so a match costs
// O(log ranges) per flow.
type srcFilter struct{ fenced, protected []cidr.Range }

func (f srcFilter) MatchConntrackFlow(flow *vnl.ConntrackFlow) bool {
	a, ok := netip.AddrFromSlice(flow.Forward.SrcIP)
	return ok && cidr.Covers(f.fenced, a.Unmap()) && !cidr.Covers(f.protected, a.Unmap())
}

// forget deletes the conntrack entries whose source is in ranges.
func (b *Backend) forget(ranges []cidr.Range) error {
	b.ctMu.Lock()
	defer b.ctMu.Unlock()
	var errs error
	f := srcFilter{fenced: cidr.Merge(slices.Clone(ranges)), protected: cidr.Union(b.protect)}
	for _, fam := range []vnl.InetFamily{unix.AF_INET, unix.AF_INET6} {
		if _, err := b.ct.ConntrackDeleteFilters(vnl.ConntrackTable, fam, f); err != nil && !errors.Is(err, vnl.ErrDumpInterrupted) {
			errs = errors.Join(errs, err)
		}
	}
	return errs
}

// forgetRest and maxForgetRest bound the CPU the background conntrack
// cleanup takes: after a pass that took t the forgetter rests
// min(forgetRest*t, maxForgetRest) before the next, so it uses at most
// 1/(1+forgetRest) of a core however fast fences arrive, and the ranges
// fenced meanwhile share the next pass.
const (
	forgetRest    = 9
	maxForgetRest = time.Second
)

// startForgetter deletes the conntrack entries of newly fenced sources in
// the background: the drop rules already stop every packet when Change
// returns, and a conntrack dump walks the kernel's whole conntrack hash
// table (every namespace's buckets: milliseconds even when this namespace
// has no entry), so it is kept off the RPC path and batched (see
// forgetRest). Under 50 concurrent clients one dump per Change took most
// of a core. Peers and Close flush what is pending first.
func (b *Backend) startForgetter() {
	b.forgetKick, b.stopForget, b.forgetDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(b.forgetDone)
		for {
			select {
			case <-b.stopForget:
				return
			case <-b.forgetKick:
			}
			start := time.Now()
			if !b.flushForget() {
				continue
			}
			rest := time.NewTimer(min(forgetRest*time.Since(start), maxForgetRest))
			select {
			case <-b.stopForget:
				rest.Stop()
				return
			case <-rest.C:
			}
		}
	}()
}

func (b *Backend) queueForget(rs []cidr.Range) {
	b.forgetMu.Lock()
	b.pending = append(b.pending, rs...)
	b.forgetMu.Unlock()
	select {
	case b.forgetKick <- struct{}{}:
	default:
	}
}

// flushForget deletes the conntrack entries of the pending ranges; it
// reports whether there were any.
func (b *Backend) flushForget() bool {
	b.forgetMu.Lock()
	rs := b.pending
	b.pending = nil
	b.forgetMu.Unlock()
	if len(rs) == 0 {
		return false
	}
	if err := b.forget(rs); err != nil {
		b.log.Warn("fences applied, but deleting conntrack entries of fenced sources failed", "err", err)
	}
	return true
}

// tcpEstablished is TCP_CONNTRACK_ESTABLISHED.
const tcpEstablished = 3

// Peers returns the original sources of ESTABLISHED TCP conntrack entries
// whose original destination port is one of ports.
func (b *Backend) Peers(_ context.Context, ports []uint16) ([]netip.Addr, error) {
	b.flushForget() // a fenced peer must not be reported
	b.ctMu.Lock()
	defer b.ctMu.Unlock()
	var out []netip.Addr
	for _, fam := range []vnl.InetFamily{unix.AF_INET, unix.AF_INET6} {
		flows, err := b.ct.ConntrackTableList(vnl.ConntrackTable, fam)
		if err != nil && !errors.Is(err, vnl.ErrDumpInterrupted) {
			return nil, fmt.Errorf("list conntrack: %w", err)
		}
		for _, f := range flows {
			tcp, ok := f.ProtoInfo.(*vnl.ProtoInfoTCP)
			if f.Forward.Protocol != syscall.IPPROTO_TCP || !ok || tcp.State != tcpEstablished || !slices.Contains(ports, f.Forward.DstPort) {
				continue
			}
			if a, ok := netip.AddrFromSlice(f.Forward.SrcIP); ok {
				out = append(out, a.Unmap())
			}
		}
	}
	return out, nil
}

// WaitIdle returns once no conntrack deletion is pending or running; for
// benchmarks, so that one change's background pass is not billed to the
// next measurement.
func (b *Backend) WaitIdle() {
	b.flushForget()
	b.ctMu.Lock() // a pass in progress holds it
	b.ctMu.Unlock()
}
