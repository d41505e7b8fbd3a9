package driver

import (
	"context"
	"slices"
	"testing"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestAbandonedMutationIsNotAppliedLate pins the late work the conformance
// suite's TIME-002 probe found in the group commit: a Fence (or Unfence)
// whose client had given up before its turn came was still applied, after
// the request the client sent next (an Unfence of the same block) had
// overtaken it in the queue, leaving the block fenced behind the client's
// back.
func TestAbandonedMutationIsNotAppliedLate(t *testing.T) {
	h := start(t, Options{})
	srv := &fenceServer{d: h.d}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := srv.FenceClusterNetwork(gone, &fence.FenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.1/32")})
	if status.Code(err) != codes.Canceled {
		t.Errorf("Fence whose client gave up: %v, want CANCELLED", err)
	}
	if slices.Contains(h.list(t), "192.0.2.1/32") {
		t.Error("a Fence whose client gave up was applied")
	}
	if err := h.fence(t, "192.0.2.2/32"); err != nil {
		t.Fatal(err)
	}
	_, err = srv.UnfenceClusterNetwork(gone, &fence.UnfenceClusterNetworkRequest{Cidrs: cidrs("192.0.2.2/32")})
	if status.Code(err) != codes.Canceled {
		t.Errorf("Unfence whose client gave up: %v, want CANCELLED", err)
	}
	if !slices.Contains(h.list(t), "192.0.2.2/32") {
		t.Error("an Unfence whose client gave up was applied")
	}
}
