//go:build ceph

// Package librados is the go-ceph (v0.34.0, Pacific) connection the Ceph
// driver backend and the Ceph writer use. It needs cgo and librados-dev,
// so it builds only with -tags ceph (make build-ceph); nothing in the
// default build imports it.
package librados

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ceph/go-ceph/rados"
	"github.com/vishvananda/netns"
)

// Options says how to connect.
type Options struct {
	Conf    string // ceph.conf path ("" = none: MonHost and Keyring then)
	User    string // Ceph user without "client." (default "admin")
	Keyring string // keyring path (overrides the conf's)
	Key     string // the key itself (instead of a keyring file)
	MonHost string // mon_host (overrides the conf's)
	// NetNS is a network namespace path to connect from: librados creates
	// its messenger threads at connect, in the namespace of the connecting
	// thread, so the connection keeps that namespace's address.
	NetNS string
	// MonTimeout bounds every mon command (rados_mon_op_timeout, default
	// 30 s); OSDTimeout every object operation (rados_osd_op_timeout, 0 =
	// librados' default: none).
	MonTimeout time.Duration
	OSDTimeout time.Duration
	// Config holds more librados options.
	Config map[string]string
}

// Conn is a connected librados client.
type Conn struct {
	*rados.Conn
	user string

	mu     sync.Mutex
	pgObjs map[string][]string // pool/pg_num -> one object name per PG (Barrier)
}

// Dial connects (from inside Options.NetNS when set).
func Dial(o Options) (*Conn, error) {
	if o.User == "" {
		o.User = "admin"
	}
	if o.MonTimeout == 0 {
		o.MonTimeout = 30 * time.Second
	}
	if o.NetNS == "" {
		return dial(o)
	}
	type res struct {
		c   *Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		// The thread enters the namespace and is never unlocked: the
		// runtime ends it with the goroutine instead of reusing it.
		runtime.LockOSThread()
		ns, err := netns.GetFromPath(o.NetNS)
		if err != nil {
			ch <- res{err: fmt.Errorf("network namespace %s: %w", o.NetNS, err)}
			return
		}
		defer ns.Close()
		if err := netns.Set(ns); err != nil {
			ch <- res{err: fmt.Errorf("entering network namespace %s: %w", o.NetNS, err)}
			return
		}
		c, err := dial(o)
		ch <- res{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

func dial(o Options) (*Conn, error) {
	rc, err := rados.NewConnWithUser(o.User)
	if err != nil {
		return nil, err
	}
	if o.Conf != "" {
		if err := rc.ReadConfigFile(o.Conf); err != nil {
			rc.Shutdown()
			return nil, fmt.Errorf("ceph.conf %s: %w", o.Conf, err)
		}
	}
	set := map[string]string{"rados_mon_op_timeout": seconds(o.MonTimeout)}
	if o.OSDTimeout > 0 {
		set["rados_osd_op_timeout"] = seconds(o.OSDTimeout)
	}
	if o.Keyring != "" {
		set["keyring"] = o.Keyring
	}
	if o.Key != "" {
		set["key"] = o.Key
	}
	if o.MonHost != "" {
		set["mon_host"] = o.MonHost
	}
	for k, v := range o.Config {
		set[k] = v
	}
	for k, v := range set {
		if err := rc.SetConfigOption(k, v); err != nil {
			rc.Shutdown()
			return nil, fmt.Errorf("librados option %s: %w", k, err)
		}
	}
	if err := rc.Connect(); err != nil {
		rc.Shutdown()
		return nil, connectError(o, err)
	}
	return &Conn{Conn: rc, user: o.User}, nil
}

// connectError explains a failed connect.
func connectError(o Options, err error) error {
	var ec interface{ ErrorCode() int }
	hint := ""
	if errors.As(err, &ec) {
		switch ec.ErrorCode() {
		case -1, -13:
			hint = ": the mon refused client." + o.User + "'s key (wrong user or key?)"
		case -110:
			hint = ": no mon answered (mon_host, network?)"
		}
	}
	return fmt.Errorf("ceph: connect as client.%s: %w%s", o.User, err, hint)
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

// MonCommandTarget sends one command to the named mon.
func (c *Conn) MonCommandTarget(mon string, cmd []byte) ([]byte, string, error) {
	return c.Conn.MonCommandTarget(mon, [][]byte{cmd})
}

// Self is the connection's global id and its messenger's nonce.
func (c *Conn) Self() (globalID, nonce uint64) {
	globalID = c.Conn.GetInstanceID()
	if s, err := c.GetAddrs(); err == nil {
		s = strings.TrimRight(s, "]")
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			nonce, _ = strconv.ParseUint(s[i+1:], 10, 64)
		}
	}
	return globalID, nonce
}

// Pool is an open pool: the writer's Objects.
type Pool struct{ io *rados.IOContext }

// Pool opens a pool.
func (c *Conn) Pool(name string) (*Pool, error) {
	io, err := c.OpenIOContext(name)
	if err != nil {
		return nil, fmt.Errorf("pool %s: %w", name, err)
	}
	return &Pool{io: io}, nil
}

// Append appends data to an object (one atomic operation).
func (p *Pool) Append(name string, data []byte) error { return p.io.Append(name, data) }

// ReadAll reads a whole object.
func (p *Pool) ReadAll(name string) ([]byte, error) {
	st, err := p.io.Stat(name)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size+1)
	var n int
	for uint64(n) < st.Size+1 {
		m, err := p.io.Read(name, buf[n:], uint64(n))
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

// List lists the pool's objects (default namespace).
func (p *Pool) List() ([]string, error) {
	var out []string
	err := p.io.ListObjects(func(oid string) { out = append(out, oid) })
	return out, err
}

// Close releases the pool.
func (p *Pool) Close() { p.io.Destroy() }

// Source is the address this client connects from (its messenger's), e.g.
// "10.99.0.2" out of "10.99.0.2:0/3754381929".
func (c *Conn) Source() string {
	s, err := c.GetAddrs()
	if err != nil {
		return ""
	}
	s = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), "")
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = s[:i]
	}
	for _, t := range []string{"v1:", "v2:", "any:"} {
		s = strings.TrimPrefix(s, t)
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().String()
	}
	return ""
}

// Barrier returns once the primary of every placement group of every pool
// has answered an operation sent with this client's OSD map at epoch or
// later: an OSD processes a client operation only under a map at least as
// new as the client's, so once every PG answered, every PG enforces
// whatever that epoch committed (a blocklist entry), and a fenced client's
// next write is refused. The answer itself (ENOENT, or EPERM for a user
// without osd caps) does not matter, only that it came.
//
// The object names that land in each PG are found once per pool and PG
// count with `osd map` (a read-only mon command) and cached.
func (c *Conn) Barrier(ctx context.Context, epoch int) error {
	if err := c.WaitForLatestOSDMap(); err != nil {
		return fmt.Errorf("barrier: waiting for the latest OSD map: %w", err)
	}
	pools, err := c.pgCounts()
	if err != nil {
		return err
	}
	type probe struct{ pool, obj string }
	var probes []probe
	for pool, pgs := range pools {
		objs, err := c.pgObjects(pool, pgs)
		if err != nil {
			return err
		}
		for _, o := range objs {
			probes = append(probes, probe{pool, o})
		}
	}
	errs := make(chan error, len(probes))
	slots := make(chan struct{}, 64)
	for _, p := range probes {
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			io, err := c.OpenIOContext(p.pool)
			if err != nil {
				errs <- fmt.Errorf("barrier: pool %s: %w", p.pool, err)
				return
			}
			defer io.Destroy()
			_, err = io.Stat(p.obj)
			var ec interface{ ErrorCode() int }
			if err == nil || errors.As(err, &ec) && (ec.ErrorCode() == -2 || ec.ErrorCode() == -1 || ec.ErrorCode() == -13) {
				errs <- nil
				return
			}
			errs <- fmt.Errorf("barrier: PG of %s/%s: %w", p.pool, p.obj, err)
		}()
	}
	for range probes {
		select {
		case err := <-errs:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("barrier: the OSDs did not all answer: %w", ctx.Err())
		}
	}
	return nil
}

// pgCounts returns every pool's PG count from the OSD map.
func (c *Conn) pgCounts() (map[string]int, error) {
	out, _, err := c.MonCommand([]byte(`{"prefix":"osd dump","format":"json"}`))
	if err != nil {
		return nil, fmt.Errorf("barrier: osd dump: %w", err)
	}
	var d struct {
		Pools []struct {
			Name  string `json:"pool_name"`
			PGNum int    `json:"pg_num"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, fmt.Errorf("barrier: osd dump: %v", err)
	}
	m := map[string]int{}
	for _, p := range d.Pools {
		m[p.Name] = p.PGNum
	}
	return m, nil
}

// pgObjects returns one object name per PG of pool (pgs PGs), from the
// cache or found with `osd map`.
func (c *Conn) pgObjects(pool string, pgs int) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := pool + "/" + strconv.Itoa(pgs)
	if objs, ok := c.pgObjs[key]; ok {
		return objs, nil
	}
	byPG := map[string]string{}
	for i := 0; len(byPG) < pgs; i++ {
		if i > 64*pgs+64 {
			return nil, fmt.Errorf("barrier: found objects for %d of the %d PGs of pool %s", len(byPG), pgs, pool)
		}
		obj := "fenceproof-barrier-" + strconv.Itoa(i)
		cmd, _ := json.Marshal(map[string]string{"prefix": "osd map", "pool": pool, "object": obj, "format": "json"})
		out, _, err := c.MonCommand(cmd)
		if err != nil {
			return nil, fmt.Errorf("barrier: osd map %s %s: %w", pool, obj, err)
		}
		var m struct {
			PGID string `json:"pgid"`
		}
		if err := json.Unmarshal(out, &m); err != nil || m.PGID == "" {
			return nil, fmt.Errorf("barrier: osd map %s %s: %q", pool, obj, out)
		}
		if _, ok := byPG[m.PGID]; !ok {
			byPG[m.PGID] = obj
		}
	}
	objs := make([]string, 0, len(byPG))
	for _, o := range byPG {
		objs = append(objs, o)
	}
	if c.pgObjs == nil {
		c.pgObjs = map[string][]string{}
	}
	c.pgObjs[key] = objs
	return objs, nil
}
