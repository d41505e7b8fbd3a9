//go:build linux

// Package cluster starts a real single-node Ceph (Debian's Pacific packages:
// ceph-mon, ceph-osd, ceph-mgr, ceph-common) for tests, the driver's Ceph
// backend and the simulator's calibration. It only runs Debian's programs
// (no cgo, no librados), so it builds everywhere.
//
// Everything lives in a private directory (configuration, keys, daemon data,
// logs, pid files) and a network namespace of its own: the daemons bind the
// first address of a small private subnet on a bridge inside that namespace,
// and every client gets a namespace of its own with a veth into the bridge,
// so the cluster sees each client at its own source address. Nothing touches
// the host's network. Stop kills every daemon and deletes the namespaces and
// the directory.
//
//	c, err := cluster.Start(ctx, cluster.Options{OSDs: 3, Mgr: true,
//		Config: map[string]string{"mon_osd_down_out_interval": "10"}})
//	defer c.Stop()
//	out, err := c.Ceph(ctx, "osd", "dump")   // any ceph command, as client.admin, -f json
//	c.KillOSD(1); c.StartOSD(ctx, 1)          // fault injection
//	cl, err := c.AddClient(ctx, "writer-a", cluster.WriterCaps(c.Pool()))
//
// A cluster started by one process can be found and stopped by another with
// Attach(dir) (that is how `fenceproof ceph up|status|down` work).
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configures a cluster.
type Options struct {
	// Dir is the cluster's private directory; it is created (mode 0700) and
	// removed by Stop. Default: a new directory under os.TempDir().
	Dir string
	// OSDs is the number of OSDs, 1 to MaxOSDs (default 1).
	OSDs int
	// Hosts, when > 0, puts the OSDs into that many CRUSH host buckets
	// (host0, host1, ...; OSD i in host i/(OSDs/Hosts), so OSDs must be a
	// multiple of Hosts) and gives the pool a rule with failure domain
	// host: one machine plays several hosts, and failure reports count
	// reporters by host as on a real cluster (mon_osd_reporter_subtree_level).
	// 0: one host, failure domain osd.
	Hosts int
	// Mons is the number of mons, 1 or 3 (default 1): mon.a, mon.b, mon.c
	// on the daemons' address, ports 3300/6789, 3301/6790, 3302/6791.
	Mons int
	// Mgr starts ceph-mgr (~300 MiB): without it there are no PG
	// statistics and no HEALTH_OK, so Start waits for a first write instead.
	Mgr bool
	// ObjectStore is "memstore" (default: RAM, lost when an OSD is killed)
	// or "bluestore" (a sparse 2 GiB file per OSD: data survives a kill).
	ObjectStore string
	// Pool is the pool created for clients (default "fenceproof"), with PGs
	// placement groups (default 8) and PoolSize replicas (default 1).
	Pool     string
	PGs      int
	PoolSize int
	// MinSize is the pool's min_size (default: Ceph's, size - size/2).
	MinSize int
	// Subnet is the private client network inside the cluster's namespace
	// (default 10.99.0.0/24): the daemons use its first address, clients
	// the following ones.
	Subnet netip.Prefix
	// HostAddr, when set, runs the daemons in the current network
	// namespace bound to this address instead (a container: the pod's
	// address), without a namespace, bridge or client namespaces of the
	// cluster's own (AddClient is then refused; ImportKeyring adds users).
	HostAddr netip.Addr
	// ImportKeyring is a keyring (ceph-authtool format, with caps) whose
	// users are added once the mon runs: keys made elsewhere, e.g. by a
	// test suite that hands them to its clients.
	ImportKeyring string
	// Config holds extra [global] settings written to ceph.conf before any
	// daemon starts, e.g. {"mon_osd_down_out_interval": "10",
	// "osd_heartbeat_grace": "6"}. SetConfig changes settings at run time.
	Config map[string]string
	// Install installs missing Debian packages with apt-get when running
	// as root; otherwise missing packages are an ErrMissingPackages error.
	Install bool
	// Timeout bounds Start (default 3 minutes).
	Timeout time.Duration
	// Log receives progress (default: discarded).
	Log *slog.Logger
}

// Cluster is a running cluster. Its methods are safe for concurrent use.
type Cluster struct {
	dir string
	log *slog.Logger

	mu     sync.Mutex
	st     state
	probes int // writer namespaces WriterAt made in this process
}

// state is what Attach needs to find a cluster again, persisted as
// cluster.json in the directory.
type state struct {
	FSID        string        `json:"fsid"`
	NetNS       string        `json:"netns"`
	Subnet      string        `json:"subnet"`
	MonAddr     string        `json:"mon_addr"`
	OSDs        []int         `json:"osds"`
	Mgr         bool          `json:"mgr"`
	ObjectStore string        `json:"objectstore"`
	Pool        string        `json:"pool"`
	Mons        []string      `json:"mons,omitempty"`
	OSDsPerHost int           `json:"osds_per_host,omitempty"`
	PGs         int           `json:"pgs"`
	Clients     []*ClientInfo `json:"clients,omitempty"`
	NextHost    int           `json:"next_host"`
}

// stateFile is the name of the state file in the directory.
const stateFile = "cluster.json"

// MaxOSDs is the most OSDs a cluster may have.
const MaxOSDs = 12

// ErrNoCluster is returned by Attach when the directory holds no cluster.
var ErrNoCluster = errors.New("no cluster in this directory")

// Start bootstraps a cluster and returns once it is healthy: HEALTH_OK with
// every PG active+clean when Options.Mgr, else every OSD up and a first
// write done. On error everything started so far is torn down.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if !o.HostAddr.IsValid() {
		if err := RequireRoot(); err != nil {
			return nil, err
		}
	}
	if err := EnsurePackages(ctx, o.Install, o.Mgr, o.Log); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	created := o.Dir == ""
	if created {
		if o.Dir, err = os.MkdirTemp("", "fpceph"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(o.Dir, stateFile)); err == nil {
		return nil, fmt.Errorf("%s already holds a cluster (stop it first: fenceproof ceph down --dir %s)", o.Dir, o.Dir)
	}
	c = &Cluster{dir: o.Dir, log: o.Log}
	c.st = state{FSID: newUUID(), NetNS: "fpceph-" + randHex(4), Subnet: o.Subnet.String(),
		MonAddr: o.Subnet.Addr().Next().String(), Mgr: o.Mgr, ObjectStore: o.ObjectStore,
		Pool: o.Pool, PGs: o.PGs, NextHost: 2, Mons: monIDs[:o.Mons]}
	if o.Hosts > 0 {
		c.st.OSDsPerHost = o.OSDs / o.Hosts
	}
	if o.HostAddr.IsValid() {
		c.st.NetNS, c.st.MonAddr = "", o.HostAddr.String()
		c.st.Subnet = netip.PrefixFrom(o.HostAddr, o.HostAddr.BitLen()).String()
	}
	defer func() {
		if err != nil {
			if serr := c.Stop(); serr != nil {
				c.log.Warn("ceph: teardown after a failed start", "err", serr)
			}
		}
	}()
	t0 := time.Now()
	if err = c.save(); err != nil {
		return c, err
	}
	if c.st.NetNS != "" {
		if err = c.createNetNS(ctx); err != nil {
			return c, err
		}
	}
	if err = c.bootstrap(ctx, o); err != nil {
		return c, err
	}
	c.log.Info("ceph: cluster healthy", "dir", c.dir, "netns", c.st.NetNS, "mon", c.st.MonAddr, "osds", len(c.st.OSDs), "mgr", o.Mgr, "took", time.Since(t0).Round(time.Millisecond))
	return c, nil
}

func (o *Options) defaults() error {
	if o.OSDs == 0 {
		o.OSDs = 1
	}
	if o.OSDs < 1 || o.OSDs > MaxOSDs {
		return fmt.Errorf("OSDs: %d, want 1 to %d", o.OSDs, MaxOSDs)
	}
	if o.Hosts < 0 || o.Hosts > 0 && o.OSDs%o.Hosts != 0 {
		return fmt.Errorf("Hosts: %d, want 0 or a divisor of OSDs (%d)", o.Hosts, o.OSDs)
	}
	if o.Mons == 0 {
		o.Mons = 1
	}
	if o.Mons != 1 && o.Mons != 3 {
		return fmt.Errorf("Mons: %d, want 1 or 3", o.Mons)
	}
	if o.ObjectStore == "" {
		o.ObjectStore = "memstore"
	}
	if o.ObjectStore != "memstore" && o.ObjectStore != "bluestore" {
		return fmt.Errorf("ObjectStore %q: want memstore or bluestore", o.ObjectStore)
	}
	if o.Pool == "" {
		o.Pool = "fenceproof"
	}
	if o.PGs == 0 {
		o.PGs = 8
	}
	if o.PoolSize == 0 {
		o.PoolSize = 1
	}
	if o.PoolSize > o.OSDs || o.Hosts > 0 && o.PoolSize > o.Hosts {
		return fmt.Errorf("PoolSize %d exceeds the OSDs (%d) or hosts (%d)", o.PoolSize, o.OSDs, o.Hosts)
	}
	if o.MinSize < 0 || o.MinSize > o.PoolSize {
		return fmt.Errorf("MinSize %d: want 0 (Ceph's default) to PoolSize %d", o.MinSize, o.PoolSize)
	}
	if !o.Subnet.IsValid() {
		o.Subnet = netip.MustParsePrefix("10.99.0.0/24")
	}
	if o.HostAddr.IsValid() && !o.HostAddr.Is4() {
		return fmt.Errorf("HostAddr %s: want an IPv4 address (ms_bind_ipv6 is off)", o.HostAddr)
	}
	if !o.Subnet.Addr().Is4() || o.Subnet.Bits() > 29 || o.Subnet.Bits() < 16 {
		return fmt.Errorf("Subnet %s: want an IPv4 prefix between /16 and /29", o.Subnet)
	}
	o.Subnet = o.Subnet.Masked()
	if o.Timeout == 0 {
		o.Timeout = 3 * time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Attach finds the cluster that Start left in dir (from another process).
func Attach(dir string) (*Cluster, error) {
	raw, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoCluster)
	}
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, log: slog.New(slog.DiscardHandler)}
	if err := json.Unmarshal(raw, &c.st); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, stateFile), err)
	}
	return c, nil
}

// SetLogger sets where progress goes (Attach discards it).
func (c *Cluster) SetLogger(l *slog.Logger) { c.log = l }

// Dir is the cluster's private directory.
func (c *Cluster) Dir() string { return c.dir }

// FSID is the cluster's fsid.
func (c *Cluster) FSID() string { return c.st.FSID }

// NetNS is the name of the cluster's network namespace (under /run/netns);
// "" when the daemons run in the caller's (Options.HostAddr).
func (c *Cluster) NetNS() string { return c.st.NetNS }

// NetNSPath is the path of the cluster's network namespace.
func (c *Cluster) NetNSPath() string { return netnsPath(c.st.NetNS) }

// MonAddr is the address every daemon binds (mon: ports 3300 and 6789).
func (c *Cluster) MonAddr() netip.Addr { return netip.MustParseAddr(c.st.MonAddr) }

// MonHost is the mon_host value clients use: every mon's addresses.
func (c *Cluster) MonHost() string {
	var addrs []string
	for _, id := range c.monIDs() {
		addrs = append(addrs, c.monAddrs(id))
	}
	return strings.Join(addrs, ",")
}

// Mons lists the mon ids ("a", "b", "c").
func (c *Cluster) Mons() []string { return slices.Clone(c.monIDs()) }

// monIDs are the mon ids; a cluster saved before there could be several
// has mon.a only.
func (c *Cluster) monIDs() []string {
	if len(c.st.Mons) == 0 {
		return []string{"a"}
	}
	return c.st.Mons
}

// monAddrs is mon id's address vector: mon k listens on ports 3300+k (v2)
// and 6789+k (v1) of the daemons' address.
func (c *Cluster) monAddrs(id string) string {
	k := slices.Index(monIDs, id)
	return fmt.Sprintf("[v2:%s:%d,v1:%s:%d]", c.st.MonAddr, 3300+k, c.st.MonAddr, 6789+k)
}

// monIDs are the ids of the mons a cluster may have, in order.
var monIDs = []string{"a", "b", "c"}

// Host is the CRUSH host bucket of OSD id ("" without Options.Hosts).
func (c *Cluster) Host(id int) string {
	if c.st.OSDsPerHost == 0 {
		return ""
	}
	return fmt.Sprintf("host%d", id/c.st.OSDsPerHost)
}

// HostOSDs lists the OSDs of CRUSH host bucket host.
func (c *Cluster) HostOSDs(host string) []int {
	var ids []int
	for _, id := range c.OSDs() {
		if c.Host(id) == host {
			ids = append(ids, id)
		}
	}
	return ids
}

// Pool is the pool created for clients.
func (c *Cluster) Pool() string { return c.st.Pool }

// OSDs lists the OSD ids.
func (c *Cluster) OSDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.st.OSDs)
}

// AdminConf is the ceph.conf of the cluster (client.admin's keyring is in
// it); it is valid inside the cluster's namespace only.
func (c *Cluster) AdminConf() string { return filepath.Join(c.dir, "ceph.conf") }

// AdminKeyring is the keyring of client.admin.
func (c *Cluster) AdminKeyring() string { return filepath.Join(c.dir, "keyring") }

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.dir}, elem...)...)
}

// save writes the state file atomically; c.mu must not be needed by callers
// that hold it (save takes a snapshot itself).
func (c *Cluster) save() error {
	c.mu.Lock()
	raw, err := json.MarshalIndent(c.st, "", "  ")
	c.mu.Unlock()
	if err != nil {
		return err
	}
	tmp := c.path(stateFile + ".tmp")
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.path(stateFile))
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func newUUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
