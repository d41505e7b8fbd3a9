package driver

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/fault"
)

// The behaviour tests of the faults of the defect classes the conformance
// suite checks by construction: blocks that are not independent or not the
// width asked (fault/blocks.go), credentials and parameters looked up or
// compared too loosely (fault/credentials.go), capacity per family,
// persistence, a partial List, client addresses and cancellation.
func init() { faultCases = append(faultCases, classCases...) }

// withParam fences 192.0.2.1/32 sending parameters p.
func withParam(t *testing.T, h *harness, p map[string]string) error {
	_, err := h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.1/32"), Parameters: p})
	return err
}

// withSecrets fences 192.0.2.1/32 sending secrets s.
func withSecrets(t *testing.T, h *harness, s map[string]string) error {
	_, err := h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.1/32"), Secrets: s})
	return err
}

var valueParam = Options{RequiredParameters: []string{"clusterID=c1"}}

var classCases = []faultCase{
	{spec: "unfence-lifts-around", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24", "192.0.2.0/28")
		return h.unfence(t, "192.0.2.0/30") == nil && !listed(t, h, "192.0.2.0/28") && listed(t, h, "192.0.2.0/24")
	}},
	{spec: "fence-replaces-inside", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/28")
		return h.fence(t, "192.0.2.0/24") == nil && !listed(t, h, "192.0.2.0/28")
	}},
	{spec: "fence-absorbed", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24")
		return h.fence(t, "192.0.2.16/28") == nil && !listed(t, h, "192.0.2.16/28")
	}},
	{spec: "one-fence-per-address", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.0/24")
		return h.fence(t, "192.0.2.0/25") == nil && !listed(t, h, "192.0.2.0/24")
	}},
	{spec: "ipv6-wide-as-64", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "3fff:100::/48") == nil && listed(t, h, "3fff:100::/64")
	}},
	{spec: "ipv6-nibble", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "2001:db8::/63") == nil && listed(t, h, "2001:db8::/64")
	}},
	{spec: "keep-mapped-wide", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "::ffff:192.0.2.0/120") == nil && !listed(t, h, "192.0.2.0/24")
	}},
	{spec: "unmap-keeps-length", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "::ffff:192.0.2.0/120") == nil && listed(t, h, "192.0.2.0/32")
	}},
	{spec: "auth-any-key", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool {
		return withSecrets(t, h, map[string]string{"other": "right-value"}) == nil
	}},
	{spec: "auth-key-fold-case", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool {
		return withSecrets(t, h, map[string]string{"KEY": "right-value"}) == nil
	}},
	{spec: "auth-trim", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool {
		return withSecrets(t, h, map[string]string{"key": "right-value\n"}) == nil
	}},
	{spec: "param-fold-case", opts: valueParam, broken: func(t *testing.T, h *harness, _ Options) bool {
		return withParam(t, h, map[string]string{"clusterID": "C1"}) == nil
	}},
	{spec: "param-trim", opts: valueParam, broken: func(t *testing.T, h *harness, _ Options) bool {
		return withParam(t, h, map[string]string{"clusterID": " c1"}) == nil
	}},
	{spec: "param-prefix", opts: Options{RequiredParameters: []string{"clusterID=c12"}}, broken: func(t *testing.T, h *harness, _ Options) bool {
		return withParam(t, h, map[string]string{"clusterID": "c1"}) == nil
	}},
	{spec: "param-any-key", opts: valueParam, broken: func(t *testing.T, h *harness, _ Options) bool {
		return withParam(t, h, map[string]string{"cluster": "c1"}) == nil
	}},
	{spec: "leak-near-miss", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool {
		err := withSecrets(t, h, map[string]string{"key": "right-valuX"})
		return strings.Contains(status.Convert(err).Message(), "right-value")
	}},
	{spec: "capacity=IPv4:2", broken: func(t *testing.T, h *harness, _ Options) bool {
		err := h.fence(t, "192.0.2.1/32", "192.0.2.2/32", "192.0.2.3/32", "2001:db8::1/128", "2001:db8::2/128", "2001:db8::3/128")
		return err == nil && !listed(t, h, "192.0.2.3/32") && listed(t, h, "2001:db8::3/128")
	}},
	{spec: "persist-first=1", broken: func(t *testing.T, h *harness, o Options) bool {
		h.fence(t, "192.0.2.1/32")
		h.fence(t, "192.0.2.2/32")
		h.d.Stop()
		after := start(t, o).list(t)
		return slices.Equal(after, []string{"192.0.2.1/32"})
	}},
	{spec: "expire-fences=200ms", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.7/32")
		time.Sleep(300 * time.Millisecond)
		return !listed(t, h, "192.0.2.7/32")
	}},
	{spec: "rebuild-partial", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.1/32", "192.0.2.2/32")
		for deadline := time.Now().Add(2 * fault.RebuildEvery); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if len(h.list(t)) < 2 {
				return true
			}
		}
		return false
	}},
	{spec: "clients-mapped", broken: func(t *testing.T, h *harness, _ Options) bool {
		cl, err := clientsOf(t, h)
		return err == nil && cl[0].GetAddresses()[0].GetCidr() == "::ffff:192.0.2.200/128" && status.Code(h.fence(t, "::ffff:192.0.2.9/128")) == codes.InvalidArgument
	}},
	{spec: "clients-ipv6", broken: func(t *testing.T, h *harness, _ Options) bool {
		cl, err := clientsOf(t, h)
		return err == nil && len(cl[0].GetAddresses()) == 2
	}},
	{spec: "ignore-cancel", broken: func(t *testing.T, h *harness, _ Options) bool {
		// A request of 64 blocks whose client gave up goes on, block by
		// block (the faithful driver drops it).
		var bs []string
		for i := range 64 {
			bs = append(bs, fmt.Sprintf("2001:db8::%x/128", i))
		}
		_, _ = (&fenceServer{d: h.d}).FenceClusterNetwork(gaveUp(), &fence.FenceClusterNetworkRequest{Cidrs: cidrs(bs...)})
		time.Sleep(200 * time.Millisecond)
		return listed(t, h, bs[63])
	}},
}
