package driver

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/backend/memory"
	"github.com/fenceproof/fenceproof/driver/fault"
)

// faultCase observes the one broken behaviour of a fault: broken reports
// whether it was seen. Each case runs with the fault (must be seen) and
// without it (must not be seen), so every fault provably changes behaviour
// and every probe can fail.
type faultCase struct {
	spec   string
	opts   Options
	broken func(t *testing.T, h *harness, o Options) bool
}

var (
	authOpts  = Options{Secrets: map[string]string{"key": "right-value"}}
	paramOpts = Options{RequiredParameters: []string{"clusterID"}}
)

func listed(t *testing.T, h *harness, want string) bool { return slices.Contains(h.list(t), want) }

func clientsOf(t *testing.T, h *harness) ([]*fence.ClientDetails, error) {
	resp, err := h.f.GetFenceClients(ctx(t), &fence.GetFenceClientsRequest{})
	return resp.GetClients(), err
}

var faultCases = []faultCase{
	{spec: "delay=Probe:300ms", broken: func(t *testing.T, h *harness, _ Options) bool {
		start := time.Now()
		h.id.Probe(ctx(t), &identity.ProbeRequest{})
		return time.Since(start) >= 300*time.Millisecond
	}},
	{spec: "code=List:INTERNAL", broken: func(t *testing.T, h *harness, _ Options) bool {
		_, err := h.f.ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{})
		return status.Code(err) == codes.Internal
	}},
	{spec: "accept-empty", broken: func(t *testing.T, h *harness, _ Options) bool { return h.fence(t) == nil }},
	{spec: "accept-malformed", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "300.1.1.1/32") == nil && listed(t, h, "300.1.1.1/32")
	}},
	{spec: "accept-bare-ip", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "192.0.2.1") == nil && listed(t, h, "192.0.2.1")
	}},
	{spec: "lenient-cidrs", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "192.0.2.1", " 192.0.2.2/32") == nil && listed(t, h, "192.0.2.1/32") && listed(t, h, "192.0.2.2/32")
	}},
	{spec: "partial-apply", broken: func(t *testing.T, h *harness, _ Options) bool {
		return status.Code(h.fence(t, "junk", "192.0.2.0/24")) == codes.InvalidArgument && listed(t, h, "192.0.2.0/24")
	}},
	{spec: "no-auth", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool { return h.fence(t, "192.0.2.0/24") == nil }},
	{spec: "wrong-auth-code", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool {
		return status.Code(h.fence(t, "192.0.2.0/24")) == codes.PermissionDenied
	}},
	{spec: "leak-secret", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool {
		_, err := h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Secrets: map[string]string{"key": "zzz-wrong"}, Cidrs: cidrs("192.0.2.0/24")})
		leaked := strings.Contains(status.Convert(err).Message(), "zzz-wrong")
		if strings.Contains(h.logs.String(), "zzz-wrong") {
			t.Error("secret value reached the log")
		}
		return leaked
	}},
	{spec: "ignore-params", opts: paramOpts, broken: func(t *testing.T, h *harness, _ Options) bool { return h.fence(t, "192.0.2.0/24") == nil }},
	{spec: "no-normalise", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "192.0.2.5/24") == nil && listed(t, h, "192.0.2.5/24")
	}},
	{spec: "reject-ipv6", broken: func(t *testing.T, h *harness, _ Options) bool {
		return status.Code(h.fence(t, "2001:db8::/32")) == codes.InvalidArgument
	}},
	{spec: "no-dedupe", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24", "192.0.2.0/24")
		return len(h.list(t)) == 2
	}},
	{spec: "first-only", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24", "198.51.100.0/24")
		return !listed(t, h, "198.51.100.0/24")
	}},
	{spec: "drop-list", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "198.51.100.0/24")
		h.fence(t, "192.0.2.0/24")
		return !listed(t, h, "192.0.2.0/24") && listed(t, h, "198.51.100.0/24")
	}},
	{spec: "unfence-noop", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24")
		return h.unfence(t, "192.0.2.0/24") == nil && listed(t, h, "192.0.2.0/24")
	}},
	{spec: "unfence-overlap", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24", "192.0.2.0/25")
		h.unfence(t, "192.0.2.0/25")
		return !listed(t, h, "192.0.2.0/24")
	}},
	{spec: "not-idempotent", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24")
		return status.Code(h.fence(t, "192.0.2.0/24")) == codes.AlreadyExists &&
			status.Code(h.unfence(t, "203.0.113.0/24")) == codes.NotFound
	}},
	{spec: "race", broken: func(t *testing.T, h *harness, _ Options) bool {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() { defer wg.Done(); h.fence(t, fmt.Sprintf("10.0.%d.0/24", i)) }()
		}
		wg.Wait()
		return len(h.list(t)) < 20
	}},
	{spec: "internal-on-contention", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.d.mu.Lock()
		c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := h.f.FenceClusterNetwork(c, &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.0/24")})
		h.d.mu.Unlock()
		return status.Code(err) == codes.Internal
	}},
	{spec: "no-fence-capability", broken: func(t *testing.T, h *harness, _ Options) bool {
		return !slices.Contains(capabilities(t, h), "fence:NETWORK_FENCE")
	}},
	{spec: "get-clients-unimplemented", broken: func(t *testing.T, h *harness, _ Options) bool {
		_, err := clientsOf(t, h)
		return status.Code(err) == codes.Unimplemented && slices.Contains(capabilities(t, h), "fence:GET_CLIENTS_TO_FENCE")
	}},
	{spec: "clients-unstable", broken: func(t *testing.T, h *harness, _ Options) bool {
		a, _ := clientsOf(t, h)
		b, _ := clientsOf(t, h)
		return a[0].GetId() != b[0].GetId()
	}},
	{spec: "clients-bad-address", broken: func(t *testing.T, h *harness, _ Options) bool {
		cs, _ := clientsOf(t, h)
		_, err := netip.ParsePrefix(cs[0].GetAddresses()[0].GetCidr())
		return err != nil && strings.HasSuffix(cs[0].GetAddresses()[0].GetCidr(), ":6789")
	}},
	{spec: "clients-empty-id", broken: func(t *testing.T, h *harness, _ Options) bool {
		cs, _ := clientsOf(t, h)
		return slices.ContainsFunc(cs, func(c *fence.ClientDetails) bool { return c.GetId() == "" })
	}},
	{spec: "clients-mutate", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24")
		clientsOf(t, h)
		return len(h.list(t)) == 0
	}},
	{spec: "empty-identity", broken: func(t *testing.T, h *harness, _ Options) bool {
		id, _ := h.id.GetIdentity(ctx(t), &identity.GetIdentityRequest{})
		return id.GetName() == ""
	}},
	{spec: "probe-not-ready", broken: func(t *testing.T, h *harness, _ Options) bool {
		p, _ := h.id.Probe(ctx(t), &identity.ProbeRequest{})
		return !p.GetReady().GetValue()
	}},
	{spec: "list-unimplemented", broken: func(t *testing.T, h *harness, _ Options) bool {
		_, err := h.f.ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{})
		return status.Code(err) == codes.Unimplemented
	}},
	{spec: "reject-host-bits", broken: func(t *testing.T, h *harness, _ Options) bool {
		return status.Code(h.fence(t, "192.0.2.5/24")) == codes.InvalidArgument
	}},
	{spec: "forget-on-restart", broken: func(t *testing.T, h *harness, o Options) bool {
		h.fence(t, "192.0.2.0/24")
		h.d.Stop()
		return len(start(t, o).list(t)) == 0
	}},
	{spec: "ack-before-enforce=1h", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24")
		applied, _ := h.d.backend.(*memory.Backend).Applied()
		return !slices.Contains(applied, netip.MustParsePrefix("192.0.2.0/24"))
	}},
	// Listed as asked, enforced as something else.
	{spec: "enforce-first-address", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24")
		applied, _ := h.d.backend.(*memory.Backend).Applied()
		return listed(t, h, "192.0.2.0/24") && slices.Equal(applied, []netip.Prefix{netip.MustParsePrefix("192.0.2.0/32")})
	}},
	{spec: "enforce-neighbour", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/25")
		applied, _ := h.d.backend.(*memory.Backend).Applied()
		return listed(t, h, "192.0.2.0/25") && slices.Equal(applied, []netip.Prefix{netip.MustParsePrefix("192.0.2.128/25")})
	}},

	// Faults of the list, capacity, expiry and spelling rules.
	{spec: "list-storage-native", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.7/32")
		return !listed(t, h, "192.0.2.7/32")
	}},
	{spec: "silent-capacity", broken: func(t *testing.T, h *harness, _ Options) bool {
		var b []string
		for i := range fault.CapacityLimit + 1 {
			b = append(b, fmt.Sprintf("2001:db8::%x/128", i))
		}
		return h.fence(t, b...) == nil && len(h.list(t)) == fault.CapacityLimit
	}},
	{spec: "expire-fences", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.7/32")
		time.Sleep(fault.ExpiryAfter + 100*time.Millisecond)
		return !listed(t, h, "192.0.2.7/32")
	}},
	{spec: "unfence-verbatim", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24")
		return h.unfence(t, "192.0.2.9/24") == nil && listed(t, h, "192.0.2.0/24")
	}},
	{spec: "keep-mapped", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "::ffff:192.0.2.1/128") == nil && listed(t, h, "::ffff:192.0.2.1/128")
	}},
	{spec: "auth-fence-only", opts: Options{Secrets: map[string]string{"k": "v"}}, broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.unfence(t, "192.0.2.1/32") == nil
	}},
	{spec: "concurrent-dup", broken: func(t *testing.T, h *harness, _ Options) bool {
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() { defer wg.Done(); _ = h.fence(t, "192.0.2.7/32") }()
		}
		wg.Wait()
		return len(h.list(t)) > 1
	}},
	{spec: "unfence-neighbour", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.1/32", "192.0.2.2/32")
		h.unfence(t, "192.0.2.1/32")
		return !listed(t, h, "192.0.2.2/32")
	}},
	{spec: "reject-ipv4-31", broken: func(t *testing.T, h *harness, _ Options) bool { return h.fence(t, "192.0.2.0/31") != nil }},
	{spec: "fail-wide-ipv6", broken: func(t *testing.T, h *harness, _ Options) bool { return h.fence(t, "2001:db8::/64") != nil }},
	{spec: "ignore-param-values", opts: Options{RequiredParameters: []string{"clusterID=c1"}}, broken: func(t *testing.T, h *harness, _ Options) bool {
		_, err := h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.1/32"), Parameters: map[string]string{"clusterID": "other"}})
		return err == nil
	}},
	{spec: "mixed-first-family", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.1/32", "2001:db8::1/128")
		return !listed(t, h, "2001:db8::1/128")
	}},
}

// TestAckBeforeEnforceEnforcesLate pins the fault's second half: the fence is
// acknowledged unenforced and enforced after the delay, with the set stored
// by then (a later Unfence is not undone).
func TestAckBeforeEnforceEnforcesLate(t *testing.T) {
	h := start(t, Options{Faults: []string{"ack-before-enforce=300ms"}})
	mem := h.d.backend.(*memory.Backend)
	if err := h.fence(t, "192.0.2.0/24"); err != nil {
		t.Fatal(err)
	}
	if applied, _ := mem.Applied(); len(applied) != 0 {
		t.Fatalf("enforced at once: %v", applied)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		applied, _ := mem.Applied()
		if slices.Equal(applied, []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never enforced: %v", applied)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFaultsChangeBehaviour(t *testing.T) {
	covered := map[string]bool{}
	for _, fc := range faultCases {
		name, _, _ := strings.Cut(fc.spec, "=")
		covered[name] = true
		t.Run(fc.spec, func(t *testing.T) {
			for _, withFault := range []bool{true, false} {
				o := fc.opts
				o.StatePath = filepath.Join(t.TempDir(), "state.db")
				if withFault {
					o.Faults = []string{fc.spec}
				}
				h := start(t, o)
				if got := fc.broken(t, h, o); got != withFault {
					t.Errorf("fault active=%v: broken behaviour observed=%v", withFault, got)
				}
			}
		})
	}
	for _, n := range fault.Names() {
		if !covered[n] {
			t.Errorf("fault %q has no behaviour test", n)
		}
	}
}
