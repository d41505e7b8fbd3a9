package refstore_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fenceproof/fenceproof/audit"
	"github.com/fenceproof/fenceproof/refstore"
	"github.com/fenceproof/fenceproof/refstore/writer"
)

// The crash test re-executes the test binary as a refstore process
// (FP_REFSTORE_CHILD=dir:port) so it can be killed with SIGKILL mid-write.
func TestMain(m *testing.M) {
	if v := os.Getenv("FP_REFSTORE_CHILD"); v != "" {
		dir, port, _ := strings.Cut(v, ":")
		s, err := refstore.New(refstore.Options{Listen: "127.0.0.1:" + port, Admin: "unix://" + filepath.Join(dir, "admin.sock"),
			AuditPath: filepath.Join(dir, "audit.log"), Logger: slog.New(slog.DiscardHandler)})
		if err == nil {
			err = s.Start()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		<-sig
		s.Stop()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type child struct{ cmd *exec.Cmd }

func startChild(t *testing.T, dir, port string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FP_REFSTORE_CHILD="+dir+":"+port)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd}
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if conn, err := net.Dial("unix", filepath.Join(dir, "admin.sock")); err == nil {
			conn.Close()
			return c
		}
		if time.Now().After(deadline) {
			t.Fatal("refstore child did not come up")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *child) kill9() {
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.cmd.Wait()
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	return p
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// TestKill9LosesNoAcknowledgedWriteAndNoFence kills refstore with SIGKILL
// three times while two writers write: every write a writer saw
// acknowledged is in the audit log, the log parses (a torn tail is cut on
// restart), and a fence set before a kill holds after it.
func TestKill9LosesNoAcknowledgedWriteAndNoFence(t *testing.T) {
	dir, err := os.MkdirTemp("", "rk")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	port := freePort(t)
	c := startChild(t, dir, port)
	logs := map[string]*lockedBuf{"a": {}, "b": {}}
	ws := map[string]*writer.Writer{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for id, src := range map[string]string{"a": "127.0.0.2", "b": "127.0.0.3"} {
		w, err := writer.New(writer.Options{Server: "127.0.0.1:" + port, ID: id, Source: src, Interval: time.Millisecond,
			MaxBackoff: 20 * time.Millisecond, Log: logs[id]})
		if err != nil {
			t.Fatal(err)
		}
		ws[id] = w
		wg.Add(1)
		go func() { defer wg.Done(); w.Run(ctx) }()
	}
	waitOK := func(id string, n int) {
		t.Helper()
		start := ws[id].Counts()[writer.OutcomeOK]
		deadline := time.Now().Add(30 * time.Second)
		for ws[id].Counts()[writer.OutcomeOK] < start+n {
			if time.Now().After(deadline) {
				t.Fatalf("writer %s stalled: %v", id, ws[id].Counts())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	admin, err := refstore.NewAdminClient("unix://"+filepath.Join(dir, "admin.sock"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for round := range 3 {
		waitOK("a", 20)
		if round == 1 {
			if _, err := admin.SetBlocklist(ctx, []string{"127.0.0.3/32"}); err != nil {
				t.Fatal(err)
			}
		}
		c.kill9()
		c = startChild(t, dir, port)
		if round >= 1 {
			bl, err := admin.Blocklist(ctx)
			if err != nil || strings.Join(bl.CIDRs, ",") != "127.0.0.3/32" {
				t.Fatalf("after kill -9 the blocklist is %v (%v), want 127.0.0.3/32", bl.CIDRs, err)
			}
		}
	}
	waitOK("a", 20)
	cancel()
	wg.Wait()
	c.cmd.Process.Signal(syscall.SIGTERM)
	c.cmd.Wait()
	var wl []string
	for id, l := range logs {
		p := filepath.Join(dir, id+".log")
		os.WriteFile(p, l.b.Bytes(), 0o644)
		wl = append(wl, p)
	}
	recs, warn, err := audit.ReadAudit(filepath.Join(dir, "audit.log"))
	if err != nil || len(warn) != 0 {
		t.Fatalf("audit log after kill -9: %v %v", err, warn)
	}
	as := map[string][]writer.Attempt{}
	for _, p := range wl {
		a, _, err := audit.ReadWriterLog(p)
		if err != nil {
			t.Fatal(err)
		}
		as[p] = a
	}
	audited := map[string]bool{}
	for _, r := range recs {
		audited[fmt.Sprint(r.Client, r.Seq)] = true
	}
	acked := 0
	for _, list := range as {
		for _, a := range list {
			if a.Outcome == writer.OutcomeOK {
				acked++
				if !audited[fmt.Sprint(a.Client, a.Seq)] {
					t.Fatalf("acknowledged write %s seq %d is missing after kill -9", a.Client, a.Seq)
				}
			}
		}
	}
	t.Logf("%d acknowledged writes, %d audited records across 3 kills", acked, len(recs))
}
