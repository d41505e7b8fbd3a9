package driver

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestFenceOfProtectedBlockIsRefused pins the fences the driver acknowledged
// and listed but never enforced: a block inside loopback or a --protect
// block (the enforcement accepts those before any drop rule) is refused
// with INVALID_ARGUMENT naming why; a wider block that only overlaps one is
// enforced for the rest and accepted; Unfence of such a block still works.
func TestFenceOfProtectedBlockIsRefused(t *testing.T) {
	h := start(t, Options{Protect: []string{"198.51.100.0/24"}})
	for _, c := range []string{"127.0.0.1/32", "127.0.0.0/8", "::1/128", "198.51.100.7/32", "198.51.100.0/25"} {
		err := h.fence(t, c)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "never") {
			t.Errorf("Fence of %s: %v, want INVALID_ARGUMENT saying it would never be enforced", c, err)
		}
	}
	if got := h.list(t); len(got) != 0 {
		t.Errorf("refused fences are listed: %v", got)
	}
	if err := h.fence(t, "198.51.100.0/23"); err != nil {
		t.Errorf("a block that only overlaps a protected one: %v", err)
	}
	if err := h.unfence(t, "127.0.0.1/32"); err != nil {
		t.Errorf("Unfence of a loopback block: %v", err)
	}
	if !slices.Contains(h.list(t), "198.51.100.0/23") {
		t.Errorf("the overlapping block is not listed: %v", h.list(t))
	}
}
