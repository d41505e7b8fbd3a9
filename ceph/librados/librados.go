//go:build ceph

// Package librados is the go-ceph (v0.34.0, Pacific) connection the Ceph
// driver backend and the Ceph writer use. It needs cgo and librados-dev,
// so it builds only with -tags ceph (make build-ceph); nothing in the
// default build imports it.
package librados

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
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

// WriteFull replaces an object's content.
func (p *Pool) WriteFull(name string, data []byte) error { return p.io.WriteFull(name, data) }

// Read reads up to max bytes of an object.
func (p *Pool) Read(name string, max int) ([]byte, error) {
	buf := make([]byte, max)
	n, err := p.io.Read(name, buf, 0)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
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
