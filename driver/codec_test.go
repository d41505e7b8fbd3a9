package driver

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// bigFence is a Fence request of 2.7 MB: 150,000 CIDRs.
func bigFence(secret string) *fence.FenceClusterNetworkRequest {
	r := &fence.FenceClusterNetworkRequest{Secrets: map[string]string{"userKey": secret}, Parameters: map[string]string{"clusterID": "c1"}}
	for i := range 150000 {
		r.Cidrs = append(r.Cidrs, &fence.CIDR{Cidr: fmt.Sprintf("10.%d.%d.%d/32", i>>16, i>>8&255, i&255)})
	}
	return r
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestWrongSecretLargeRequestIsNotDecoded pins the memory the reference
// driver spent on requests it then refused: with --max-msg-bytes 32MiB, 64
// wrong-secret 4 MB requests took it to 0.67-0.95 GB, because gRPC decoded
// every CIDR before the handler checked the secret. The codec now reads the
// secrets from the wire bytes first and decodes nothing else when they are
// wrong; a request with the right secret is decoded whole.
func TestWrongSecretLargeRequestIsNotDecoded(t *testing.T) {
	h := start(t, Options{Secrets: map[string]string{"userKey": "s3cret-value"}, RequiredParameters: []string{"clusterID"}})
	c := newAuthCodec(h.d)
	wire, err := proto.Marshal(bigFence("wrong-value"))
	if err != nil {
		t.Fatal(err)
	}
	var got fence.FenceClusterNetworkRequest
	n := allocated(func() {
		if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(wire)}, &got); err != nil {
			t.Fatal(err)
		}
	})
	if len(got.Cidrs) != 0 || got.Secrets["userKey"] != "wrong-value" || got.Parameters["clusterID"] != "c1" {
		t.Errorf("decoded %d CIDRs, secrets %v, parameters %v: want the credentials alone", len(got.Cidrs), got.Secrets, got.Parameters)
	}
	if n > 64<<10 {
		t.Errorf("decoding the credentials of a %d-byte request allocated %d bytes", len(wire), n)
	}
	right, _ := proto.Marshal(bigFence("s3cret-value"))
	var whole fence.FenceClusterNetworkRequest
	full := allocated(func() {
		if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(right)}, &whole); err != nil || len(whole.Cidrs) != 150000 {
			t.Errorf("a request with the right secret decoded %d CIDRs (%v)", len(whole.Cidrs), err)
		}
	})
	t.Logf("%d bytes on the wire: %d allocated to decode the credentials of a wrong-secret request, %d to decode it whole", len(wire), n, full)
}

// TestWrongSecretLargeRequestIsUnauthenticated: end to end, a large request
// with a wrong secret is answered UNAUTHENTICATED (not a decoding error),
// and one with the right secret is served.
func TestWrongSecretLargeRequestIsUnauthenticated(t *testing.T) {
	h := start(t, Options{Secrets: map[string]string{"userKey": "s3cret-value"}, MaxMessageBytes: 8 << 20})
	_, err := h.f.FenceClusterNetwork(ctx(t), bigFence("wrong-value"))
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("wrong secret: %v, want UNAUTHENTICATED", err)
	}
	small := &fence.FenceClusterNetworkRequest{Secrets: map[string]string{"userKey": "s3cret-value"}, Cidrs: cidrs("192.0.2.1/32")}
	if _, err := h.f.FenceClusterNetwork(ctx(t), small); err != nil {
		t.Errorf("right secret: %v", err)
	}
	if _, err := h.f.ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{Secrets: map[string]string{"userKey": "nope-nope"}}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("List with a wrong secret: %v, want UNAUTHENTICATED", err)
	}
}
