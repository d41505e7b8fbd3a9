package sanity

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestExampleConfigLoads(t *testing.T) {
	cfg := Defaults()
	if err := LoadFile("../fixtures/sanity/example.yaml", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Parameters["clusterID"] != "rook-ceph" || cfg.RPCTimeout.Seconds() != 30 || cfg.Profile.HostBits != HostBitsEither {
		t.Errorf("config not read as written: %+v", cfg)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		change func(*Config)
		field  string
	}{
		{func(c *Config) { c.Endpoint = "http://x" }, "field endpoint"},
		{func(c *Config) { c.RPCTimeout.Duration = 0 }, "field rpcTimeout"},
		{func(c *Config) { c.Profile.HostBits = "maybe" }, "field profile.hostBits"},
		{func(c *Config) { c.Profile.IPv6 = "yes" }, "field profile.ipv6"},
		{func(c *Config) { c.Concurrency = 1 }, "field concurrency"},
		{func(c *Config) { c.Secrets = map[string]string{"k": ""} }, "field secrets"},
	}
	for _, c := range cases {
		cfg := Defaults()
		c.change(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("Validate() = %v, want an error naming %q", err, c.field)
		}
	}
	cfg := Defaults()
	if err := cfg.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

func TestAllocatorHandsOutFreshDocumentationBlocks(t *testing.T) {
	var a allocator
	a.reset([]string{"198.51.100.8/29", "garbage"})
	seen := map[netip.Prefix]bool{}
	avoid := netip.MustParsePrefix("198.51.100.8/29")
	for i := 0; i < 30; i++ {
		bits := []int{32, 30, 28}[i%3]
		p := mustBlock(t, &a, false, bits)
		if p.Bits() != bits || p != p.Masked() {
			t.Fatalf("block %v is not an aligned /%d", p, bits)
		}
		if seen[p] || p.Overlaps(avoid) {
			t.Fatalf("block %v handed out twice or overlaps a pre-existing fence", p)
		}
		for q := range seen {
			if q.Overlaps(p) {
				t.Fatalf("block %v overlaps %v", p, q)
			}
		}
		seen[p] = true
		inDoc := false
		for _, r := range docRanges {
			inDoc = inDoc || (r.Contains(p.Addr()) && r.Contains(lastAddr(p)))
		}
		if !inDoc {
			t.Fatalf("block %v is outside the documentation ranges", p)
		}
	}
	p := mustBlock(t, &a, true, 64)
	if !netip.MustParsePrefix("2001:db8::/32").Contains(p.Addr()) {
		t.Errorf("IPv6 block %v is outside 2001:db8::/32", p)
	}
}

func TestExpandSpellsEveryGroup(t *testing.T) {
	got := expand(netip.MustParsePrefix("2001:db8:fe00::/64"))
	if got != "2001:0db8:fe00:0000:0000:0000:0000:0000/64" {
		t.Errorf("expand = %s", got)
	}
	if canonical(got) != "2001:db8:fe00::/64" {
		t.Errorf("canonical(expanded) = %s", canonical(got))
	}
}

func TestOnlyDocumentationRangesAreSafe(t *testing.T) {
	cases := map[string]bool{
		"192.0.2.0/24": true, "192.0.2.77/24": true, "198.51.100.7/32": true, "203.0.113.0/28": true,
		"2001:db8:fe00::/64": true, "2001:DB8::1/128": true, "not-a-cidr": true, "300.1.1.1/32": true,
		"192.0.2.0/23": false, "10.0.0.0/8": false, "240.0.0.0/4": false, "0.0.0.0/0": false,
		"2001:db8::/31": false, "::/0": false, "198.51.101.0/24": false,
	}
	for c, safe := range cases {
		if got := len(outsideDocRanges([]string{c})) == 0; got != safe {
			t.Errorf("%s: safe=%v, want %v", c, got, safe)
		}
	}
}

// TestCanonicalIsStable guards the comparison every List rule relies on.
func TestCanonicalIsStable(t *testing.T) {
	for in, want := range map[string]string{"2001:DB8::/32": "2001:db8::/32", "192.0.2.0/24": "192.0.2.0/24", "junk": "junk"} {
		if got := canonical(in); got != want {
			t.Errorf("canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCapNamesAreSpecNames pins the regression where capabilities of a kind
// the suite does not know were printed as Go type names.
func TestCapNamesAreSpecNames(t *testing.T) {
	caps := []*identity.Capability{
		{Type: &identity.Capability_NetworkFence_{NetworkFence: &identity.Capability_NetworkFence{Type: identity.Capability_NetworkFence_NETWORK_FENCE}}},
		{Type: &identity.Capability_ReclaimSpace_{ReclaimSpace: &identity.Capability_ReclaimSpace{Type: identity.Capability_ReclaimSpace_ONLINE}}},
	}
	got := capNames(caps)
	want := []string{"NETWORK_FENCE", "reclaim_space.ONLINE"}
	if !slices.Equal(got, want) {
		t.Errorf("capNames = %v, want %v", got, want)
	}
}

// TestAllocatorJumpsOverPreexistingFences pins the hang where a pre-existing
// fence in the pool was skipped address by address: a /64 and a /44 in
// the IPv6 pool, and a /25 in the IPv4 one, are jumped over in one step.
func TestAllocatorJumpsOverPreexistingFences(t *testing.T) {
	var a allocator
	a.reset([]string{"2001:db8:fe00::/64", "2001:db8:fe00:1::/44", "198.51.100.0/25", "10.0.0.0/8"})
	if len(a.avoid) != 3 {
		t.Errorf("avoid = %v: fences outside the pools must be dropped", a.avoid)
	}
	p6 := mustBlock(t, &a, true, 128)
	if p6.String() != "2001:db8:fe10::/128" {
		t.Errorf("first free IPv6 /128 = %s, want 2001:db8:fe10::/128", p6)
	}
	p4 := mustBlock(t, &a, false, 32)
	if p4.String() != "198.51.100.128/32" {
		t.Errorf("first free IPv4 /32 = %s, want 198.51.100.128/32", p4)
	}
}

func TestSetDiffAndObservedParsing(t *testing.T) {
	extra, missing := setDiff([]string{"192.0.2.0/24", "198.51.100.1/32", "198.51.100.1/32", "198.51.100.9/32"}, []string{"192.0.2.1/24", "2001:db8::/32"}, map[string]bool{"198.51.100.9/32": true})
	if !slices.Equal(extra, []string{"198.51.100.1/32"}) || !slices.Equal(missing, []string{"2001:db8::/32"}) {
		t.Errorf("setDiff = %v, %v (a host-bit spelling is the same block; ignored blocks are left out)", extra, missing)
	}
	got := parseObserved("# ceph osd blocklist ls\n192.0.2.7\n\n2001:db8::/64\n  198.51.100.0/24  \n")
	want := []string{"192.0.2.7/32", "2001:db8::/64", "198.51.100.0/24"}
	if !slices.Equal(got, want) {
		t.Errorf("parseObserved = %v, want %v", got, want)
	}
}

func mustBlock(t *testing.T, a *allocator, v6 bool, bits int) netip.Prefix {
	t.Helper()
	p, err := a.block(v6, bits)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// deadlineCtx is a context whose deadline has passed while its timer has
// not fired yet (Err is still nil): what a call sees when the server's
// RST_STREAM beats the client's timer.
type deadlineCtx struct {
	context.Context
	dl time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.dl, true }
func (c deadlineCtx) Err() error                  { return nil }

// TestDeadlineMissWhenTheServerResetsFirst pins the flake where a Fence that
// missed its deadline was not counted (TIME-002 then passed untested)
// because gRPC reported DEADLINE_EXCEEDED before the context's timer fired.
func TestDeadlineMissWhenTheServerResetsFirst(t *testing.T) {
	late := status.Error(codes.DeadlineExceeded, "stream terminated by RST_STREAM")
	passed := deadlineCtx{context.Background(), time.Now().Add(-time.Millisecond)}
	if !missedDeadline(passed, late) {
		t.Error("a DEADLINE_EXCEEDED after the deadline is not a miss")
	}
	ahead := deadlineCtx{context.Background(), time.Now().Add(time.Hour)}
	if missedDeadline(ahead, late) || missedDeadline(passed, status.Error(codes.Internal, "x")) {
		t.Error("a driver answering in time, or another code, counted as a miss")
	}
}

// TestSameFormWritesTheClientsSpelling: CLIENT-006 fences a documentation
// address written as the client's address is.
func TestSameFormWritesTheClientsSpelling(t *testing.T) {
	v4, v6 := netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("2001:db8:fe00::7")
	for _, c := range []struct {
		a    string
		doc  netip.Addr
		want string
	}{
		{"10.0.0.5/32", v4, "198.51.100.7/32"},
		{"::ffff:10.0.0.5/128", v4, "::ffff:198.51.100.7/128"},
		{"0:0:0:0:0:FFFF:10.0.0.5/128", v4, "0:0:0:0:0:FFFF:198.51.100.7/128"},
		{"::ffff:a00:5/128", v4, "::ffff:c633:6407/128"},
		{"fd00::5/128", v6, "2001:db8:fe00::7/128"},
		{"FD00::5/128", v6, "2001:DB8:FE00::7/128"},
		{"fd00:0:0:0:0:0:0:5/128", v6, "2001:db8:fe00:0:0:0:0:7/128"},
		{"fd00:0000:0000:0000:0000:0000:0000:0005/128", v6, "2001:0db8:fe00:0000:0000:0000:0000:0007/128"},
	} {
		if got := sameForm(c.a, c.doc); got != c.want {
			t.Errorf("sameForm(%q) = %q, want %q", c.a, got, c.want)
		}
	}
}

// TestScalePlanFitsTheDeadline: SCALE-001's plan, probing drivers whose time
// grows with a request's size in different ways, keeps every request it sends
// within its share of the RPC deadline, and sizes a fast driver's cases whole.
// A driver rewriting its whole state per block once made a 1024-block request
// planned from 8 blocks miss the deadline.
func TestScalePlanFitsTheDeadline(t *testing.T) {
	const want = 1024
	perRequest, share := 30*time.Second/requestHeadroom, 620*time.Second/16/2
	drivers := []struct {
		name  string
		took  func(n int) time.Duration
		whole bool // the cases fit --scale-size
	}{
		{"overhead then 40µs per block", func(n int) time.Duration { return 3*time.Millisecond + time.Duration(n)*40*time.Microsecond }, true},
		{"rewrites its state per block (n² × 20µs)", func(n int) time.Duration { return time.Duration(n*n) * 20 * time.Microsecond }, false},
		{"n² × 1µs", func(n int) time.Duration { return time.Duration(n*n) * time.Microsecond }, true},
		{"500 ms per block", func(n int) time.Duration { return time.Duration(n) * 500 * time.Millisecond }, false},
		{"n³ × 1µs", func(n int) time.Duration { return time.Duration(n*n*n) * time.Microsecond }, false},
	}
	for _, d := range drivers {
		p := &scalePlan{}
		p.probe(want, perRequest, func(n int) (time.Duration, bool) {
			if d.took(n) > perRequest {
				t.Errorf("%s: a probe of %d blocks takes %s, more than %s", d.name, n, d.took(n), perRequest)
			}
			return d.took(n), true
		})
		p.size(want, share, perRequest)
		t.Logf("%s: %s; one %d, many %d in requests of %d", d.name, p, p.one, p.many, p.batch)
		if got := d.took(p.one); got > perRequest {
			t.Errorf("%s: the one-request case of %d blocks takes %s, more than %s", d.name, p.one, got, perRequest)
		}
		if got := d.took(p.batch); got > perRequest {
			t.Errorf("%s: a request of the many-requests case (%d blocks) takes %s, more than %s", d.name, p.batch, got, perRequest)
		}
		if whole := p.one == want && p.many == want; whole != d.whole {
			t.Errorf("%s: one %d, many %d of --scale-size %d", d.name, p.one, p.many, want)
		}
	}
}

// TestOneSlowAnswerDoesNotShrinkEveryRequest pins the Ceph run that missed
// its 8 minutes: one single-block Fence that took 8 s (the first after a
// restart, under load) set the pace to 8 s per block for the rest of the
// run, and every later Unfence carried one block.
func TestOneSlowAnswerDoesNotShrinkEveryRequest(t *testing.T) {
	var w paceWindow
	for range 10 {
		w.add(100 * time.Millisecond)
	}
	w.add(8 * time.Second)
	for range 5 {
		w.add(100 * time.Millisecond)
	}
	if got := w.pace(); got != 100*time.Millisecond {
		t.Errorf("pace after one slow answer among 16: %s, want 100ms", got)
	}
	for range paceOutliers + 1 {
		w.add(2 * time.Second)
	}
	if got := w.pace(); got != 2*time.Second {
		t.Errorf("pace after the driver stayed slower for %d requests: %s, want 2s", paceOutliers+1, got)
	}
	var first paceWindow
	first.add(3 * time.Second)
	if got := first.pace(); got != 3*time.Second {
		t.Errorf("pace of one request: %s, want 3s (nothing to pass over yet)", got)
	}
}
