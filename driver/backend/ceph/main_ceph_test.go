//go:build ceph

package ceph_test

// The tests of this file set run the Ceph backend against a real Ceph:
// one single-node cluster (Debian's Pacific daemons, ceph/cluster) started
// once for the package in a network namespace of its own, a fencing
// client and writer clients each in a namespace of their own with its own
// address, the driver in-process or as the real binary. They skip with the
// reason when not root or when Ceph's packages are missing.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/audit"
	"github.com/fenceproof/fenceproof/ceph/cluster"
	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/ceph/writer"
	"github.com/fenceproof/fenceproof/driver"
	rswriter "github.com/fenceproof/fenceproof/refstore/writer"
)

// The package's cluster and clients. Addresses on 10.99.0.0/24: .1 the
// daemons, .2 the fencer (the driver), .3 the neighbour writer, .4 and .5
// writers inside 10.99.0.4/30, the block the enforcement tests fence.
var env struct {
	skip      string
	c         *cluster.Cluster
	fencer    *cluster.ClientInfo
	neighbour *cluster.ClientInfo
	fenced    []*cluster.ClientInfo
	admin     *librados.Conn
	bin       string // fenceproof built with -tags ceph
	reports   string // FP_CEPH_REPORTS: where figures and sanity reports go ("" = a temp dir)
}

// fencedBlock is the block the enforcement tests fence: it holds the
// fenced writers (.4, .5), not the neighbour (.3) nor the fencer (.2).
const fencedBlock = "10.99.0.4/30"

// fastPaxos is the mon's paxos_propose_interval for the package: 0.1 s
// instead of 1 s, so the ~200 blocklist changes of a sanity run take
// seconds. The figures tests put Ceph's default back while they measure.
const fastPaxos = "0.1"

func TestMain(m *testing.M) {
	os.Exit(func() int {
		if err := cluster.RequireRoot(); err != nil {
			env.skip = err.Error()
			return m.Run()
		}
		if miss := cluster.Missing(); len(miss) > 0 {
			env.skip = fmt.Sprintf("Ceph packages missing: %v (make deps as root installs them)", miss)
			return m.Run()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		t0 := time.Now()
		c, err := cluster.Start(ctx, cluster.Options{Config: map[string]string{"paxos_propose_interval": fastPaxos},
			Log: slog.New(slog.NewTextHandler(os.Stderr, nil))})
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting Ceph:", err)
			return 1
		}
		defer c.Stop()
		fmt.Fprintf(os.Stderr, "ceph: cluster up in %s\n", time.Since(t0).Round(time.Millisecond))
		env.c = c
		if env.fencer, err = c.AddClient(ctx, "fencer", cluster.FencerCaps()); err == nil {
			if env.neighbour, err = c.AddClient(ctx, "neighbour", cluster.WriterCaps(c.Pool())); err == nil {
				for _, n := range []string{"fenced-a", "fenced-b"} {
					var ci *cluster.ClientInfo
					if ci, err = c.AddClient(ctx, n, cluster.WriterCaps(c.Pool())); err != nil {
						break
					}
					env.fenced = append(env.fenced, ci)
				}
			}
		}
		if err == nil {
			env.admin, err = librados.Dial(librados.Options{Conf: c.AdminConf(), NetNS: c.NetNSPath()})
		}
		if err == nil {
			env.bin, err = buildBinary()
			if os.Getenv("FP_CEPH_BIN") == "" && env.bin != "" {
				defer os.RemoveAll(filepath.Dir(env.bin))
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "ceph test setup:", err)
			return 1
		}
		defer env.admin.Shutdown()
		env.reports = os.Getenv("FP_CEPH_REPORTS")
		return m.Run()
	}())
}

// buildBinary returns FP_CEPH_BIN, or builds fenceproof with -tags ceph.
func buildBinary() (string, error) {
	if b := os.Getenv("FP_CEPH_BIN"); b != "" {
		return filepath.Abs(b)
	}
	dir, err := os.MkdirTemp("", "fpceph-bin")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "fenceproof-ceph")
	out, err := exec.Command("go", "build", "-tags", "ceph", "-o", bin, "../../../cmd/fenceproof").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build -tags ceph: %v\n%s", err, out)
	}
	return bin, nil
}

func need(t *testing.T) {
	t.Helper()
	if env.skip != "" {
		t.Skip("SKIP: " + env.skip)
	}
}

// reportDir is where a test writes what it measured.
func reportDir(t *testing.T) string {
	if env.reports != "" {
		os.MkdirAll(env.reports, 0o755)
		return env.reports
	}
	return t.TempDir()
}

// paxos sets the running mon's paxos_propose_interval and paxos_min_wait
// for the rest of the test.
func paxos(t *testing.T, interval, minWait string) {
	t.Helper()
	ctx := context.Background()
	set := func(interval, minWait string) error {
		if err := env.c.TellConfig(ctx, "mon.a", "paxos_propose_interval", interval); err != nil {
			return err
		}
		return env.c.TellConfig(ctx, "mon.a", "paxos_min_wait", minWait)
	}
	if err := set(interval, minWait); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set(fastPaxos, "0.05") })
}

// cephOptions are the driver's Ceph options as the fencer client.
func cephOptions() driver.CephOptions {
	return driver.CephOptions{Conf: env.fencer.Conf, User: env.fencer.Name, NetNS: env.fencer.NetNSPath(), MonTimeout: 10 * time.Second}
}

// runningDriver is an in-process driver with a JSON log file and a gRPC
// client over its unix socket.
type runningDriver struct {
	d      *driver.Driver
	dir    string
	log    string
	client fence.FenceControllerClient
	conn   *grpc.ClientConn
}

// startDriver starts the reference driver with the Ceph backend; dir keeps
// its state (reuse it to restart the driver).
func startDriver(t *testing.T, dir string, edit func(*driver.Options)) (*runningDriver, error) {
	t.Helper()
	logPath := filepath.Join(dir, "driver.log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lf.Close() })
	o := driver.Options{Backend: "ceph", Ceph: cephOptions(), StatePath: filepath.Join(dir, "fences.db"),
		Logger: slog.New(slog.NewJSONHandler(lf, nil)), ReconcileInterval: -1}
	if edit != nil {
		edit(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := driver.New(ctx, o)
	if err != nil {
		return nil, err
	}
	sock := "unix://" + filepath.Join(dir, "d.sock")
	if _, err := d.Start(sock); err != nil {
		d.Stop()
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		d.Stop()
		t.Fatal(err)
	}
	rd := &runningDriver{d: d, dir: dir, log: logPath, client: fence.NewFenceControllerClient(conn), conn: conn}
	t.Cleanup(rd.stop)
	return rd, nil
}

func (rd *runningDriver) stop() {
	rd.conn.Close()
	rd.d.Stop()
}

func cidrs(ss ...string) []*fence.CIDR {
	out := make([]*fence.CIDR, len(ss))
	for i, s := range ss {
		out[i] = &fence.CIDR{Cidr: s}
	}
	return out
}

// fenceRPC fences with a deadline and returns the error and the time.
func (rd *runningDriver) fenceRPC(deadline time.Duration, blocks ...string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	t0 := time.Now()
	_, err := rd.client.FenceClusterNetwork(ctx, &fence.FenceClusterNetworkRequest{Cidrs: cidrs(blocks...)})
	return time.Since(t0), err
}

func (rd *runningDriver) unfenceRPC(deadline time.Duration, blocks ...string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	t0 := time.Now()
	_, err := rd.client.UnfenceClusterNetwork(ctx, &fence.UnfenceClusterNetworkRequest{Cidrs: cidrs(blocks...)})
	return time.Since(t0), err
}

func (rd *runningDriver) list(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := rd.client.ListClusterFence(ctx, &fence.ListClusterFenceRequest{})
	if err != nil {
		t.Fatalf("ListClusterFence: %v", err)
	}
	var out []string
	for _, c := range r.GetCidrs() {
		out = append(out, c.GetCidr())
	}
	return out
}

// blocklist is the OSD map's blocklist as client.admin reads it: the
// address and range entries with their expiry, and the epoch.
func blocklist(t *testing.T) (map[string]string, int) {
	t.Helper()
	out, _, err := env.admin.MonCommand([]byte(`{"prefix":"osd dump","format":"json"}`))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Epoch          int               `json:"epoch"`
		Blocklist      map[string]string `json:"blocklist"`
		RangeBlocklist map[string]string `json:"range_blocklist"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for k, v := range d.Blocklist {
		m[k] = v
	}
	for k, v := range d.RangeBlocklist {
		m[k] = v
	}
	return m, d.Epoch
}

// adminBlocklist runs `osd blocklist` as client.admin (an operator's hand).
func adminBlocklist(t *testing.T, op, addr string, expire string) string {
	t.Helper()
	cmd := map[string]any{"prefix": "osd blocklist", "blocklistop": op, "addr": addr}
	if r, ok := strings.CutPrefix(addr, "range "); ok {
		cmd["range"], cmd["addr"] = "range", r
	}
	if expire != "" {
		cmd["expire"] = json.Number(expire)
	}
	raw, _ := json.Marshal(cmd)
	_, st, err := env.admin.MonCommand(raw)
	if err != nil {
		t.Fatalf("osd blocklist %s %s: %v %s", op, addr, err, st)
	}
	return st
}

// runningWriter is a Ceph writer in its client's namespace.
type runningWriter struct {
	ci     *cluster.ClientInfo
	w      *writer.Writer
	log    bytes.Buffer
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	conn   *librados.Conn
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// startWriter connects ci (from its namespace) and writes every 20 ms.
func startWriter(t *testing.T, ci *cluster.ClientInfo, id string) *runningWriter {
	t.Helper()
	conn, err := librados.Dial(librados.Options{Conf: ci.Conf, User: ci.Name, NetNS: ci.NetNSPath(), OSDTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p, err := conn.Pool(env.c.Pool())
	if err != nil {
		t.Fatal(err)
	}
	rw := &runningWriter{ci: ci, conn: conn, done: make(chan struct{})}
	rw.w, err = writer.New(p, writer.Options{ID: id, Source: ci.Addr, Log: lockedBuffer{&rw.mu, &rw.log}})
	if err != nil {
		t.Fatal(err)
	}
	if src := conn.Source(); src != "" && src != ci.Addr {
		t.Fatalf("writer %s connects from %s, want %s", id, src, ci.Addr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rw.cancel = cancel
	go func() {
		defer close(rw.done)
		rw.w.Run(ctx)
		p.Close()
		conn.Shutdown()
	}()
	t.Cleanup(rw.stop)
	return rw
}

func (rw *runningWriter) stop() {
	rw.cancel()
	<-rw.done
}

func (rw *runningWriter) attempts(t *testing.T) []rswriter.Attempt {
	t.Helper()
	rw.mu.Lock()
	defer rw.mu.Unlock()
	var out []rswriter.Attempt
	for _, l := range bytes.Split(rw.log.Bytes(), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var a rswriter.Attempt
		if err := json.Unmarshal(l, &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// oracle checks a run: the driver's log, the writers' attempts, and the
// writes Ceph accepted (the writers' audit objects, read by client.admin).
func oracle(t *testing.T, rd *runningDriver, ws ...*runningWriter) (*audit.Result, []rswriter.Attempt) {
	t.Helper()
	evs, _, err := audit.ReadDriverLog(rd.log)
	if err != nil {
		t.Fatal(err)
	}
	var atts []rswriter.Attempt
	for _, w := range ws {
		atts = append(atts, w.attempts(t)...)
	}
	p, err := env.admin.Pool(env.c.Pool())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	recs, warns, err := writer.Audit(p)
	if err != nil {
		t.Fatal(err)
	}
	return audit.Check(audit.Input{Audit: recs, Driver: evs, Writers: atts, Warnings: warns}, audit.Options{}), atts
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
