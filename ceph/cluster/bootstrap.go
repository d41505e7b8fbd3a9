//go:build linux

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// baseConfig is the [global] section every cluster gets: {dir} is the
// directory, {monhost} every mon's addresses, {subnet} the subnet. One host:
// pool size 1 allowed and CRUSH failure domain osd; autoscaler off (it
// changes PG counts mid-run); mon_data_avail_* low (a full disk must not
// keep the cluster in HEALTH_WARN); every path in the directory.
var baseConfig = []string{
	"mon_host = {monhost}",
	"public_network = {subnet}",
	"ms_bind_ipv4 = true",
	"ms_bind_ipv6 = false",
	"auth_cluster_required = cephx",
	"auth_service_required = cephx",
	"auth_client_required = cephx",
	"auth_allow_insecure_global_id_reclaim = false",
	"mon_allow_pool_size_one = true",
	"mon_warn_on_pool_no_redundancy = false",
	"osd_crush_chooseleaf_type = 0",
	"osd_pool_default_pg_autoscale_mode = off",
	"mon_data_avail_warn = 1",
	"mon_data_avail_crit = 0",
	"run_dir = {dir}/run",
	"admin_socket = {dir}/run/$name.asok",
	"pid_file = {dir}/run/$name.pid",
	"log_file = {dir}/log/$name.log",
	"mon_data = {dir}/mon/$name",
	"osd_data = {dir}/osd/$name",
	"mgr_data = {dir}/mgr/$name",
	"keyring = {dir}/keyring",
	"osd_op_num_shards = 1",
	"osd_op_num_threads_per_shard = 2",
}

// storeConfig is the object store's part, per ObjectStore.
var storeConfig = map[string][]string{
	"memstore":  {"osd_objectstore = memstore", "memstore_device_bytes = 536870912"},
	"bluestore": {"osd_objectstore = bluestore", "bluestore_block_create = true", "bluestore_block_size = 2147483648", "bluestore_fsck_on_mount = false"},
}

func (c *Cluster) renderConfig(o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[global]\nfsid = %s\n", c.st.FSID)
	r := strings.NewReplacer("{dir}", c.dir, "{monhost}", c.MonHost(), "{subnet}", c.st.Subnet)
	for _, l := range baseConfig {
		b.WriteString(r.Replace(l) + "\n")
	}
	fmt.Fprintf(&b, "osd_pool_default_size = %d\nosd_pool_default_min_size = 1\nosd_pool_default_pg_num = %d\n", o.PoolSize, o.PGs)
	for _, l := range storeConfig[o.ObjectStore] {
		b.WriteString(l + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(o.Config)) {
		fmt.Fprintf(&b, "%s = %s\n", k, o.Config[k])
	}
	// Clients sharing a name would share one admin socket path.
	fmt.Fprintf(&b, "[client]\nadmin_socket = %s/run/$name.$pid.asok\n", c.dir)
	// Each OSD places itself in its host bucket when it starts
	// (osd_crush_update_on_start).
	for id := range o.OSDs {
		if h := c.Host(id); h != "" {
			fmt.Fprintf(&b, "[osd.%d]\ncrush_location = root=default host=%s\n", id, h)
		}
	}
	return b.String()
}

// daemonKeys are the keys ceph-authtool creates before the mon exists.
var daemonKeys = [][]string{
	{"mon.", "--cap", "mon", "allow *"},
	{"client.admin", "--cap", "mon", "allow *", "--cap", "osd", "allow *", "--cap", "mgr", "allow *"},
	{"mgr.x", "--cap", "mon", "allow profile mgr", "--cap", "osd", "allow *"},
}

// bootstrap writes the configuration and keys, then starts the mon, the mgr
// and the OSDs, creates the pool and waits for health.
func (c *Cluster) bootstrap(ctx context.Context, o Options) error {
	for _, d := range []string{"run", "log", "mon", "osd", "mgr", "clients"} {
		if err := os.MkdirAll(c.path(d), 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(c.AdminConf(), []byte(c.renderConfig(o)), 0o600); err != nil {
		return err
	}
	kr := c.AdminKeyring()
	keys := slices.Clone(daemonKeys)
	for id := range o.OSDs {
		keys = append(keys, []string{"osd." + strconv.Itoa(id), "--cap", "mon", "allow profile osd", "--cap", "mgr", "allow profile osd", "--cap", "osd", "allow *"})
	}
	// The mon imports every key of this keyring at mkfs.
	for i, k := range keys {
		args := []string{kr, "--gen-key", "-n", k[0]}
		if i == 0 {
			args = append([]string{"--create-keyring"}, args...)
		}
		if _, err := run(ctx, "", "ceph-authtool", append(args, k[1:]...)...); err != nil {
			return err
		}
	}
	monmap := c.path("monmap")
	args := []string{"--create", "--fsid", c.st.FSID}
	for _, id := range c.monIDs() {
		args = append(args, "--addv", id, c.monAddrs(id))
	}
	if _, err := run(ctx, "", "monmaptool", append(args, monmap)...); err != nil {
		return err
	}
	// mkfs looks for a local address in public_network: inside the netns.
	// Each mon binds the addresses the monmap gives its name.
	for _, id := range c.monIDs() {
		if _, err := run(ctx, c.st.NetNS, "ceph-mon", "-c", c.AdminConf(), "--mkfs", "-i", id, "--monmap", monmap, "--keyring", kr); err != nil {
			return err
		}
	}
	for _, id := range c.monIDs() {
		if err := c.startDaemon(ctx, "mon", id); err != nil {
			return err
		}
	}
	if err := c.waitMons(ctx); err != nil {
		return err
	}
	if o.ImportKeyring != "" {
		if _, err := c.Ceph(ctx, "auth", "import", "-i", o.ImportKeyring); err != nil {
			return err
		}
	}
	if o.Mgr {
		if err := c.startDaemon(ctx, "mgr", "x"); err != nil {
			return err
		}
	}
	for id := range o.OSDs {
		if err := c.createOSD(ctx, id); err != nil {
			return err
		}
	}
	if err := c.waitOSDsUp(ctx, o.OSDs); err != nil {
		return err
	}
	pool := [][]string{
		{"osd", "pool", "create", o.Pool, strconv.Itoa(o.PGs), strconv.Itoa(o.PGs)},
		{"osd", "pool", "set", o.Pool, "size", strconv.Itoa(o.PoolSize), "--yes-i-really-mean-it"},
		{"osd", "pool", "application", "enable", o.Pool, "rados"},
	}
	if o.MinSize > 0 {
		pool = append(pool, []string{"osd", "pool", "set", o.Pool, "min_size", strconv.Itoa(o.MinSize)})
	}
	if o.Hosts > 0 {
		// the client pool's replicas on distinct hosts
		pool = append([][]string{{"osd", "crush", "rule", "create-replicated", hostRule, "default", "host"}}, pool...)
		pool = append(pool, []string{"osd", "pool", "set", o.Pool, "crush_rule", hostRule})
	}
	for _, args := range pool {
		if _, err := c.Ceph(ctx, args...); err != nil {
			return err
		}
	}
	if o.Mgr {
		// The mgr creates its own pool (device_health_metrics) shortly
		// after it starts: wait for it, or its PG would turn the
		// cluster unhealthy right after Start returned.
		if err := c.waitPool(ctx, mgrPool, 30*time.Second); err != nil {
			c.log.Warn("ceph: the mgr's pool did not appear; going on", "pool", mgrPool, "err", err)
		}
		return c.WaitHealthy(ctx)
	}
	return c.waitFirstWrite(ctx)
}

// hostRule is the CRUSH rule of the client pool with Options.Hosts.
const hostRule = "by-host"

// createOSD registers OSD id, makes its store and starts it.
func (c *Cluster) createOSD(ctx context.Context, id int) error {
	uuid := newUUID()
	name := "osd." + strconv.Itoa(id)
	if err := os.MkdirAll(c.path("osd", name), 0o700); err != nil {
		return err
	}
	if _, err := c.Ceph(ctx, "osd", "new", uuid, strconv.Itoa(id)); err != nil {
		return err
	}
	if _, err := run(ctx, c.st.NetNS, "ceph-osd", "-c", c.AdminConf(), "-i", strconv.Itoa(id), "--mkfs", "--osd-uuid", uuid); err != nil {
		return err
	}
	if err := c.startDaemon(ctx, "osd", strconv.Itoa(id)); err != nil {
		return err
	}
	c.mu.Lock()
	c.st.OSDs = append(c.st.OSDs, id)
	c.mu.Unlock()
	return c.save()
}

// mgrPool is the pool Pacific's mgr creates for itself.
const mgrPool = "device_health_metrics"

// waitPool waits up to limit for a pool to exist.
func (c *Cluster) waitPool(ctx context.Context, pool string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return poll(ctx, "pool "+pool, func() (bool, error) {
		out, err := c.Ceph(ctx, "osd", "pool", "ls")
		if err != nil {
			return false, nil
		}
		var pools []string
		json.Unmarshal(out, &pools)
		return slices.Contains(pools, pool), nil
	})
}

// waitFirstWrite waits until a client can write to the pool (the check
// without a mgr, which would report PG states).
func (c *Cluster) waitFirstWrite(ctx context.Context) error {
	return poll(ctx, "a first write to pool "+c.st.Pool, func() (bool, error) {
		_, err := run(ctx, c.st.NetNS, "rados", "-c", c.AdminConf(), "-p", c.st.Pool, "--rados-osd-op-timeout", "5", "put", "fenceproof-probe", "/dev/null")
		return err == nil, nil
	})
}
