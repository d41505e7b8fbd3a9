package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/driver/backend/memory"
	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/driver/store"
)

// client opens a connection of its own to the driver, as a separate client
// process would (streams are bounded per connection).
func (h *harness) client(t testing.TB) fence.FenceControllerClient {
	t.Helper()
	conn, err := grpc.NewClient(h.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return fence.NewFenceControllerClient(conn)
}

// batchSeed returns the seed of the group-commit tests (FP_BATCH_SEED=N
// replays one) and logs it.
func batchSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FP_BATCH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FP_BATCH_SEED: %v", err)
		}
	}
	t.Logf("seed %d (replay with FP_BATCH_SEED=%d)", seed, seed)
	return seed
}

// batchKeys draws n distinct canonical blocks from a small space, so that
// blocks of different owners nest, overlap and touch: IPv4 /22 to /32 in
// 10.77.0.0/22 and IPv6 /118 to /128 in 2001:db8:77::/118.
func batchKeys(rng *rand.Rand, n int) []netip.Prefix {
	seen := map[netip.Prefix]bool{}
	var out []netip.Prefix
	for len(out) < n {
		var p netip.Prefix
		if rng.IntN(3) == 0 {
			a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0x77, 14: byte(rng.IntN(4)), 15: byte(rng.IntN(256))})
			p = netip.PrefixFrom(a, 118+rng.IntN(11)).Masked()
		} else {
			a := netip.AddrFrom4([4]byte{10, 77, byte(rng.IntN(4)), byte(rng.IntN(256))})
			p = netip.PrefixFrom(a, 22+rng.IntN(11)).Masked()
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// spell writes p as a client might: canonical, with host bits set, as an
// IPv4-mapped IPv6 block, or in upper-case uncompressed IPv6. Every
// spelling names the same stored key.
func spell(rng *rand.Rand, p netip.Prefix) string {
	switch rng.IntN(4) {
	case 1:
		if p.Bits() < p.Addr().BitLen() {
			return netip.PrefixFrom(p.Addr().Next(), p.Bits()).String()
		}
	case 2:
		if p.Addr().Is4() {
			return netip.PrefixFrom(netip.AddrFrom16(p.Addr().As16()), p.Bits()+96).String()
		}
	case 3:
		if p.Addr().Is6() {
			b := p.Addr().As16()
			return fmt.Sprintf("%X:%X:%X:%X:%X:%X:%X:%X/%d", uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3]),
				uint16(b[4])<<8|uint16(b[5]), uint16(b[6])<<8|uint16(b[7]), uint16(b[8])<<8|uint16(b[9]),
				uint16(b[10])<<8|uint16(b[11]), uint16(b[12])<<8|uint16(b[13]), uint16(b[14])<<8|uint16(b[15]), p.Bits())
		}
	}
	return p.String()
}

// sharedKey is fenced by every worker and never unfenced: concurrent
// identical fences must leave it stored once.
var sharedKey = netip.MustParsePrefix("10.77.0.0/24")

// batchWorkload is the concurrent history of TestGroupCommitMatchesModel.
type batchWorkload struct {
	workers, ops int
	flaky        bool // a goroutine makes the memory backend fail and heal at random
}

// run drives h with w.workers goroutines, each on its own connection and
// owning its own keys (so the final state does not depend on the
// interleaving), sending multi-CIDR Fence and Unfence requests in varied
// spellings, some with a malformed CIDR, while every worker also fences
// sharedKey. After each answer the worker checks List for its keys
// (read-your-writes across batches). It returns the model: the stored set
// a sequential execution gives.
func (w batchWorkload) run(t *testing.T, h *harness, seed uint64) map[netip.Prefix]bool {
	rng := rand.New(rand.NewPCG(seed, 7))
	keys := batchKeys(rng, w.workers*6)
	keys = slices.DeleteFunc(keys, func(p netip.Prefix) bool { return p == sharedKey })
	owned := make([][]netip.Prefix, w.workers)
	for i, p := range keys {
		owned[i%w.workers] = append(owned[i%w.workers], p)
	}
	stopFlaky := make(chan struct{})
	var flakyDone sync.WaitGroup
	if w.flaky {
		mem := h.d.backend.(*memory.Backend)
		flakyDone.Add(1)
		go func() {
			defer flakyDone.Done()
			r := rand.New(rand.NewPCG(seed, 8))
			for {
				select {
				case <-stopFlaky:
					mem.FailWith(nil)
					return
				case <-time.After(time.Duration(r.IntN(3000)) * time.Microsecond):
				}
				if r.IntN(2) == 0 {
					mem.FailWith(errors.New("injected backend failure"))
				} else {
					mem.FailWith(nil)
				}
			}
		}()
	}
	models := make([]map[netip.Prefix]bool, w.workers)
	var failed atomic.Int64
	failures := make(chan string, w.workers)
	var wg sync.WaitGroup
	for i := range w.workers {
		models[i] = map[netip.Prefix]bool{}
		c := h.client(t)
		r := rand.New(rand.NewPCG(seed, uint64(100+i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if msg := w.worker(c, r, owned[i], models[i], &failed); msg != "" {
				failures <- fmt.Sprintf("worker %d: %s", i, msg)
			}
		}()
	}
	wg.Wait()
	close(stopFlaky)
	flakyDone.Wait()
	close(failures)
	for f := range failures {
		t.Errorf("seed %d (replay with FP_BATCH_SEED=%d): %s", seed, seed, f)
	}
	if w.flaky {
		if failed.Load() == 0 {
			t.Errorf("seed %d: no request failed; the failing-backend run did not exercise failed batches", seed)
		}
		t.Logf("%d requests failed with the backend", failed.Load())
	}
	model := map[netip.Prefix]bool{sharedKey: true}
	for _, m := range models {
		for p := range m {
			model[p] = true
		}
	}
	return model
}

// worker runs one client's history; it returns a description of the first
// broken expectation, or "".
func (w batchWorkload) worker(c fence.FenceControllerClient, r *rand.Rand, mine []netip.Prefix, model map[netip.Prefix]bool, failed *atomic.Int64) string {
	call := func(fencing bool, cs []string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var err error
		if fencing {
			_, err = c.FenceClusterNetwork(ctx, &fence.FenceClusterNetworkRequest{Cidrs: cidrs(cs...)})
		} else {
			_, err = c.UnfenceClusterNetwork(ctx, &fence.UnfenceClusterNetworkRequest{Cidrs: cidrs(cs...)})
		}
		return err
	}
	listed := func() (map[netip.Prefix]int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		resp, err := c.ListClusterFence(ctx, &fence.ListClusterFenceRequest{})
		if err != nil {
			return nil, err
		}
		out := map[netip.Prefix]int{}
		for _, x := range resp.GetCidrs() {
			p, err := netip.ParsePrefix(x.GetCidr())
			if err != nil {
				return nil, fmt.Errorf("List returned %q: %v", x.GetCidr(), err)
			}
			out[p]++
		}
		return out, nil
	}
	for op := range w.ops {
		fencing := r.IntN(2) == 0
		var picked []netip.Prefix
		for range 1 + r.IntN(3) {
			picked = append(picked, mine[r.IntN(len(mine))])
		}
		var cs []string
		for _, p := range picked {
			cs = append(cs, spell(r, p))
		}
		if fencing && r.IntN(3) == 0 {
			cs = append(cs, sharedKey.String())
		}
		malformed := r.IntN(8) == 0
		if malformed {
			cs = append(cs, "10.77.0.0/33")
		}
		err := call(fencing, cs)
		switch {
		case malformed:
			if status.Code(err) != codes.InvalidArgument {
				return fmt.Sprintf("op %d %v with a malformed CIDR: %v, want INVALID_ARGUMENT", op, cs, err)
			}
		case err == nil:
			for _, p := range picked {
				if fencing {
					model[p] = true
				} else {
					delete(model, p)
				}
			}
		case w.flaky && status.Code(err) == codes.Unknown:
			failed.Add(1)
		default:
			return fmt.Sprintf("op %d fence=%v %v: %v", op, fencing, cs, err)
		}
		got, err := listed()
		if err != nil {
			return fmt.Sprintf("op %d: List: %v", op, err)
		}
		for _, p := range mine {
			if want := map[bool]int{true: 1}[model[p]]; got[p] != want {
				return fmt.Sprintf("op %d (fence=%v %v, err %v): List has %s %d times, want %d", op, fencing, cs, err, p, got[p], want)
			}
		}
	}
	return ""
}

// enforcedUnion reads what the driver's backend enforces, as merged ranges.
func enforcedUnion(t *testing.T, h *harness) []cidr.Range {
	t.Helper()
	switch b := h.d.backend.(type) {
	case *memory.Backend:
		return b.Ranges()
	case interface {
		Ranges(ipv6 bool) ([]cidr.Range, error)
	}:
		r4, err := b.Ranges(false)
		if err != nil {
			t.Fatal(err)
		}
		r6, err := b.Ranges(true)
		if err != nil {
			t.Fatal(err)
		}
		return append(r4, r6...)
	}
	t.Fatalf("cannot read the enforced set of %T", h.d.backend)
	return nil
}

// TestGroupCommitMatchesModel proves group commit correct under
// concurrency: 24 clients, each on its own connection, fence and unfence
// nested, overlapping and adjacent blocks (both families, varied
// spellings, some requests malformed) while all of them fence one shared
// block. Afterwards List, the store, the store reopened and the backend's
// enforced set (nftables in a private netns when root) all equal the
// sequential model, and at least one commit carried several requests. The
// flaky variant makes the memory backend fail at random: every request
// answered UNKNOWN must have changed nothing and every OK must hold, so a
// failed batch fails exactly its requests. FP_BATCH_SEED=N replays a run.
func TestGroupCommitMatchesModel(t *testing.T) {
	seed := batchSeed(t)
	cases := []struct {
		name     string
		backend  string
		w        batchWorkload
		maxBatch int // Options.MaxBatchCIDRs
	}{
		{"memory", "memory", batchWorkload{workers: 24, ops: 40}, 0},
		{"memory/failing-backend", "memory", batchWorkload{workers: 24, ops: 40, flaky: true}, 0},
		{"memory/batches-of-4-cidrs", "memory", batchWorkload{workers: 24, ops: 40}, 4},
		{"nftables", "nftables", batchWorkload{workers: 24, ops: 40}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Backend: tc.backend, ReconcileInterval: -1, MaxBatchCIDRs: tc.maxBatch}
			if tc.backend == "nftables" {
				if os.Geteuid() != 0 {
					t.Skip("needs root for a private netns and nftables")
				}
				o.NetNS = "new"
			}
			h := start(t, o)
			model := tc.w.run(t, h, seed)
			if t.Failed() {
				return
			}
			var want []netip.Prefix
			for p := range model {
				want = append(want, p)
			}
			slices.SortFunc(want, netip.Prefix.Compare)
			var listedPs []netip.Prefix
			for _, s := range h.list(t) {
				listedPs = append(listedPs, netip.MustParsePrefix(s))
			}
			if fmt.Sprint(listedPs) != fmt.Sprint(want) {
				t.Fatalf("seed %d: List %v, sequential model %v", seed, listedPs, want)
			}
			if got := h.d.Fences(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d: store %v, sequential model %v", seed, got, want)
			}
			if got, wantU := enforcedUnion(t, h), cidr.Union(want); fmt.Sprint(got) != fmt.Sprint(wantU) {
				t.Fatalf("seed %d: backend enforces %v, union of the model is %v", seed, got, wantU)
			}
			if n := h.d.maxBatch.Load(); n < 2 && !tc.w.flaky {
				t.Fatalf("seed %d: no commit carried more than %d request(s); the test did not exercise batching", seed, n)
			}
			if n := h.d.maxBatchSize.Load(); tc.maxBatch > 0 && n > int64(tc.maxBatch) {
				t.Fatalf("seed %d: a batch of several requests carried %d CIDRs, bound %d", seed, n, tc.maxBatch)
			}
			t.Logf("largest batch: %d requests; most CIDRs in a batch of several: %d", h.d.maxBatch.Load(), h.d.maxBatchSize.Load())
			h.d.Stop()
			h2 := start(t, Options{StatePath: h.d.o.StatePath, ReconcileInterval: -1})
			if got := h2.d.Fences(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d: store reopened %v, sequential model %v", seed, got, want)
			}
		})
	}
}

// TestBatchPanicAnswersEveryRequest: when one change of a batch panics, the
// leader's panic propagates (the gRPC recover interceptor turns it into an
// error), every other request of the batch is answered INTERNAL instead of
// waiting forever, nothing of the batch is committed, and the next
// mutation works.
func TestBatchPanicAnswersEveryRequest(t *testing.T) {
	// No harness: its cleanup stops the driver, which would hang on d.mu if
	// a request were stuck holding it; on failure the driver is leaked.
	d, err := New(context.Background(), Options{StatePath: filepath.Join(t.TempDir(), "state.db"), ReconcileInterval: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	fenceKey := func(k string) func(*txn) error {
		return func(tx *txn) error { tx.set(cidr.Spelled(k), store.Entry{Seq: tx.nextSeq(), Count: 1}); return nil }
	}
	changes := []func(*txn) error{
		fenceKey("192.0.2.0/24"),
		func(*txn) error { panic("injected panic in a change") },
		fenceKey("198.51.100.0/24"),
	}
	d.mu.Lock() // hold the batch back until all three are queued
	results := make(chan string, len(changes))
	for _, ch := range changes {
		go func() {
			defer func() {
				if p := recover(); p != nil {
					results <- "panic"
				}
			}()
			results <- status.Code(d.mutate(context.Background(), 1, ch)).String()
		}()
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		d.qmu.Lock()
		n := len(d.queue)
		d.qmu.Unlock()
		if n == len(changes) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d mutations queued", n, len(changes))
		}
	}
	d.mu.Unlock()
	var got []string
	for range changes {
		select {
		case r := <-results:
			got = append(got, r)
		case <-time.After(30 * time.Second):
			t.Fatalf("a request of the panicked batch was never answered (got %v)", got)
		}
	}
	slices.Sort(got)
	if fmt.Sprint(got) != "[Internal Internal panic]" {
		t.Fatalf("answers %v, want two INTERNAL and the leader's panic", got)
	}
	if fs := d.Fences(); len(fs) != 0 {
		t.Fatalf("the panicked batch committed %v", fs)
	}
	if err := d.mutate(context.Background(), 1, fenceKey("203.0.113.0/24")); err != nil {
		t.Fatalf("mutation after the panic: %v", err)
	}
	if fs := d.Fences(); len(fs) != 1 {
		t.Fatalf("after the panic, a fence made %v", fs)
	}
	d.Stop()
}

// TestTakeBatch: a batch is the longest prefix of the queue within the
// CIDR bound, and never empty (a request over the bound goes alone).
func TestTakeBatch(t *testing.T) {
	var q []*mreq
	for _, n := range []int{3, 3, 3, 10, 1, 1} {
		q = append(q, &mreq{size: n})
	}
	var got [][]int
	for len(q) > 0 {
		var sizes []int
		for _, m := range takeBatch(&q, 6) {
			sizes = append(sizes, m.size)
		}
		got = append(got, sizes)
	}
	if fmt.Sprint(got) != "[[3 3] [3] [10] [1 1]]" {
		t.Fatalf("batches %v", got)
	}
}
