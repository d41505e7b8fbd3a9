package driver

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"

	"github.com/fenceproof/fenceproof/driver/fault"
)

// The behaviour tests of the faults that check credentials with too little
// care (fault/credentials.go) and of those that misreport what is fenced or
// apply late work (fault/fenced.go).
func init() { faultCases = append(faultCases, credentialCases...) }

// withSecret fences 192.0.2.1/32 sending secret "key" = v.
func withSecret(t *testing.T, h *harness, v string) error {
	_, err := h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.1/32"), Secrets: map[string]string{"key": v}})
	return err
}

// gaveUp is the context of a client that gave up before the driver got to
// its request.
func gaveUp() context.Context {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	return c
}

// lateWork waits until work the faults do late has landed.
func lateWork() { time.Sleep(4 * fault.LateAfter) }

var credentialCases = []faultCase{
	{spec: "auth-prefix8", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool { return withSecret(t, h, "right-vaXXX") == nil }},
	{spec: "auth-fold-case", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool { return withSecret(t, h, "RIGHT-VALUE") == nil }},
	{spec: "auth-truncated", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool { return withSecret(t, h, "right-valu") == nil }},
	{spec: "auth-extended", opts: authOpts, broken: func(t *testing.T, h *harness, _ Options) bool { return withSecret(t, h, "right-valuex") == nil }},
	{spec: "param-values-fence-only", opts: Options{RequiredParameters: []string{"clusterID=c1"}}, broken: func(t *testing.T, h *harness, _ Options) bool {
		_, err := h.f.ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{Parameters: map[string]string{"clusterID": "other"}})
		return err == nil
	}},
	{spec: "aggregate-24", broken: func(t *testing.T, h *harness, _ Options) bool {
		var ten []string
		for i := range 10 {
			ten = append(ten, fmt.Sprintf("192.0.2.%d/32", 10+i))
		}
		h.fence(t, ten...)
		return listed(t, h, "192.0.2.0/24")
	}},
	{spec: "list-dup-oldest", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.1/32")
		h.fence(t, "192.0.2.2/32")
		n := 0
		for _, c := range h.list(t) {
			if c == "192.0.2.1/32" {
				n++
			}
		}
		return n == 2
	}},
	{spec: "clients-subnet", broken: func(t *testing.T, h *harness, _ Options) bool {
		cl, err := clientsOf(t, h)
		return err == nil && len(cl) > 0 && cl[0].GetAddresses()[0].GetCidr() == "192.0.2.200/24"
	}},
	{spec: "clients-unadvertised", broken: func(t *testing.T, h *harness, _ Options) bool {
		_, err := clientsOf(t, h)
		return err == nil && !slices.Contains(capabilities(t, h), "fence:GET_CLIENTS_TO_FENCE")
	}},
	{spec: "inet-aton", broken: func(t *testing.T, h *harness, _ Options) bool {
		return h.fence(t, "0300.0.02.010/032") == nil && listed(t, h, "192.0.2.8/32")
	}},
	{spec: "late-fence", broken: func(t *testing.T, h *harness, _ Options) bool {
		_, _ = (&fenceServer{d: h.d}).FenceClusterNetwork(gaveUp(), &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.1/32")})
		lateWork()
		return listed(t, h, "192.0.2.1/32")
	}},
	{spec: "late-unfence", broken: func(t *testing.T, h *harness, _ Options) bool {
		h.fence(t, "192.0.2.1/32")
		_, _ = (&fenceServer{d: h.d}).UnfenceClusterNetwork(gaveUp(), &fence.UnfenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.1/32")})
		lateWork()
		return !listed(t, h, "192.0.2.1/32")
	}},
}
