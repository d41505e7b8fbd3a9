//go:build ceph

package ceph_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/ceph/librados"
	"github.com/fenceproof/fenceproof/driver"
	cephbackend "github.com/fenceproof/fenceproof/driver/backend/ceph"
)

// TestWrongCredentials: a wrong key and an unknown user are start-up
// errors that say what is wrong, quickly; nothing is fenced.
func TestWrongCredentials(t *testing.T) {
	need(t)
	bad := filepath.Join(t.TempDir(), "bad.keyring")
	// A well-formed key that is not client.fencer's.
	os.WriteFile(bad, []byte("[client.fencer]\n\tkey = AQBZ7mVmAAAAABAAr0yXlbyr3PbYHBZQ7mXi1Q==\n"), 0o600)
	for name, edit := range map[string]func(*driver.Options){
		"wrong key":    func(o *driver.Options) { o.Ceph.Keyring = bad },
		"unknown user": func(o *driver.Options) { o.Ceph.User = "nobody" },
	} {
		t.Run(name, func(t *testing.T) {
			t0 := time.Now()
			_, err := startDriver(t, t.TempDir(), edit)
			if err == nil {
				t.Fatal("the driver started with wrong credentials")
			}
			if !strings.Contains(err.Error(), "connect as client.") {
				t.Errorf("error %q does not say the connection was refused", err)
			}
			t.Logf("%s: %v (%s)", name, err, time.Since(t0).Round(time.Millisecond))
		})
	}
}

// TestMonStopsAnswering: the mon freezes (SIGSTOP) before a Fence. The
// Fence answers within its deadline with an error, having sent nothing;
// List cannot read the OSD map and says so instead of answering from
// memory; once the mon resumes, the fence made before is still there and
// the refused one is not.
func TestMonStopsAnswering(t *testing.T) {
	need(t)
	rd, err := startDriver(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.fenceRPC(10*time.Second, "10.70.0.1/32"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.unfenceRPC(10*time.Second, "10.70.0.1/32") })
	if err := env.c.PauseMon(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			env.c.ResumeMon()
		}
	}()
	took, ferr := rd.fenceRPC(2*time.Second, "10.70.0.2/32")
	if ferr == nil {
		t.Fatalf("a Fence was acknowledged while the mon was frozen (%s)", took)
	}
	if took > 2500*time.Millisecond {
		t.Errorf("the Fence answered after %s, past its 2 s deadline", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_, lerr := rd.client.ListClusterFence(ctx, nil)
	cancel()
	if lerr == nil {
		t.Errorf("List answered while the mon was frozen: it must read the OSD map, not memory")
	}
	if err := env.c.ResumeMon(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	bl, _ := blocklist(t)
	if _, ok := bl["cidr:10.70.0.1:0/32"]; !ok {
		t.Fatalf("the fence acknowledged before was lost: %v", bl)
	}
	if _, ok := bl["cidr:10.70.0.2:0/32"]; ok {
		t.Fatalf("the refused fence is in the blocklist")
	}
	if l := rd.list(t); !slices.Equal(l, []string{"10.70.0.1/32"}) {
		t.Fatalf("List after the mon resumed: %v, want only the acknowledged fence", l)
	}
	t.Logf("Fence while the mon was frozen: %v after %s; List: %v", ferr, took.Round(time.Millisecond), lerr)
}

// freezingMon freezes the real mon (SIGSTOP) just before it forwards the
// first blocklist add: the command reaches a mon that does not answer
// until it is resumed, then commits. The freeze is real; the wrapper only
// times it.
type freezingMon struct {
	*librados.Conn
	once   sync.Once
	frozen chan struct{}
}

func (m *freezingMon) MonCommand(cmd []byte) ([]byte, string, error) {
	var c map[string]any
	json.Unmarshal(cmd, &c)
	if c["prefix"] == "osd blocklist" && c["blocklistop"] == "add" {
		m.once.Do(func() {
			env.c.PauseMon()
			close(m.frozen)
		})
	}
	return m.Conn.MonCommand(cmd)
}

// TestMonFreezesMidFence: the mon freezes with a blocklist change sent and
// not answered. The change fails at its deadline. When the mon resumes,
// either it commits the change after the caller gave up, and the backend
// removes it as soon as the answer arrives, or the command is lost with
// the frozen session (librados gives up after rados_mon_op_timeout); both
// happen here. Either way the change is not in force afterwards, the next
// change waits for that, and the fence made before is never lost.
func TestMonFreezesMidFence(t *testing.T) {
	need(t)
	// A command the frozen mon drops is given up after MonTimeout.
	conn, err := librados.Dial(librados.Options{Conf: env.fencer.Conf, User: env.fencer.Name, NetNS: env.fencer.NetNSPath(), MonTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b, err := cephbackend.New(context.Background(), conn, cephbackend.Options{RecordPath: filepath.Join(t.TempDir(), "rec.json"), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	kept := netip.MustParsePrefix("10.71.0.1/32")
	if err := b.Apply(context.Background(), []netip.Prefix{kept}); err != nil {
		t.Fatal(err)
	}
	mon := &freezingMon{Conn: conn, frozen: make(chan struct{})}
	fb, err := cephbackend.New(context.Background(), mon, cephbackend.Options{RecordPath: filepath.Join(t.TempDir(), "rec2.json"), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	_, before := blocklist(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	t0 := time.Now()
	err = fb.Change(ctx, []netip.Prefix{netip.MustParsePrefix("10.71.0.2/32")}, nil)
	took := time.Since(t0)
	<-mon.frozen
	resumed := false
	defer func() {
		if !resumed {
			env.c.ResumeMon()
		}
	}()
	if err == nil || took > 2500*time.Millisecond {
		t.Fatalf("a change the frozen mon never answered: %v after %s", err, took)
	}
	if in, err := fb.InForce(context.Background()); err == nil {
		t.Errorf("InForce answered with the mon frozen: %v", in)
	}
	if err := env.c.ResumeMon(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	// The next change waits for the late answer and its undo.
	if err := fb.Apply(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	bl, after := blocklist(t)
	if _, ok := bl["cidr:10.71.0.2:0/32"]; ok {
		t.Fatalf("the change committed after its caller gave up is still in force")
	}
	if _, ok := bl["cidr:10.71.0.1:0/32"]; !ok {
		t.Fatalf("the fence made before was lost")
	}
	what := "the frozen mon dropped the command"
	if after >= before+2 {
		what = "committed after the deadline, then removed"
	}
	if err := b.Apply(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	t.Logf("change during a mon freeze: %v after %s; epochs %d -> %d: %s", err, took.Round(time.Millisecond), before, after, what)
}

// TestForeignEntries: entries an operator (or an RBD lock breaker) added by
// hand are never listed as the driver's fences and never removed by it,
// across fences, unfences and a restart: an address entry next to the
// driver's own range entry for the same address, an identical range entry
// the driver's fence relies on, and a one-instance entry.
func TestForeignEntries(t *testing.T) {
	need(t)
	adminBlocklist(t, "add", "10.80.0.1", "3600.0")
	adminBlocklist(t, "add", "range 10.81.0.0/24", "3600.0")
	adminBlocklist(t, "add", "10.80.0.9:0/12345", "3600.0") // one client instance
	t.Cleanup(func() {
		adminBlocklist(t, "rm", "10.80.0.1", "")
		adminBlocklist(t, "rm", "range 10.81.0.0/24", "")
		adminBlocklist(t, "rm", "10.80.0.9:0/12345", "")
	})
	foreign := []string{"10.80.0.1:0/0", "cidr:10.81.0.0:0/24", "10.80.0.9:0/12345"}
	before, _ := blocklist(t)
	dir := t.TempDir()
	rd, err := startDriver(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l := rd.list(t); len(l) != 0 {
		t.Fatalf("List reports entries the driver never made: %v", l)
	}
	if _, err := rd.fenceRPC(10*time.Second, "10.80.0.1/32", "10.81.0.0/24"); err != nil {
		t.Fatal(err)
	}
	during, _ := blocklist(t)
	if during["cidr:10.80.0.1:0/32"] == "" {
		t.Errorf("no entry of the driver's own for 10.80.0.1/32: %v", during)
	}
	if l := rd.list(t); !slices.Equal(l, []string{"10.80.0.1/32", "10.81.0.0/24"}) {
		t.Fatalf("List: %v", l)
	}
	rd.stop()
	if rd, err = startDriver(t, dir, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := rd.unfenceRPC(10*time.Second, "10.80.0.1/32", "10.81.0.0/24"); err != nil {
		t.Fatal(err)
	}
	after, _ := blocklist(t)
	for _, k := range foreign {
		if after[k] != before[k] {
			t.Errorf("the hand-made entry %s: %q before the driver, %q after its fence and unfence", k, before[k], after[k])
		}
	}
	if _, ok := after["cidr:10.80.0.1:0/32"]; ok {
		t.Errorf("the driver's own entry for 10.80.0.1/32 outlived the Unfence")
	}
	if l := rd.list(t); len(l) != 0 {
		t.Errorf("List after the Unfence: %v", l)
	}
}

// TestHandRemovedEntryIsRestored: an operator removes the driver's entry;
// List stops reporting the fence at once (it is not in force), Verify sees
// the drift and the driver's reconciler puts the entry back.
func TestHandRemovedEntryIsRestored(t *testing.T) {
	need(t)
	rd, err := startDriver(t, t.TempDir(), func(o *driver.Options) { o.ReconcileInterval = 500 * time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.fenceRPC(10*time.Second, "10.83.0.0/24"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.unfenceRPC(10*time.Second, "10.83.0.0/24") })
	adminBlocklist(t, "rm", "range 10.83.0.0/24", "")
	restored := false
	sawGone := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && !restored; time.Sleep(100 * time.Millisecond) {
		l := rd.list(t)
		sawGone = sawGone || len(l) == 0
		restored = sawGone && slices.Equal(l, []string{"10.83.0.0/24"})
	}
	if !restored {
		t.Fatalf("the removed entry was not restored (List went empty: %v)", sawGone)
	}
	if bl, _ := blocklist(t); bl["cidr:10.83.0.0:0/24"] == "" {
		t.Fatalf("List reports the fence but the blocklist lacks it")
	}
}

// lyingMon answers blocklist changes with the mon's usual text without
// sending them, like a mon whose OSD map never moves; everything else goes
// to the real mon. A real mon does not do this on demand: this is fault
// injection around a real connection.
type lyingMon struct {
	*librados.Conn
	lied atomic.Int64
}

func (m *lyingMon) MonCommand(cmd []byte) ([]byte, string, error) {
	var c map[string]any
	json.Unmarshal(cmd, &c)
	if c["prefix"] == "osd blocklist" && c["blocklistop"] == "add" {
		m.lied.Add(1)
		until := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000+0000")
		return nil, "blocklisting " + c["addr"].(string) + ":0/0 until " + until + " (3600 sec)", nil
	}
	return m.Conn.MonCommand(cmd)
}

// TestEpochThatDoesNotMove: the mon acknowledges the blocklist command but
// the OSD map stays at its epoch: the change fails within its deadline with
// an error that says so, and nothing is reported as in force.
func TestEpochThatDoesNotMove(t *testing.T) {
	need(t)
	conn, err := librados.Dial(librados.Options{Conf: env.fencer.Conf, User: env.fencer.Name, NetNS: env.fencer.NetNSPath()})
	if err != nil {
		t.Fatal(err)
	}
	mon := &lyingMon{Conn: conn}
	b, err := cephbackend.New(context.Background(), mon, cephbackend.Options{RecordPath: filepath.Join(t.TempDir(), "rec.json"), Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, before := blocklist(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	t0 := time.Now()
	err = b.Apply(ctx, []netip.Prefix{netip.MustParsePrefix("10.84.0.0/24")})
	took := time.Since(t0)
	if err == nil || !strings.Contains(err.Error(), "epoch did not move") {
		t.Fatalf("Apply with a mon that acknowledges without committing: %v, want the epoch error", err)
	}
	if took > 3500*time.Millisecond || mon.lied.Load() == 0 {
		t.Errorf("took %s, %d lies", took, mon.lied.Load())
	}
	if _, after := blocklist(t); after != before {
		t.Errorf("the epoch moved from %d to %d", before, after)
	}
	in, ierr := b.InForce(context.Background())
	if ierr != nil || len(in) != 0 {
		t.Errorf("InForce after the failed change: %v %v", in, ierr)
	}
	t.Logf("epoch that does not move: %v (%s)", err, took.Round(time.Millisecond))
}

// TestGetFenceClientsFromSessions: the writers connected to the cluster
// are reported with their own addresses as /32 blocks, the driver's own
// session is not.
func TestGetFenceClientsFromSessions(t *testing.T) {
	need(t)
	rd, err := startDriver(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	startWriter(t, env.neighbour, "clients-n")
	startWriter(t, env.fenced[1], "clients-b")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := rd.client.GetFenceClients(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, c := range r.GetClients() {
		for _, a := range c.GetAddresses() {
			got[c.GetId()] = append(got[c.GetId()], a.GetCidr())
		}
	}
	for _, ci := range []string{"neighbour@" + env.neighbour.Addr, "fenced-b@" + env.fenced[1].Addr} {
		id := "client." + ci
		if want := strings.Split(ci, "@")[1] + "/32"; !slices.Equal(got[id], []string{want}) {
			t.Errorf("client %s: %v, want [%s] (all: %v)", id, got[id], want, got)
		}
	}
	if _, ok := got["client.fencer@"+env.fencer.Addr]; ok {
		t.Errorf("the driver reports its own session: %v", got)
	}
	t.Logf("GetFenceClients: %v", got)
}
