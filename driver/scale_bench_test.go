package driver

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// benchOptions returns driver options for a backend, skipping nftables
// without root.
func benchOptions(b *testing.B, be string) Options {
	o := Options{Backend: be, ReconcileInterval: -1}
	if be == "nftables" {
		if os.Geteuid() != 0 {
			b.Skip("needs root for a private netns and nftables")
		}
		o.NetNS = "new"
	}
	return o
}

// fenceChunked fences ps in requests of 10k (under the 1 MiB message bound).
func (h *harness) fenceChunked(b *testing.B, ps []string) {
	for i := 0; i < len(ps); i += 10000 {
		if err := h.fence(b, ps[i:min(i+10000, len(ps))]...); err != nil {
			b.Fatal(err)
		}
	}
}

// fenceOneRounds is how many fence+unfence pairs one op of
// BenchmarkFenceOne makes: a pair costs milliseconds, so -benchtime 10x
// would otherwise time 20 ms, less than one GC cycle of the 100k setup.
const fenceOneRounds = 20

// BenchmarkFenceOne fences and unfences one /24 on an empty driver and on
// one holding 100k fences: with incremental changes both cost the same.
// One op is fenceOneRounds pairs; the setup's garbage is collected and the
// nftables backend's background conntrack pass over the 100k setup fences
// is waited for before the timer starts, so neither is billed to the first
// ops.
func BenchmarkFenceOne(b *testing.B) {
	for _, be := range []string{"memory", "nftables"} {
		for _, stored := range []int{0, 100000} {
			b.Run(fmt.Sprintf("%s/stored=%d", be, stored), func(b *testing.B) {
				h := start(b, benchOptions(b, be))
				h.fenceChunked(b, spread(stored))
				if p, ok := h.d.backend.(interface{ WaitIdle() }); ok {
					p.WaitIdle()
				}
				runtime.GC()
				b.ResetTimer()
				for range b.N * fenceOneRounds {
					if err := h.fence(b, "172.16.0.0/24"); err != nil {
						b.Fatal(err)
					}
					if err := h.unfence(b, "172.16.0.0/24"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkConcurrent50 runs 50 clients, each on its own connection (as 50
// processes would be; streams are bounded per connection), each fencing
// and unfencing its own block. One op is 50 fence+unfence pairs taken from
// a shared counter, so even -benchtime 10x keeps all 50 clients busy (500
// pairs); ns/op is the time per 50 pairs. Each backend runs on its own, so
// load from other processes between the two runs skews their ratio; see
// BenchmarkConcurrent50Paired.
func BenchmarkConcurrent50(b *testing.B) {
	for _, be := range []string{"memory", "nftables"} {
		b.Run(be, func(b *testing.B) {
			clients := concurrentSetup(b, be)
			b.ResetTimer()
			if err := drivePairs(b, clients, concurrentClients*b.N); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkConcurrent50Paired measures the 50-client throughput ratio of
// nftables to memory with both drivers up, interleaved: each op runs 50
// pairs on memory, 100 on nftables, 50 on memory again (ABBA, so load that
// rises or falls during the op weighs on both alike). It reports the time
// per 50 pairs of each and nft/mem-throughput (memory time / nftables
// time), the figure make bench-driver prints.
func BenchmarkConcurrent50Paired(b *testing.B) {
	mem, nft := concurrentSetup(b, "memory"), concurrentSetup(b, "nftables")
	var tm, tn time.Duration
	timed := func(clients []fence.FenceControllerClient, pairs int) time.Duration {
		t0 := time.Now()
		if err := drivePairs(b, clients, pairs); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	b.ResetTimer()
	for range b.N {
		tm += timed(mem, concurrentClients)
		tn += timed(nft, 2*concurrentClients)
		tm += timed(mem, concurrentClients)
	}
	rounds := float64(2 * b.N)
	b.ReportMetric(float64(tm)/1e6/rounds, "mem-ms/50pairs")
	b.ReportMetric(float64(tn)/1e6/rounds, "nft-ms/50pairs")
	b.ReportMetric(float64(tm)/float64(tn), "nft/mem-throughput")
}

// concurrentSetup starts a driver on backend be and opens one connection
// per client.
func concurrentSetup(b *testing.B, be string) []fence.FenceControllerClient {
	h := start(b, benchOptions(b, be))
	clients := make([]fence.FenceControllerClient, concurrentClients)
	for c := range clients {
		clients[c] = h.client(b)
	}
	return clients
}

// drivePairs makes pairs fence+unfence pairs over all clients at once,
// client c on block 198.18.c.0/24, and returns the first error.
func drivePairs(b *testing.B, clients []fence.FenceControllerClient, pairs int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, len(clients))
	for c, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			block := cidrs(fmt.Sprintf("198.18.%d.0/24", c))
			for next.Add(1) <= int64(pairs) {
				if _, err := cl.FenceClusterNetwork(ctx(b), &fence.FenceClusterNetworkRequest{Cidrs: block}); err != nil {
					errs <- err
					return
				}
				if _, err := cl.UnfenceClusterNetwork(ctx(b), &fence.UnfenceClusterNetworkRequest{Cidrs: block}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// concurrentClients is the client count of BenchmarkConcurrent50.
const concurrentClients = 50

// floodClients and floodBytes are the attack: 64 concurrent requests of
// 4 MB each, with a wrong secret.
const (
	floodClients = 64
	floodBytes   = 4 << 20
)

// BenchmarkWrongSecretFlood measures the driver's memory under the attack,
// sent from a separate process (this test binary re-run as
// TestFloodHelper) so that only the driver's memory is counted: the peak RSS
// of this process during the attack (VmHWM after resetting it) and the peak
// Go heap, sampled every millisecond.
func BenchmarkWrongSecretFlood(b *testing.B) {
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		b.Skip("needs Linux /proc to measure peak RSS")
	}
	h := start(b, Options{Secrets: map[string]string{"userKey": "right"}, ReconcileInterval: -1})
	var peakRSS, peakHeap, baseRSS float64
	for range b.N {
		runtime.GC()
		baseRSS = procKB("VmRSS")
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		stop := make(chan struct{})
		heap := make(chan float64)
		go func() {
			var m runtime.MemStats
			var top uint64
			t := time.NewTicker(time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-stop:
					heap <- float64(top) / (1 << 20)
					return
				case <-t.C:
					runtime.ReadMemStats(&m)
					top = max(top, m.HeapInuse)
				}
			}
		}()
		cmd := exec.Command(os.Args[0], "-test.run=^TestFloodHelper$", "-test.count=1")
		cmd.Env = append(os.Environ(), "FP_FLOOD_ADDR="+h.addr)
		out, err := cmd.CombinedOutput()
		close(stop)
		peakHeap = max(peakHeap, <-heap)
		if err != nil {
			b.Fatalf("flood helper: %v\n%s", err, out)
		}
		peakRSS = max(peakRSS, procKB("VmHWM")/1024)
	}
	b.ReportMetric(peakRSS, "peak-rss-MB")
	b.ReportMetric(peakHeap, "peak-heap-MB")
	b.ReportMetric(baseRSS/1024, "base-rss-MB")
	b.ReportMetric(float64(floodClients*floodBytes)/(1<<20), "attack-MB")
}

// TestFloodHelper is the attacking process of BenchmarkWrongSecretFlood; it
// does nothing unless FP_FLOOD_ADDR is set. Every request must be refused.
func TestFloodHelper(t *testing.T) {
	addr := os.Getenv("FP_FLOOD_ADDR")
	if addr == "" {
		t.Skip("helper process of BenchmarkWrongSecretFlood")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	h := fence.NewFenceControllerClient(conn)
	payload := []*fence.CIDR{{Cidr: strings.Repeat("9", floodBytes)}}
	var wg sync.WaitGroup
	codesSeen := make(chan codes.Code, floodClients)
	for range floodClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.FenceClusterNetwork(ctx(t), &fence.FenceClusterNetworkRequest{Cidrs: payload, Secrets: map[string]string{"userKey": "wrong"}})
			codesSeen <- status.Code(err)
		}()
	}
	wg.Wait()
	close(codesSeen)
	for c := range codesSeen {
		if c != codes.ResourceExhausted && c != codes.Unauthenticated {
			t.Fatalf("a flood request got %s", c)
		}
	}
}

// procKB reads a "Key:   N kB" line of /proc/self/status.
func procKB(key string) float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return n
		}
	}
	return 0
}
