//go:build ceph && linux

package cephrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ceph/go-ceph/rados"
	"github.com/fenceproof/fenceproof/ceph/cluster"
	"github.com/fenceproof/fenceproof/ceph/librados"
	cephwriter "github.com/fenceproof/fenceproof/ceph/writer"
	"github.com/fenceproof/fenceproof/sim/calibrate"
)

// attempt is one write: sent, answered, outcome (ceph/writer.Classify).
type attempt struct {
	sent, done time.Time
	outcome    string
}

// writes runs f every interval (each in its own goroutine, at most 64 in
// flight) until stopped, and logs the attempts.
type writes struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	log    []attempt
}

func (w *writes) start(ctx context.Context, interval time.Duration, f func(seq int) error) {
	ctx, w.cancel = context.WithCancel(ctx)
	sem := make(chan struct{}, 64)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for seq := 0; ; seq++ {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			select {
			case sem <- struct{}{}:
			default:
				continue
			}
			w.wg.Add(1)
			go func() {
				defer func() { <-sem; w.wg.Done() }()
				a := attempt{sent: time.Now()}
				err := f(seq)
				a.done = time.Now()
				a.outcome, _ = cephwriter.Classify(err)
				w.mu.Lock()
				w.log = append(w.log, a)
				w.mu.Unlock()
			}()
		}
	}()
}

func (w *writes) stop() {
	if w.cancel != nil {
		w.cancel()
		w.wg.Wait()
	}
}

func (w *writes) attempts() []attempt {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]attempt(nil), w.log...)
}

// writer is the background writer: it rewrites the pool's objects
// round-robin (op timeout 3 s: a write to a PG that cannot serve fails).
type writer struct {
	writes
	conn *librados.Conn
	io   *rados.IOContext
}

func startWriter(ctx context.Context, c *cluster.Cluster, pool string, objects, kib int, perSec float64) (*writer, error) {
	w := &writer{}
	if perSec <= 0 {
		return w, nil
	}
	// a connection of its own: a short op timeout
	conn, err := librados.Dial(librados.Options{Conf: c.AdminConf(), NetNS: c.NetNSPath(), OSDTimeout: 3 * time.Second})
	if err != nil {
		return nil, err
	}
	w.conn = conn
	if w.io, err = conn.OpenIOContext(pool); err != nil {
		conn.Shutdown()
		return nil, err
	}
	data := make([]byte, kib*1024)
	io := w.io
	w.start(ctx, time.Duration(float64(time.Second)/perSec), func(seq int) error {
		return io.WriteFull(objName(seq%objects), data)
	})
	return w, nil
}

func (w *writer) stop() {
	w.writes.stop()
	if w.io != nil {
		w.io.Destroy()
		w.io = nil
	}
	if w.conn != nil {
		w.conn.Shutdown()
		w.conn = nil
	}
}

// bins counts the attempts per second from t0, by send time.
func (w *writer) bins(t0 time.Time) []calibrate.Writes {
	var out []calibrate.Writes
	for _, a := range w.attempts() {
		s := a.sent.Sub(t0).Seconds()
		if s < 0 {
			continue
		}
		k := int(s)
		for len(out) <= k {
			out = append(out, calibrate.Writes{At: float64(len(out))})
		}
		if a.outcome == "ok" {
			out[k].OK++
		} else {
			out[k].Failed++
		}
	}
	return out
}

// clientExp holds the client experiments' clients: a writer of its own
// address to blocklist, or a lock holder and a taker.
type clientExp struct {
	kind       string
	info       *cluster.ClientInfo // the fenced writer, or the lock holder
	taker      *cluster.ClientInfo
	conn, conB *librados.Conn
	io         *rados.IOContext
	w          writes
	watch      *rados.Watcher
	mu         sync.Mutex
	broken     time.Time
	brokeNote  string
	takerDone  chan struct{}
	cancel     context.CancelFunc
	stopOnce   sync.Once
}

const (
	lockObj  = "lock"
	lockName = "fenceproof"
)

func (k *clientExp) setup(ctx context.Context, x *run) error {
	k.kind = x.e.ClientKind()
	if k.kind == "" {
		return nil
	}
	name := map[string]string{"blocklist": "fenced-" + x.e.Name, "lock": "holder-" + x.e.Name}[k.kind]
	var err error
	// rwx: the lock is a RADOS class method (cls_lock)
	caps := []string{"mon", "allow r", "osd", "allow rwx pool=" + x.pool}
	if k.info, err = x.c.AddClient(ctx, name, caps); err != nil {
		return err
	}
	if k.conn, err = dialClient(k.info, 2*time.Second); err != nil {
		return err
	}
	if k.io, err = k.conn.OpenIOContext(x.pool); err != nil {
		return err
	}
	interval := 20 * time.Millisecond
	if k.kind == "lock" {
		interval = 50 * time.Millisecond
		if ret, err := k.io.LockExclusive(lockObj, lockName, "holder", "the holder", 0, nil); err != nil || ret != 0 {
			return fmt.Errorf("holder's lock: %d %v", ret, err)
		}
		if k.watch, err = k.io.Watch(lockObj); err != nil {
			return fmt.Errorf("holder's watch: %w", err)
		}
		// drain the watch's channels: its callbacks block until read, and
		// unwatching waits for them (the broken holder's watch errors)
		go func(w *rados.Watcher) {
			for range w.Events() {
			}
		}(k.watch)
		go func(w *rados.Watcher) {
			for range w.Errors() {
			}
		}(k.watch)
		caps := []string{"mon", `allow r, allow command "osd blocklist"`, "osd", "allow rwx pool=" + x.pool}
		if k.taker, err = x.c.AddClient(ctx, "taker-"+x.e.Name, caps); err != nil {
			return err
		}
	}
	data := make([]byte, 4096)
	io := k.io
	k.w.start(ctx, interval, func(int) error { return io.WriteFull(name+"-data", data) })
	return nil
}

func dialClient(ci *cluster.ClientInfo, opTimeout time.Duration) (*librados.Conn, error) {
	return librados.Dial(librados.Options{Conf: ci.Conf, User: ci.Name, Keyring: ci.Keyring, NetNS: ci.NetNSPath(), MonTimeout: 10 * time.Second, OSDTimeout: opTimeout})
}

// do performs a client action: the client it concerns and when its
// command returned (0: no command).
func (k *clientExp) do(ctx context.Context, x *run, what string) (string, float64, error) {
	switch what {
	case "blocklist-add", "blocklist-rm":
		op := strings.TrimPrefix(what, "blocklist-")
		_, err := x.cmd(map[string]any{"prefix": "osd blocklist", "blocklistop": op, "addr": k.info.Addr})
		return k.info.Addr, x.since(time.Now()), err
	case "cut-client", "heal-client":
		state := map[string]string{"cut-client": "down", "heal-client": "up"}[what]
		_, err := k.info.Exec(ctx, "ip", "link", "set", "eth0", state)
		return k.info.Addr, 0, err
	case "start-client":
		var cctx context.Context
		cctx, k.cancel = context.WithCancel(ctx)
		k.takerDone = make(chan struct{})
		go k.take(cctx, x)
		return k.taker.Addr, 0, nil
	}
	return "", 0, fmt.Errorf("unknown client action %q", what)
}

// take is the second client: it wants the lock; while the holder's watch
// lives it waits; once the watch is gone it blocklists the holder's
// instance, breaks its lock and takes it, as librbd does for a dead owner.
func (k *clientExp) take(ctx context.Context, x *run) {
	defer close(k.takerDone)
	var err error
	if k.conB, err = dialClient(k.taker, 5*time.Second); err != nil {
		x.log.Warn("calibrate: taker", "err", err)
		return
	}
	io, err := k.conB.OpenIOContext(x.pool)
	if err != nil {
		x.log.Warn("calibrate: taker", "err", err)
		return
	}
	defer io.Destroy()
	for ctx.Err() == nil {
		if ret, err := io.LockExclusive(lockObj, lockName, "taker", "the taker", 0, nil); err == nil && ret == 0 {
			return
		}
		info, err := io.ListLockers(lockObj, lockName)
		if err != nil || len(info.Clients) == 0 {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		holder := info.Addrs[0]
		out, _ := k.taker.Exec(ctx, "rados", "-c", k.taker.Conf, "--id", k.taker.Name, "-p", x.pool, "listwatchers", lockObj)
		if strings.Contains(string(out), nonceOf(holder)) {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		raw, _ := json.Marshal(map[string]any{"prefix": "osd blocklist", "blocklistop": "add", "addr": holder})
		if _, st, err := k.conB.MonCommand(raw); err != nil {
			x.log.Warn("calibrate: taker's blocklist", "err", err, "status", st)
			return
		}
		if _, err := io.BreakLock(lockObj, lockName, info.Clients[0], info.Cookies[0]); err != nil {
			x.log.Warn("calibrate: taker's break", "err", err)
			return
		}
		k.mu.Lock()
		k.broken, k.brokeNote = time.Now(), fmt.Sprintf("blocklisted %s, broke the lock of %s", holder, info.Clients[0])
		k.mu.Unlock()
	}
}

// nonceOf is the "/nonce" part of an instance address.
func nonceOf(addr string) string {
	if i := strings.LastIndexByte(addr, '/'); i >= 0 {
		return strings.TrimRight(addr[i:], "]")
	}
	return addr
}

func (k *clientExp) stop() { k.stopOnce.Do(k.halt) }

func (k *clientExp) halt() {
	if k.cancel != nil {
		k.cancel()
		<-k.takerDone
		k.cancel = nil
	}
	k.w.stop()
	if k.watch != nil {
		k.watch.Delete()
		k.watch = nil
	}
	if k.io != nil {
		k.io.Destroy()
		k.io = nil
	}
	for _, c := range []*librados.Conn{k.conn, k.conB} {
		if c != nil {
			c.Shutdown()
		}
	}
	k.conn, k.conB = nil, nil
}

// events are the client experiments' events from the attempts' log.
func (k *clientExp) events(x *run) []calibrate.Event {
	var evs []calibrate.Event
	ev := func(t time.Time, what, note string) {
		evs = append(evs, calibrate.Event{At: round3(x.since(t)), What: what, OSD: -1, Note: note})
	}
	att := k.w.attempts()
	act := func(do string) (calibrate.Action, bool) {
		for _, a := range x.actions {
			if a.Do == do {
				return a, true
			}
		}
		return calibrate.Action{}, false
	}
	at := func(s float64) time.Time { return x.t0.Add(seconds(s)) }
	switch k.kind {
	case "blocklist":
		add, _ := act("blocklist-add")
		rm, _ := act("blocklist-rm")
		refused, resumed := false, false
		for _, a := range att {
			switch {
			case a.outcome == "refused" && !refused && a.sent.After(at(add.At)):
				refused = true
				ev(a.sent, "first-refused", "EBLOCKLISTED")
			case a.outcome == "ok" && a.sent.After(at(add.Returned).Add(50*time.Millisecond)) && a.sent.Before(at(rm.At)):
				ev(a.sent, "stale-write", "accepted after the entry's commit")
			case a.outcome == "ok" && !resumed && a.sent.After(at(rm.At)):
				resumed = true
				ev(a.sent, "resumed", "accepted")
			}
		}
	case "lock":
		k.mu.Lock()
		broken, note := k.broken, k.brokeNote
		k.mu.Unlock()
		if broken.IsZero() {
			return nil
		}
		ev(broken, "lock-broken", note)
		heal, _ := act("heal-client")
		refused := false
		for _, a := range att {
			if a.outcome == "ok" && a.sent.After(broken) {
				ev(a.sent, "stale-write", "the old holder's write accepted after the break")
			}
			if a.outcome == "refused" && !refused && a.sent.After(at(heal.At)) {
				refused = true
				ev(a.sent, "first-refused", "EBLOCKLISTED")
			}
		}
	}
	return evs
}
