package driver

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/cidr"
)

// maxErrorMessage bounds a validation error: it may quote a clipped prefix
// of the client's value, never the whole of a large one.
const maxErrorMessage = 512

// FuzzFenceRequest sends Fence or Unfence requests of two arbitrary CIDR
// strings to a driver (memory backend, real state file), in process. A
// request with any value the driver must refuse (cidr.Parse with the
// default --max-prefix) is INVALID_ARGUMENT with a bounded message and
// changes nothing; an accepted one stores exactly the canonical blocks and
// is undone by an Unfence of the same strings. Never a panic.
func FuzzFenceRequest(f *testing.F) {
	for _, seed := range [][2]string{
		{"192.0.2.5/24", "2001:DB8::/32"},
		{"::ffff:192.0.2.0/120", "192.0.2.0/24"},
		{"0.0.0.0/0", "10.0.0.0/8"},
		{" 192.0.2.1/32", "192.0.2.1"},
		{"::/80", "fe80::1%eth0/64"},
		{"2001:db8::/129", ""},
	} {
		f.Add(seed[0], seed[1], false)
		f.Add(seed[0], seed[1], true)
	}
	d, err := New(context.Background(), Options{
		StatePath:         filepath.Join(f.TempDir(), "state.db"),
		ReconcileInterval: -1,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(d.Stop)
	s := &fenceServer{d: d}
	ctx := context.Background()
	list := func(t *testing.T) map[string]int {
		resp, err := s.ListClusterFence(ctx, &fence.ListClusterFenceRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, c := range resp.GetCidrs() {
			out[c.GetCidr()]++
		}
		return out
	}
	f.Fuzz(func(t *testing.T, a, b string, unfence bool) {
		before := list(t)
		var keys []string
		valid := true
		for _, v := range []string{a, b} {
			p, err := cidr.Parse(v, cidr.Normalise)
			if err == nil {
				err = cidr.DefaultMinBits.Check(p)
			}
			if err != nil {
				valid = false
				continue
			}
			if k := p.String(); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		req := cidrs(a, b)
		var rerr error
		if unfence {
			_, rerr = s.UnfenceClusterNetwork(ctx, &fence.UnfenceClusterNetworkRequest{Cidrs: req})
		} else {
			_, rerr = s.FenceClusterNetwork(ctx, &fence.FenceClusterNetworkRequest{Cidrs: req})
		}
		after := list(t)
		if !valid {
			if status.Code(rerr) != codes.InvalidArgument {
				t.Fatalf("%q, %q (unfence=%v): %v, want INVALID_ARGUMENT", a, b, unfence, rerr)
			}
			if n := len(status.Convert(rerr).Message()); n > maxErrorMessage {
				t.Fatalf("%q, %q: error message of %d bytes", a, b, n)
			}
			if !maps.Equal(before, after) {
				t.Fatalf("%q, %q (unfence=%v) refused but changed the set: %v -> %v", a, b, unfence, before, after)
			}
			return
		}
		if rerr != nil {
			t.Fatalf("%q, %q (unfence=%v): %v, want OK (keys %v)", a, b, unfence, rerr, keys)
		}
		want := maps.Clone(before)
		for _, k := range keys {
			if unfence {
				delete(want, k)
			} else {
				want[k] = 1
			}
		}
		if !maps.Equal(want, after) {
			t.Fatalf("%q, %q (unfence=%v): set %v, want %v", a, b, unfence, after, want)
		}
		for k := range after {
			if err := CheckKey(k); err != nil {
				t.Fatalf("%q, %q: listed %q: %v", a, b, k, err)
			}
		}
		if !unfence {
			if _, err := s.UnfenceClusterNetwork(ctx, &fence.UnfenceClusterNetworkRequest{Cidrs: req}); err != nil {
				t.Fatalf("unfence %q, %q: %v", a, b, err)
			}
			want = maps.Clone(before)
			for _, k := range keys {
				delete(want, k)
			}
			if got := list(t); !maps.Equal(want, got) {
				t.Fatalf("unfence %q, %q: set %v, want %v", a, b, got, want)
			}
		}
	})
}
