package driver

import (
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestWidePrefixRefused pins the /0 lockout: by default 0.0.0.0/0 and ::/0
// are refused with INVALID_ARGUMENT and nothing is stored; --max-prefix
// moves the limit either way.
func TestWidePrefixRefused(t *testing.T) {
	h := start(t, Options{})
	for _, c := range []string{"0.0.0.0/0", "::/0", "0.0.0.0/0.0.0.0"} {
		if err := h.fence(t, "192.0.2.0/24", c); status.Code(err) != codes.InvalidArgument {
			t.Errorf("fence %s: %v, want InvalidArgument", c, err)
		}
	}
	if got := h.list(t); len(got) != 0 {
		t.Fatalf("a refused request stored %v", got)
	}
	if err := h.fence(t, "0.0.0.0/1", "128.0.0.0/1"); err != nil {
		t.Fatalf("/1 is within the default limit: %v", err)
	}

	h = start(t, Options{MaxPrefix: "8,32"})
	if err := h.fence(t, "10.0.0.0/7"); status.Code(err) != codes.InvalidArgument {
		t.Errorf("/7 under --max-prefix 8,32: %v", err)
	}
	if err := h.fence(t, "2001::/31"); status.Code(err) != codes.InvalidArgument {
		t.Errorf("/31 under --max-prefix 8,32: %v", err)
	}
	if err := h.fence(t, "10.0.0.0/8", "2001:db8::/32"); err != nil {
		t.Errorf("limits themselves: %v", err)
	}

	h = start(t, Options{MaxPrefix: "0"})
	if err := h.fence(t, "0.0.0.0/0"); err != nil {
		t.Errorf("--max-prefix 0 allows /0: %v", err)
	}
	if _, err := New(t.Context(), Options{StatePath: t.TempDir() + "/s.db", MaxPrefix: "99"}); err == nil {
		t.Error("--max-prefix 99 accepted")
	}
}

// TestMappedIPv6FailsClosed pins the fail-open bug: ::ffff:a.b.c.d/n was
// stored as IPv6, so the IPv4 client it names was never stopped. It is now
// the IPv4 block, listed and enforced as such, and an IPv6 block holding the
// whole mapped range is refused.
func TestMappedIPv6FailsClosed(t *testing.T) {
	h := start(t, Options{})
	if err := h.fence(t, "::ffff:192.0.2.0/120", "::ffff:198.51.100.7/128"); err != nil {
		t.Fatal(err)
	}
	want := []string{"192.0.2.0/24", "198.51.100.7/32"}
	if got := h.list(t); !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	if got := h.enforced(t); !slices.Equal(got, want) {
		t.Fatalf("enforced %v, want %v", got, want)
	}
	if err := h.fence(t, "::/8"); status.Code(err) != codes.InvalidArgument {
		t.Errorf("::/8 holds every mapped address: %v, want InvalidArgument", err)
	}
	if err := h.unfence(t, "::ffff:198.51.100.7/128"); err != nil {
		t.Fatal(err)
	}
	if got := h.list(t); !slices.Equal(got, want[:1]) {
		t.Fatalf("after unfencing the mapped /128: %v", got)
	}
}

// TestDefaultEndpointPrivate: the default socket directory is created 0700
// and one writable by others is refused.
func TestDefaultEndpointPrivate(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", base)
	ep, err := DefaultEndpoint()
	if err != nil {
		t.Fatal(err)
	}
	if ep != "unix://"+base+"/fenceproof/driver.sock" {
		t.Fatalf("endpoint %s", ep)
	}
	fi, err := os.Stat(base + "/fenceproof")
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory mode %v, %v", fi.Mode().Perm(), err)
	}
	if err := os.Chmod(base+"/fenceproof", 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := DefaultEndpoint(); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Fatalf("world-writable socket directory: %v", err)
	}
}
