package sanity_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/rulebook/clitest"
	"github.com/fenceproof/fenceproof/sanity"
)

// seedFences fences blocks on the driver at sock before the suite runs, in
// requests of 1000, as another user of the storage would have.
func seedFences(t *testing.T, sock string, blocks []string) {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fc := fence.NewFenceControllerClient(conn)
	for i := 0; i < len(blocks); i += 1000 {
		var cidrs []*fence.CIDR
		for _, b := range blocks[i:min(i+1000, len(blocks))] {
			cidrs = append(cidrs, &fence.CIDR{Cidr: b})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := fc.FenceClusterNetwork(ctx, &fence.FenceClusterNetworkRequest{Cidrs: cidrs})
		cancel()
		if err != nil {
			t.Fatalf("seeding fences %d..: %v", i, err)
		}
	}
}

// TestManyPreexistingFences: 20,000 fences that existed before the run, one
// of them a /64 inside the suite's IPv6 pool and one a /27 inside its IPv4
// pool. The run must avoid them, leave them all in place (SUITE-001) and run
// every rule. The naive driver holds them: the reference driver rewrites its
// whole store on every change, which would measure the driver, not the suite.
// The duration is logged; no speed is asserted here.
func TestManyPreexistingFences(t *testing.T) {
	sock := startNaive(t)
	var blocks []string
	for i := range 20000 {
		blocks = append(blocks, fmt.Sprintf("10.%d.%d.0/24", i/256, i%256))
	}
	blocks = append(blocks, "2001:db8:fe00::/64", "198.51.100.0/27")
	seedFences(t, sock, blocks)
	start := time.Now()
	r := sanityRun(t, 3*time.Minute, "--endpoint", "unix://"+sock)
	t.Logf("run with %d pre-existing fences: %s", len(blocks), time.Since(start).Round(time.Millisecond))
	if v := r.verdict(t, "SUITE-001"); v != sanity.VerdictPass {
		rr, _ := r.result.Rule("SUITE-001")
		t.Errorf("SUITE-001 is %s: %s", v, rr.Reason)
	}
	for _, rr := range r.result.Rules {
		if strings.Contains(rr.Reason, "no free") {
			t.Errorf("%s: %s", rr.ID, rr.Reason)
		}
	}
}

// TestHostileSlashZeroDoesNotHang: a pre-existing ::/0 covers the suite's
// whole IPv6 pool. Block allocation must end at once (no address-by-address
// scan): the IPv6 rules are skipped with the reason and the run finishes.
// The naive driver holds the fence, so this does not depend on whether the
// reference driver accepts /0.
func TestHostileSlashZeroDoesNotHang(t *testing.T) {
	sock := startNaive(t)
	seedFences(t, sock, []string{"::/0"})
	r := sanityRun(t, 2*time.Minute, "--endpoint", "unix://"+sock)
	rr, ok := r.result.Rule("CIDR-011")
	if !ok {
		t.Fatal("CIDR-011 not in the report")
	}
	found := false
	for _, c := range rr.Cases {
		if c.State == "skipped" && strings.Contains(c.Message, "no free") {
			found = true
		}
	}
	if !found {
		t.Errorf("CIDR-011's IPv6 case was not skipped for want of free blocks: %+v", rr.Cases)
	}
}

// startNaive builds and starts the naive test driver and returns its socket.
func startNaive(t *testing.T) string {
	t.Helper()
	bin := testDriver(t, "naivedriver")
	sock := filepath.Join(t.TempDir(), "naive.sock")
	cmd := exec.Command(bin, "--socket", sock)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	waitSocket(t, sock)
	return sock
}

func waitSocket(t *testing.T, sock string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no driver socket %s", sock)
		}
	}
}

// TestRestartCommand runs the reference driver under a supervisor loop, as a
// vendor's driver runs under its Deployment; --restart-command kills it and
// the loop starts it again on the same state. The faithful driver keeps its
// fences (RESTART-001 passes); forget-on-restart loses them, and
// persist-first=100 all but the first hundred (it fails).
func TestRestartCommand(t *testing.T) {
	for _, c := range []struct {
		name  string
		fault []string
		want  sanity.Verdict
	}{
		{"faithful", nil, sanity.VerdictPass},
		{"forget-on-restart", []string{"--fault", "forget-on-restart"}, sanity.VerdictFail},
		// State persisted only for the first 100 fences: RESTART-001 holds
		// hundreds across the restart.
		{"persist-first=100", []string{"--fault", "persist-first=100"}, sanity.VerdictFail},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sock, pid := filepath.Join(dir, "d.sock"), filepath.Join(dir, "pid")
			drv := fmt.Sprintf("%q driver --endpoint unix://%s --backend memory --state %s", clitest.Bin, sock, filepath.Join(dir, "fences.db"))
			for _, f := range c.fault {
				drv += " " + f
			}
			loop := exec.Command("bash", "-c", fmt.Sprintf("while [ ! -e %s/stop ]; do %s >>%s/driver.log 2>&1 & echo $! > %s; wait; done", dir, drv, dir, pid))
			loop.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := loop.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = os.WriteFile(filepath.Join(dir, "stop"), nil, 0o600)
				_ = syscall.Kill(-loop.Process.Pid, syscall.SIGTERM)
				_ = loop.Wait()
			})
			waitSocket(t, sock)
			restart := fmt.Sprintf("old=$(cat %[1]s); kill $old; while [ \"$(cat %[1]s)\" = \"$old\" ]; do sleep 0.05; done", pid)
			r := sanityRun(t, 2*time.Minute, "--endpoint", "unix://"+sock, "--restart-command", restart, "--label-filter", "RESTART-001 || EXPIRE-001 || SUITE-001")
			if v := r.verdict(t, "RESTART-001"); v != c.want {
				rr, _ := r.result.Rule("RESTART-001")
				t.Errorf("RESTART-001 is %s, want %s: %s", v, c.want, rr.Reason)
			}
		})
	}
}
