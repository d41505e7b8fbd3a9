package audit_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/audit"
	"github.com/fenceproof/fenceproof/driver"
	"github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// rig is a real refstore, a real reference driver with the refstore backend
// (gRPC over a unix socket) and two writers bound to 127.0.0.2 (worker-a)
// and 127.0.0.3 (worker-b), all on loopback TCP.
type rig struct {
	t       *testing.T
	dir     string
	rs      *refstore.Server
	drv     *driver.Driver
	fc      fence.FenceControllerClient
	conn    *grpc.ClientConn
	writers map[string]*writer.Writer
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	logs    []*os.File
}

func newRig(t *testing.T, faults ...string) *rig {
	t.Helper()
	r := &rig{t: t, dir: t.TempDir(), writers: map[string]*writer.Writer{}}
	quiet := slog.New(slog.NewTextHandler(&testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var err error
	r.rs, err = refstore.New(refstore.Options{Listen: "127.0.0.1:0", Admin: "unix://" + r.path("admin.sock"),
		AuditPath: r.path("audit.log"), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.rs.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.rs.Stop)
	r.startDriver(faults...)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	t.Cleanup(r.stopWriters)
	for id, src := range map[string]string{"worker-a": "127.0.0.2", "worker-b": "127.0.0.3"} {
		f := r.create(id + ".log")
		w, err := writer.New(writer.Options{Server: r.rs.Addr().String(), ID: id, Source: src,
			Interval: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Timeout: 5 * time.Second, Log: f})
		if err != nil {
			t.Fatal(err)
		}
		r.writers[id] = w
		r.wg.Add(1)
		go func() { defer r.wg.Done(); w.Run(ctx) }()
	}
	return r
}

func (r *rig) path(name string) string { return filepath.Join(r.dir, name) }

func (r *rig) create(name string) *os.File {
	f, err := os.OpenFile(r.path(name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		r.t.Fatal(err)
	}
	r.logs = append(r.logs, f)
	r.t.Cleanup(func() { f.Close() })
	return f
}

func (r *rig) startDriver(faults ...string) {
	t := r.t
	d, err := driver.New(context.Background(), driver.Options{Backend: "refstore", RefstoreAdmin: "unix://" + r.path("admin.sock"),
		StatePath: r.path("driver.db"), Faults: faults, Logger: slog.New(slog.NewJSONHandler(r.create("driver.log"), nil))})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := d.Start("unix://" + r.path("driver.sock"))
	if err != nil {
		t.Fatal(err)
	}
	r.drv = d
	t.Cleanup(d.Stop)
	conn, err := grpc.NewClient(ep, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r.conn, r.fc = conn, fence.NewFenceControllerClient(conn)
}

func (r *rig) stopWriters() {
	r.cancel()
	r.wg.Wait()
}

// waitOK waits until writer id has n more acknowledged writes than now.
func (r *rig) waitOK(id string, n int) {
	r.t.Helper()
	start := r.writers[id].Counts()[writer.OutcomeOK]
	deadline := time.Now().Add(30 * time.Second)
	for r.writers[id].Counts()[writer.OutcomeOK] < start+n {
		if time.Now().After(deadline) {
			r.t.Fatalf("writer %s: fewer than %d acknowledged writes in 30 s: %v", id, n, r.writers[id].Counts())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitRefused waits until writer id has been refused once more.
func (r *rig) waitRefused(id string) {
	r.t.Helper()
	start := r.writers[id].Counts()[writer.OutcomeRefused]
	deadline := time.Now().Add(30 * time.Second)
	for r.writers[id].Counts()[writer.OutcomeRefused] <= start {
		if time.Now().After(deadline) {
			r.t.Fatalf("writer %s: no refusal in 30 s: %v", id, r.writers[id].Counts())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *rig) fence(cidrs ...string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.fc.FenceClusterNetwork(ctx, &fence.FenceClusterNetworkRequest{Cidrs: cidrList(cidrs)}); err != nil {
		r.t.Fatalf("FenceClusterNetwork %v: %v", cidrs, err)
	}
}

func (r *rig) unfence(cidrs ...string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.fc.UnfenceClusterNetwork(ctx, &fence.UnfenceClusterNetworkRequest{Cidrs: cidrList(cidrs)}); err != nil {
		r.t.Fatalf("UnfenceClusterNetwork %v: %v", cidrs, err)
	}
}

func cidrList(cs []string) []*fence.CIDR {
	out := make([]*fence.CIDR, len(cs))
	for i, c := range cs {
		out[i] = &fence.CIDR{Cidr: c}
	}
	return out
}

// finish stops everything and runs the oracle on the files.
func (r *rig) finish() *audit.Result {
	r.t.Helper()
	r.stopWriters()
	r.drv.Stop()
	r.rs.Stop()
	in, err := audit.Load(audit.Files{Audit: []string{r.path("audit.log")}, DriverLogs: []string{r.path("driver.log")},
		WriterLogs: []string{r.path("worker-a.log"), r.path("worker-b.log")}, EnforceLog: r.path("enforce.log")})
	if err != nil {
		r.t.Fatal(err)
	}
	res := audit.Check(in, audit.Options{})
	r.t.Log(res.Summary())
	if testing.Verbose() {
		r.t.Log("\n" + res.Markdown(r.t.Name()) + res.TimelineText())
	}
	dir, name := r.dir, "audit"
	if d := os.Getenv("FP_AUDIT_REPORTS"); d != "" { // make audit-demo
		dir, name = d, "audit-local-"+strings.TrimPrefix(r.t.Name(), "TestIntegration")
	}
	if err := res.WriteReports(dir, name, "Write audit: "+r.t.Name()); err != nil {
		r.t.Fatal(err)
	}
	return res
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// fenceUnfence is the scenario both drivers run: writes flow, B's /32 is
// fenced, held, unfenced, and B resumes.
func fenceUnfence(r *rig, hold time.Duration) {
	r.waitOK("worker-a", 20)
	r.waitOK("worker-b", 20)
	r.fence("127.0.0.3/32")
	time.Sleep(hold)
	r.waitOK("worker-a", 20) // A keeps writing during the fence
	r.unfence("127.0.0.3/32")
	r.waitOK("worker-b", 20)
	r.waitOK("worker-a", 20)
}

func TestIntegrationFaithfulDriverIsClean(t *testing.T) {
	r := newRig(t)
	r.waitOK("worker-a", 1)
	r.waitOK("worker-b", 1)
	// GetFenceClients reports refstore's clients by id with /32 addresses.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := r.fc.GetFenceClients(ctx, &fence.GetFenceClientsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range cl.GetClients() {
		var as []string
		for _, a := range c.GetAddresses() {
			as = append(as, a.GetCidr())
		}
		got[c.GetId()] = strings.Join(as, ",")
	}
	if len(got) != 2 || got["worker-a"] != "127.0.0.2/32" || got["worker-b"] != "127.0.0.3/32" {
		t.Fatalf("GetFenceClients: %v, want worker-a 127.0.0.2/32 and worker-b 127.0.0.3/32", got)
	}
	fenceUnfence(r, 500*time.Millisecond)
	res := r.finish()
	if !res.OK() {
		t.Fatalf("the faithful driver must pass the oracle: %s\n%s", res.Summary(), res.Markdown("faithful"))
	}
	if len(res.Windows) != 1 || res.Windows[0].Key != "127.0.0.3/32" || res.Windows[0].To == audit.Never {
		t.Fatalf("want one closed window for 127.0.0.3/32, got %+v", res.Windows)
	}
	figs := map[string]audit.ClientFigures{}
	for _, c := range res.Clients {
		figs[c.Client] = c
	}
	a, b := figs["worker-a"], figs["worker-b"]
	if a.Fenced || a.FailedUnfenced != 0 || a.Lost != 0 || a.Refused != 0 {
		t.Errorf("worker-a was never fenced and must lose nothing: %+v", a)
	}
	if !b.Fenced || b.Refused+b.Errors == 0 || b.Lost != 0 {
		t.Errorf("worker-b must have been fenced, refused at least once, and lost no acknowledged write: %+v", b)
	}
	e := res.Episodes[0]
	if e.EnforceNs == 0 || e.EnforceDeltaMs >= 0 {
		t.Errorf("refstore must enforce before the driver acknowledges: enforce %d, delta %.3f ms", e.EnforceNs, e.EnforceDeltaMs)
	}
	for _, s := range e.Sources {
		if strings.HasPrefix(s.Source, "worker-b@") && (s.During != 0 || s.After == 0 || s.ResumeMs <= 0) {
			t.Errorf("worker-b: want no write during the fence and a resumption after it: %+v", s)
		}
		if strings.HasPrefix(s.Source, "worker-a@") && s.During == 0 {
			t.Errorf("worker-a must keep writing during the fence: %+v", s)
		}
	}
}

func TestIntegrationAckBeforeEnforceIsCaught(t *testing.T) {
	r := newRig(t, "ack-before-enforce=3s")
	r.waitOK("worker-a", 20)
	r.waitOK("worker-b", 20)
	r.fence("127.0.0.3/32")
	// Enforcement comes 3 s after the ack: B keeps getting writes accepted
	// (waiting for them, not for a time, keeps this exact on a loaded machine).
	r.waitOK("worker-b", 5)
	r.waitRefused("worker-b") // then the late enforcement refuses it
	r.unfence("127.0.0.3/32")
	r.waitOK("worker-b", 20)
	res := r.finish()
	if res.OK() {
		t.Fatalf("the oracle passed a driver that acknowledges before enforcing:\n%s", res.Markdown("ack-before-enforce"))
	}
	v := res.First()
	if v.Kind != audit.KindWriteAfterFence || v.Client != "worker-b" || !strings.HasPrefix(v.Addr, "127.0.0.3:") {
		t.Fatalf("first violation: want a write-after-fence by worker-b from 127.0.0.3, got %s", v)
	}
	if v.TNs <= v.Window.From || v.DeltaMs <= 0 || v.Window.Key != "127.0.0.3/32" {
		t.Fatalf("the offending write must be accepted after the ack of 127.0.0.3/32: %s", v)
	}
	// The record named is exactly one line of the audit log, and the earliest
	// worker-b record after the ack.
	raw, err := os.ReadFile(r.path("audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	var first *refstore.AuditRecord
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec refstore.AuditRecord
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Client == "worker-b" && rec.TNs > v.Window.From && (first == nil || rec.TNs < first.TNs) {
			first = &rec
		}
	}
	if want, _ := json.Marshal(first); v.Record != string(want) || !strings.Contains(string(raw), v.Record) {
		t.Fatalf("the violation names %s, want the first worker-b record after the ack %s", v.Record, want)
	}
	late := 0
	for _, x := range res.Violations {
		if x.Kind == audit.KindWriteAfterFence && x.Client != "worker-b" {
			t.Fatalf("only worker-b was fenced, yet %s", x)
		}
		if x.Kind == audit.KindEnforcedLate {
			late++
		}
	}
	if late != 1 {
		t.Errorf("want exactly one enforced-after-ack violation, got %d", late)
	}
	if e := res.Episodes[0]; e.EnforceDeltaMs <= 0 {
		t.Errorf("with the fault refstore enforces after the ack; got %.3f ms", e.EnforceDeltaMs)
	}
}

// restartWhileFenced fences B, restarts the driver (same state file) while
// B is fenced, waits, then unfences.
func restartWhileFenced(r *rig, restartFaults ...string) {
	r.waitOK("worker-b", 20)
	r.fence("127.0.0.3/32")
	r.drv.Stop()
	r.conn.Close()
	r.startDriver(restartFaults...)
	time.Sleep(500 * time.Millisecond)
	r.waitOK("worker-a", 20)
}

func TestIntegrationDriverRestartKeepsTheFence(t *testing.T) {
	r := newRig(t)
	restartWhileFenced(r)
	r.unfence("127.0.0.3/32")
	r.waitOK("worker-b", 10)
	res := r.finish()
	if !res.OK() {
		t.Fatalf("restart with the fence stored must stay clean: %s", res.Summary())
	}
	if len(res.Restarts) != 2 || len(res.Restarts[1].Missing) != 0 || strings.Join(res.Restarts[1].Restored, ",") != "127.0.0.3/32" {
		t.Fatalf("restarts %+v", res.Restarts)
	}
}

func TestIntegrationForgetfulRestartIsCaught(t *testing.T) {
	r := newRig(t)
	restartWhileFenced(r, "forget-on-restart")
	r.waitOK("worker-b", 5) // the forgetful driver let B back in
	res := r.finish()
	v := res.First()
	if res.OK() || v.Kind != audit.KindWriteAfterFence || v.Client != "worker-b" {
		t.Fatalf("a driver that forgets a fence on restart must fail on a worker-b write: %s", res.Summary())
	}
	if len(res.Restarts) != 2 || strings.Join(res.Restarts[1].Missing, ",") != "127.0.0.3/32" {
		t.Fatalf("the restart must be listed as forgetting 127.0.0.3/32: %+v", res.Restarts)
	}
}
