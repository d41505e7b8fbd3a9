package driver

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/driver/backend/nftables"
	"github.com/fenceproof/fenceproof/driver/cidr"
)

// TestMain doubles as the crash test's child driver process.
func TestMain(m *testing.M) {
	if os.Getenv("FP_CRASH_CHILD") == "1" {
		os.Exit(crashChild())
	}
	os.Exit(m.Run())
}

func crashChild() int {
	var faults []string
	if f := os.Getenv("FP_FAULTS"); f != "" {
		faults = strings.Split(f, ",")
	}
	d, err := New(context.Background(), Options{
		Backend: os.Getenv("FP_BACKEND"), NetNS: os.Getenv("FP_NETNS"), StatePath: os.Getenv("FP_STATE"),
		Faults: faults, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	if err := d.Serve("unix://" + os.Getenv("FP_SOCK")); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// crashEnv is one durability scenario: backend, state file, netns.
type crashEnv struct {
	backend, netns, state, dir string
	faultsOnRestart            string
}

func (e crashEnv) spawn(t *testing.T, faults string) (*exec.Cmd, fence.FenceControllerClient, func()) {
	t.Helper()
	sock := filepath.Join(e.dir, fmt.Sprintf("d%d.sock", time.Now().UnixNano()))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FP_CRASH_CHILD=1", "FP_BACKEND="+e.backend, "FP_NETNS="+e.netns,
		"FP_STATE="+e.state, "FP_SOCK="+sock, "FP_FAULTS="+faults)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	id := identity.NewIdentityClient(conn)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := id.Probe(c, &identity.ProbeRequest{})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("child driver did not come up: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd, fence.NewFenceControllerClient(conn), func() { conn.Close() }
}

// crashSeed returns FP_CRASH_SEED or a fresh seed, and logs it for replay.
func crashSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FP_CRASH_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("FP_CRASH_SEED: %v", err)
		}
	}
	t.Logf("crash seed %d (replay with FP_CRASH_SEED=%d)", seed, seed)
	return seed
}

// fenceUntilKilled fences distinct prefixes from 4 concurrent clients,
// kill -9s the driver after a random delay and returns the acknowledged
// prefixes.
func fenceUntilKilled(t *testing.T, rng *rand.Rand, cmd *exec.Cmd, f fence.FenceControllerClient, round int) []string {
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		stop  = make(chan struct{})
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req := []string{fmt.Sprintf("10.%d.%d.0/24", round*4+w, i%256)}
				if i%5 == 0 {
					req = append(req, netip.PrefixFrom(netip.AddrFrom16([16]byte{0xfd, byte(round*4 + w), byte(i >> 8), byte(i)}), 32).String())
				}
				c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := f.FenceClusterNetwork(c, &fence.FenceClusterNetworkRequest{Cidrs: cidrs(req...)})
				cancel()
				if err != nil {
					return // the driver is gone
				}
				mu.Lock()
				acked = append(acked, req...)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Duration(20+rng.IntN(300)) * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	close(stop)
	wg.Wait()
	return acked
}

// missing returns the acknowledged prefixes absent from list.
func missing(acked, list []string) []string {
	have := map[string]bool{}
	for _, l := range list {
		have[l] = true
	}
	var out []string
	for _, a := range acked {
		if !have[a] {
			out = append(out, a)
		}
	}
	return out
}

func listAll(t *testing.T, f fence.FenceControllerClient) []string {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := f.ListClusterFence(c, &fence.ListClusterFenceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range resp.GetCidrs() {
		out = append(out, x.GetCidr())
	}
	return out
}

// unenforced returns the acknowledged prefixes not covered by the kernel set
// of the netns at path.
func unenforced(t *testing.T, path string, acked []string) []string {
	b, err := nftables.New(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r4, err4 := b.Ranges(false)
	r6, err6 := b.Ranges(true)
	if err4 != nil || err6 != nil {
		t.Fatalf("read sets: %v %v", err4, err6)
	}
	rs := append(r4, r6...)
	var out []string
	for _, a := range acked {
		p := netip.MustParsePrefix(a)
		if u := cidr.Union([]netip.Prefix{p}); !cidr.Contains(rs, u[0].From) || !cidr.Contains(rs, u[0].To) {
			out = append(out, a)
		}
	}
	return out
}

func runCrashRounds(t *testing.T, e crashEnv, rounds int) (lost []string) {
	rng := rand.New(rand.NewPCG(crashSeed(t), 1))
	var acked []string
	cmd, f, done := e.spawn(t, "")
	for round := range rounds {
		got := fenceUntilKilled(t, rng, cmd, f, round)
		done()
		acked = append(acked, got...)
		t.Logf("round %d: %d fences acknowledged before kill -9 (total %d)", round, len(got), len(acked))
		if e.backend == "nftables" {
			if m := unenforced(t, e.netns, acked); len(m) > 0 {
				t.Fatalf("round %d: %d acknowledged fences not enforced in the kernel after kill -9, e.g. %v", round, len(m), m[0])
			}
		}
		cmd, f, done = e.spawn(t, e.faultsOnRestart)
		if m := missing(acked, listAll(t, f)); len(m) > 0 {
			lost = m
			break
		}
		if e.backend == "nftables" {
			if m := unenforced(t, e.netns, acked); len(m) > 0 {
				t.Fatalf("round %d: %d acknowledged fences listed but not enforced after restart, e.g. %v", round, len(m), m[0])
			}
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	done()
	return lost
}

func crashDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "fpcrash")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestCrashDurability kills the driver with SIGKILL while clients fence and
// checks that every acknowledged fence is listed (and, with nftables as
// root, enforced) after the restart.
func TestCrashDurability(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns driver processes")
	}
	t.Run("memory", func(t *testing.T) {
		dir := crashDir(t)
		if lost := runCrashRounds(t, crashEnv{backend: "memory", state: filepath.Join(dir, "state.db"), dir: dir}, 3); len(lost) > 0 {
			t.Fatalf("%d acknowledged fences lost, e.g. %v", len(lost), lost[0])
		}
	})
	t.Run("nftables", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root for a network namespace and nftables")
		}
		n, err := ns.TempNetNS()
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		dir := crashDir(t)
		e := crashEnv{backend: "nftables", netns: fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), n.Fd()), state: filepath.Join(dir, "state.db"), dir: dir}
		if lost := runCrashRounds(t, e, 3); len(lost) > 0 {
			t.Fatalf("%d acknowledged fences lost, e.g. %v", len(lost), lost[0])
		}
	})
	t.Run("forget-on-restart is caught", func(t *testing.T) {
		dir := crashDir(t)
		e := crashEnv{backend: "memory", state: filepath.Join(dir, "state.db"), dir: dir, faultsOnRestart: "forget-on-restart"}
		if lost := runCrashRounds(t, e, 1); len(lost) == 0 {
			t.Fatal("the durability check did not notice forget-on-restart")
		}
	})
}
