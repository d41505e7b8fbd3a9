package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/backend/memory"
)

// harness is a driver serving on a temp unix socket and grpc clients to it.
type harness struct {
	d    *Driver
	addr string
	f    fence.FenceControllerClient
	id   identity.IdentityClient
	logs *bytes.Buffer
}

func start(t testing.TB, o Options) *harness {
	t.Helper()
	if o.StatePath == "" {
		o.StatePath = filepath.Join(t.TempDir(), "state.db")
	}
	logs := &bytes.Buffer{}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewJSONHandler(&syncWriter{w: logs}, nil))
	}
	d, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// Unix socket paths are limited to 108 bytes; t.TempDir can be longer.
	dir, err := os.MkdirTemp("", "fp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	addr, err := d.Start("unix://" + filepath.Join(dir, "d.sock"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); d.Stop() })
	return &harness{d: d, addr: addr, f: fence.NewFenceControllerClient(conn), id: identity.NewIdentityClient(conn), logs: logs}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func cidrs(ss ...string) []*fence.CIDR {
	out := make([]*fence.CIDR, 0, len(ss))
	for _, s := range ss {
		out = append(out, &fence.CIDR{Cidr: s})
	}
	return out
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func (h *harness) fence(t testing.TB, ss ...string) error {
	_, err := h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: cidrs(ss...)})
	return err
}

func (h *harness) unfence(t testing.TB, ss ...string) error {
	_, err := h.f.UnfenceClusterNetwork(ctx(t), &fence.UnfenceClusterNetworkRequest{Cidrs: cidrs(ss...)})
	return err
}

func (h *harness) list(t testing.TB) []string {
	t.Helper()
	resp, err := h.f.ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var out []string
	for _, c := range resp.GetCidrs() {
		out = append(out, c.GetCidr())
	}
	return out
}

// enforced returns what the memory backend last applied, as strings.
func (h *harness) enforced(t *testing.T) []string {
	t.Helper()
	ps, _ := h.d.backend.(*memory.Backend).Applied()
	slices.SortFunc(ps, netip.Prefix.Compare)
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func wantCode(t *testing.T, err error, c codes.Code, what string) {
	t.Helper()
	if status.Code(err) != c {
		t.Fatalf("%s: got %v, want %v", what, err, c)
	}
}

func TestIdentity(t *testing.T) {
	h := start(t, Options{Version: "v9"})
	id, err := h.id.GetIdentity(ctx(t), &identity.GetIdentityRequest{})
	if err != nil || id.GetName() != DefaultName || id.GetVendorVersion() != "v9" {
		t.Fatalf("GetIdentity = %v, %v", id, err)
	}
	p, err := h.id.Probe(ctx(t), &identity.ProbeRequest{})
	if err != nil || !p.GetReady().GetValue() {
		t.Fatalf("Probe = %v, %v", p, err)
	}
	got := capabilities(t, h)
	want := []string{"service:CONTROLLER_SERVICE", "fence:NETWORK_FENCE", "fence:GET_CLIENTS_TO_FENCE"}
	if !slices.Equal(got, want) {
		t.Fatalf("capabilities %v, want %v", got, want)
	}
	h2 := start(t, Options{DisableGetClients: true})
	if got := capabilities(t, h2); slices.Contains(got, "fence:GET_CLIENTS_TO_FENCE") {
		t.Fatalf("DisableGetClients still advertises: %v", got)
	}
	_, err = h2.f.GetFenceClients(ctx(t), &fence.GetFenceClientsRequest{})
	wantCode(t, err, codes.Unimplemented, "GetFenceClients when disabled")
}

func capabilities(t *testing.T, h *harness) []string {
	t.Helper()
	resp, err := h.id.GetCapabilities(ctx(t), &identity.GetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range resp.GetCapabilities() {
		if s := c.GetService(); s != nil {
			out = append(out, "service:"+s.GetType().String())
		}
		if f := c.GetNetworkFence(); f != nil {
			out = append(out, "fence:"+f.GetType().String())
		}
	}
	return out
}

func TestValidation(t *testing.T) {
	h := start(t, Options{})
	bad := []string{"", "garbage", "192.0.2.0/33", "300.1.1.1/32", "fd00::/129", "192.0.2.1:80",
		"[2001:db8::1]:443", " 192.0.2.0/24", "192.0.2.0/24 ", "192.0.2.1", "2001:db8::1", "fe80::1%eth0/64"}
	for _, b := range bad {
		err := h.fence(t, "198.51.100.0/24", b)
		wantCode(t, err, codes.InvalidArgument, fmt.Sprintf("Fence(%q)", b))
		if msg := status.Convert(err).Message(); !strings.Contains(msg, "cidrs[1]") || !strings.Contains(msg, fmt.Sprintf("%q", b)) {
			t.Errorf("Fence(%q) message %q should name cidrs[1] and the value", b, msg)
		}
		wantCode(t, h.unfence(t, b), codes.InvalidArgument, fmt.Sprintf("Unfence(%q)", b))
	}
	wantCode(t, h.fence(t), codes.InvalidArgument, "Fence with no cidrs")
	wantCode(t, h.unfence(t), codes.InvalidArgument, "Unfence with no cidrs")
	if l := h.list(t); len(l) != 0 {
		t.Fatalf("rejected requests changed the fence set: %v", l)
	}
	if _, n := h.d.backend.(*memory.Backend).Applied(); n != 1 {
		t.Fatalf("backend applied %d times, want only the start-up apply", n)
	}
}

func TestFenceUnfenceList(t *testing.T) {
	h := start(t, Options{})
	steps := []struct {
		op   string
		args []string
		want []string
	}{
		{"fence", []string{"192.0.2.5/24", "2001:0DB8:0000::/32", "192.0.2.0/24", "198.51.100.7/32"},
			[]string{"192.0.2.0/24", "198.51.100.7/32", "2001:db8::/32"}},
		{"fence", []string{"192.0.2.0/24"}, []string{"192.0.2.0/24", "198.51.100.7/32", "2001:db8::/32"}},
		{"fence", []string{"192.0.2.0/25", "::ffff:203.0.113.0/120"},
			[]string{"192.0.2.0/24", "192.0.2.0/25", "198.51.100.7/32", "203.0.113.0/24", "2001:db8::/32"}},
		{"unfence", []string{"192.0.2.0/25"}, []string{"192.0.2.0/24", "198.51.100.7/32", "203.0.113.0/24", "2001:db8::/32"}},
		{"unfence", []string{"::ffff:203.0.113.0/120"}, []string{"192.0.2.0/24", "198.51.100.7/32", "2001:db8::/32"}},
		{"unfence", []string{"2001:db8:0::1/32"}, []string{"192.0.2.0/24", "198.51.100.7/32"}},
	}
	for i, s := range steps {
		var err error
		if s.op == "fence" {
			err = h.fence(t, s.args...)
		} else {
			err = h.unfence(t, s.args...)
		}
		if err != nil {
			t.Fatalf("step %d %s %v: %v", i, s.op, s.args, err)
		}
		if got := h.list(t); !slices.Equal(got, s.want) {
			t.Fatalf("step %d: List = %v, want %v", i, got, s.want)
		}
		want := slices.Clone(s.want)
		slices.SortFunc(want, func(a, b string) int { return netip.MustParsePrefix(a).Compare(netip.MustParsePrefix(b)) })
		if got := h.enforced(t); !slices.Equal(got, want) {
			t.Fatalf("step %d: enforced %v, want %v", i, got, want)
		}
	}
	if got := h.d.Fences(); len(got) != 2 || got[0].String() != "192.0.2.0/24" {
		t.Fatalf("Fences() = %v", got)
	}
}

func TestHostBitsReject(t *testing.T) {
	h := start(t, Options{HostBits: "reject"})
	wantCode(t, h.fence(t, "192.0.2.5/24"), codes.InvalidArgument, "host bits under reject")
	if err := h.fence(t, "192.0.2.0/24", "192.0.2.5/32"); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), Options{StatePath: filepath.Join(t.TempDir(), "s"), HostBits: "sometimes"}); err == nil {
		t.Fatal("bad HostBits accepted")
	}
}

func TestAuthAndParams(t *testing.T) {
	h := start(t, Options{Secrets: map[string]string{"user": "admin", "key": "s3cr3t-value"}, RequiredParameters: []string{"clusterID"}})
	good := map[string]string{"user": "admin", "key": "s3cr3t-value"}
	params := map[string]string{"clusterID": "c1"}
	tests := []struct {
		name    string
		secrets map[string]string
		params  map[string]string
		cidrs   []string
		code    codes.Code
		mention string
	}{
		{"ok", good, params, []string{"192.0.2.0/24"}, codes.OK, ""},
		{"no secrets", nil, params, []string{"192.0.2.0/24"}, codes.Unauthenticated, `"key"`},
		{"wrong secret", map[string]string{"user": "admin", "key": "nope-wrong"}, params, []string{"192.0.2.0/24"}, codes.Unauthenticated, `"key"`},
		{"auth before params", map[string]string{"user": "x"}, nil, nil, codes.Unauthenticated, ""},
		{"missing param", good, nil, []string{"192.0.2.0/24"}, codes.InvalidArgument, "clusterID"},
		{"params before cidrs", good, nil, []string{"junk"}, codes.InvalidArgument, "clusterID"},
		{"bad cidr", good, params, []string{"junk"}, codes.InvalidArgument, "junk"},
	}
	for _, tc := range tests {
		_, err := h.f.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Secrets: tc.secrets, Parameters: tc.params, Cidrs: cidrs(tc.cidrs...)})
		if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.mention) {
			t.Errorf("%s: got %v, want %v mentioning %q", tc.name, err, tc.code, tc.mention)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cr3t-value") || strings.Contains(err.Error(), "nope-wrong")) {
			t.Errorf("%s: error leaks a secret value: %v", tc.name, err)
		}
	}
	_, err := h.f.ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{Parameters: params})
	wantCode(t, err, codes.Unauthenticated, "List without secrets")
	_, err = h.f.GetFenceClients(ctx(t), &fence.GetFenceClientsRequest{Secrets: good})
	wantCode(t, err, codes.InvalidArgument, "GetFenceClients without params")
	resp, err := h.f.ListClusterFence(ctx(t), &fence.ListClusterFenceRequest{Secrets: good, Parameters: params})
	if err != nil || len(resp.GetCidrs()) != 1 {
		t.Fatalf("List = %v, %v", resp, err)
	}
	if logs := h.logs.String(); strings.Contains(logs, "s3cr3t-value") || strings.Contains(logs, "nope-wrong") || !strings.Contains(logs, `"secret_keys"`) {
		t.Fatalf("logs leak a secret or miss secret_keys:\n%s", logs)
	}
}

func TestConcurrentFences(t *testing.T) {
	h := start(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 50 {
		wg.Add(2)
		go func() { defer wg.Done(); errs <- h.fence(t, fmt.Sprintf("10.0.%d.0/24", i)) }()
		go func() { defer wg.Done(); errs <- h.fence(t, "192.0.2.0/24") }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := h.list(t); len(got) != 51 {
		t.Fatalf("after 50 distinct + 50 identical concurrent fences, List has %d", len(got))
	}
}

func TestBackendFailureRollsBack(t *testing.T) {
	h := start(t, Options{})
	if err := h.fence(t, "192.0.2.0/24"); err != nil {
		t.Fatal(err)
	}
	mem := h.d.backend.(*memory.Backend)
	mem.FailWith(errors.New("netlink: injected failure"))
	err := h.fence(t, "198.51.100.0/24")
	wantCode(t, err, codes.Unknown, "fence with failing backend")
	if !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("message should explain: %v", err)
	}
	wantCode(t, h.unfence(t, "192.0.2.0/24"), codes.Unknown, "unfence with failing backend")
	mem.FailWith(nil)
	if got := h.list(t); !slices.Equal(got, []string{"192.0.2.0/24"}) {
		t.Fatalf("List after failed mutations = %v", got)
	}
	if got := h.d.Fences(); len(got) != 1 || got[0].String() != "192.0.2.0/24" {
		t.Fatalf("store after failed mutations = %v", got)
	}
}

func TestRestartReapplies(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state.db")
	h := start(t, Options{StatePath: state})
	if err := h.fence(t, "192.0.2.0/24", "2001:db8::/48"); err != nil {
		t.Fatal(err)
	}
	h.d.Stop()
	if got := h.d.Fences(); len(got) != 2 {
		t.Fatalf("Fences() after Stop = %v", got)
	}
	if _, err := h.d.Start("tcp://127.0.0.1:0"); err == nil {
		t.Fatal("Start after Start accepted")
	}
	h2 := start(t, Options{StatePath: state})
	if got := h2.enforced(t); !slices.Equal(got, []string{"192.0.2.0/24", "2001:db8::/48"}) {
		t.Fatalf("re-applied %v", got)
	}
	h2.d.Stop()
	if err := os.WriteFile(state, []byte("this is not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), Options{StatePath: state}); err == nil {
		t.Fatal("corrupt state file accepted")
	}
}

func TestGetFenceClientsStatic(t *testing.T) {
	h := start(t, Options{})
	resp, err := h.f.GetFenceClients(ctx(t), &fence.GetFenceClientsRequest{})
	if err != nil || len(resp.GetClients()) != 1 || resp.Clients[0].GetId() != "ref-client-1" || resp.Clients[0].Addresses[0].GetCidr() != "192.0.2.200/32" {
		t.Fatalf("GetFenceClients = %v, %v", resp, err)
	}
	h2 := start(t, Options{StaticClients: []Client{{ID: "n1", Addresses: []string{"198.51.100.1/32", "2001:db8::1/128"}}}, ProtectedPorts: []uint16{6789}})
	resp, err = h2.f.GetFenceClients(ctx(t), &fence.GetFenceClientsRequest{})
	if err != nil || len(resp.GetClients()) != 1 || len(resp.Clients[0].Addresses) != 2 {
		t.Fatalf("GetFenceClients = %v, %v", resp, err)
	}
	if _, err := New(context.Background(), Options{StatePath: filepath.Join(t.TempDir(), "s"), StaticClients: []Client{{ID: "x", Addresses: []string{"nope"}}}}); err == nil {
		t.Fatal("bad static client accepted")
	}
}

func TestPeerClientsStable(t *testing.T) {
	a := peerClients([]netip.Addr{netip.MustParseAddr("10.1.0.2"), netip.MustParseAddr("::ffff:10.1.0.3"), netip.MustParseAddr("10.1.0.2"), netip.MustParseAddr("fd00::2")})
	b := peerClients([]netip.Addr{netip.MustParseAddr("fd00::2"), netip.MustParseAddr("10.1.0.3"), netip.MustParseAddr("10.1.0.2")})
	if len(a) != 3 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("peer clients not stable: %v vs %v", a, b)
	}
	for _, c := range a {
		if !strings.HasPrefix(c.ID, "client-") || len(c.Addresses) != 1 || !(strings.HasSuffix(c.Addresses[0], "/32") || strings.HasSuffix(c.Addresses[0], "/128")) {
			t.Fatalf("bad client %+v", c)
		}
	}
}

func TestEndpoints(t *testing.T) {
	d, err := New(context.Background(), Options{StatePath: filepath.Join(t.TempDir(), "s")})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	for _, ep := range []string{"", "unix://", "http://x", "/tmp/x.sock"} {
		if _, err := d.Start(ep); err == nil {
			t.Errorf("Start(%q) accepted", ep)
		}
	}
	addr, err := d.Start("tcp://127.0.0.1:0")
	if err != nil || !strings.HasPrefix(addr, "tcp://127.0.0.1:") || strings.HasSuffix(addr, ":0") {
		t.Fatalf("Start(tcp) = %q, %v", addr, err)
	}
}

func TestStaleSocket(t *testing.T) {
	dir, _ := os.MkdirTemp("", "fp")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "d.sock")
	d1, err := New(context.Background(), Options{StatePath: filepath.Join(t.TempDir(), "a")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d1.Start("unix://" + sock); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v", fi.Mode(), err)
	}
	d2, err := New(context.Background(), Options{StatePath: filepath.Join(t.TempDir(), "b")})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Stop()
	if _, err := d2.Start("unix://" + sock); err == nil || !strings.Contains(err.Error(), "listening") {
		t.Fatalf("second driver on a live socket: %v", err)
	}
	// Leave a stale socket behind: the listener's file without a server.
	d1.lis.(interface{ SetUnlinkOnClose(bool) }).SetUnlinkOnClose(false)
	d1.sockPath = ""
	d1.Stop()
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}
	if _, err := d2.Start("unix://" + sock); err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
}
