package driver

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/fault"
)

// The hooks of the second-generation faults (fault.Set, from ListStorageNative
// on). Each is a no-op unless its fault is set, so that fence.go and
// validate.go call them in one line each.

// faultState is what those faults remember between calls.
type faultState struct {
	born     sync.Map     // expire-fences: key -> time.Time it was fenced
	inflight atomic.Int32 // concurrent-dup: Fence calls in flight
}

// concurrentDupWindow widens the window in which concurrent Fence calls see
// each other under the concurrent-dup fault.
const concurrentDupWindow = 30 * time.Millisecond

// enterFence counts a Fence call in flight and reports whether, under
// concurrent-dup, it should store a duplicate. The returned func leaves.
func (d *Driver) enterFence() (dup bool, leave func()) {
	if !d.faults.ConcurrentDup {
		return false, func() {}
	}
	n := d.extra.inflight.Add(1)
	time.Sleep(concurrentDupWindow)
	return n > 1 || d.extra.inflight.Load() > 1, func() { d.extra.inflight.Add(-1) }
}

// shapeFenceKeys applies fail-wide-ipv6 and mixed-first-family to the
// keys of a Fence (or Unfence, for fail-wide-ipv6) request.
func (d *Driver) shapeFenceKeys(keys []string, fencing bool) ([]string, error) {
	if d.faults.FailWideIPv6 {
		for _, k := range keys {
			if p, err := netip.ParsePrefix(k); err == nil && p.Addr().Is6() && p.Bits() < fault.WideIPv6Bits {
				return nil, status.Errorf(codes.Internal, "expanding %s into addresses: out of memory", k)
			}
		}
	}
	if fencing && d.faults.MixedFirstFamily && len(keys) > 1 {
		first, err := netip.ParsePrefix(keys[0])
		if err == nil {
			keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool {
				p, err := netip.ParsePrefix(k)
				return err == nil && p.Addr().Is4() != first.Addr().Is4()
			})
		}
	}
	return keys, nil
}

// overCapacity reports whether silent-capacity drops a new fence.
func (d *Driver) overCapacity(t *txn) bool {
	return d.faults.SilentCapacity && len(t.keys()) >= fault.CapacityLimit
}

// fenced records when a new fence was made, for expire-fences.
func (d *Driver) fenced(k string) {
	if d.faults.ExpireFences {
		d.extra.born.Store(k, time.Now())
	}
}

// expired reports whether expire-fences has let the fence lapse.
func (d *Driver) expired(k string) bool {
	if !d.faults.ExpireFences {
		return false
	}
	t, ok := d.extra.born.Load(k)
	return ok && time.Since(t.(time.Time)) > fault.ExpiryAfter
}

// listSpelling is how List spells a stored key: as given, or under
// list-storage-native as a storage blocklist entry.
func (d *Driver) listSpelling(k string) string {
	if !d.faults.ListStorageNative {
		return k
	}
	p, err := netip.ParsePrefix(k)
	if err != nil {
		return k
	}
	return fmt.Sprintf("%s/%d", netip.AddrPortFrom(p.Addr(), 0), 3710375+p.Bits())
}

// unfenceKeys are the keys Unfence removes: the normalised ones, or under
// unfence-verbatim the strings as given.
func (d *Driver) unfenceKeys(keys []string, cidrs []*fence.CIDR) []string {
	if !d.faults.UnfenceVerbatim {
		return keys
	}
	out := make([]string, len(cidrs))
	for i, c := range cidrs {
		out[i] = c.GetCidr()
	}
	return out
}

// removeNeighbour, under unfence-neighbour, also deletes the fence listed
// right after k.
func (d *Driver) removeNeighbour(t *txn, k string) {
	if !d.faults.UnfenceNeighbour {
		return
	}
	keys := t.keys()
	slices.Sort(keys)
	if i := slices.Index(keys, k); i >= 0 && i+1 < len(keys) {
		t.remove(keys[i+1])
	}
}

// extraCIDRCheck is the per-element check of reject-ipv4-31.
func (d *Driver) extraCIDRCheck(p netip.Prefix) error {
	if d.faults.RejectSlash31 && p.Addr().Is4() && p.Bits() == 31 {
		return fmt.Errorf("/31 is not a valid IPv4 network")
	}
	return nil
}

// keepMapped, under keep-mapped, undoes the unmapping of an IPv4-mapped IPv6
// block: it is acknowledged and enforced as IPv6, where no IPv4 packet
// matches it (the faithful driver fences the IPv4 block it names).
func (d *Driver) keepMapped(v string, p netip.Prefix) netip.Prefix {
	if !d.faults.KeepMapped {
		return p
	}
	if raw, err := netip.ParsePrefix(v); err == nil && raw.Addr().Is4In6() && raw.Bits() >= 96 {
		return raw.Masked()
	}
	return p
}

// authSkipped reports whether auth-fence-only lets a request through unchecked.
func (d *Driver) authSkipped(r request) bool {
	_, isFence := r.(*fence.FenceClusterNetworkRequest)
	return d.faults.AuthFenceOnly && !isFence
}

// checkParam checks one required parameter: "key" must be present and
// non-empty; "key=value" must also carry exactly that value (unless
// ignore-param-values), as a clusterID names one cluster.
func (d *Driver) checkParam(r request, spec string) error {
	key, want, hasValue := strings.Cut(spec, "=")
	got := r.GetParameters()[key]
	if got == "" {
		return d.fail(r, codes.InvalidArgument, "missing required parameter %q", key)
	}
	if hasValue && got != want && !d.faults.IgnoreParamValues {
		return d.fail(r, codes.InvalidArgument, "parameter %q names nothing this driver serves", key)
	}
	return nil
}
