//go:build linux

package nftables_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/fenceproof/fenceproof/driver"
	"github.com/fenceproof/fenceproof/driver/backend/nftables"
)

const controlPort = 9070

// tcpDriver runs a driver with the nftables backend in the server netns,
// listening on server4:9070, and returns a client that dials it from the
// fenced address of the client netns.
type tcpDriver struct {
	d     *driver.Driver
	state string
	f     fence.FenceControllerClient
	id    identity.IdentityClient
	conn  *grpc.ClientConn
}

func nsPath(n ns.NetNS) string { return fmt.Sprintf("/proc/self/fd/%d", n.Fd()) }

func startTCPDriver(t *testing.T, top *topology, o driver.Options) *tcpDriver {
	t.Helper()
	o.Backend, o.NetNS = "nftables", nsPath(top.server)
	if o.StatePath == "" {
		o.StatePath = filepath.Join(t.TempDir(), "state.db")
	}
	d, err := driver.New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ep := fmt.Sprintf("tcp://%s:%d", server4, controlPort)
	if err := top.server.Do(func(ns.NetNS) error { _, err := d.Start(ep); return err }); err != nil {
		d.Stop()
		t.Fatal(err)
	}
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		var c net.Conn
		err := top.client.Do(func(ns.NetNS) (err error) {
			dl := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: fenced4.AsSlice()}}
			c, err = dl.DialContext(ctx, "tcp", addr)
			return err
		})
		return c, err
	}
	conn, err := grpc.NewClient(fmt.Sprintf("passthrough:///%s:%d", server4, controlPort),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dial))
	if err != nil {
		t.Fatal(err)
	}
	td := &tcpDriver{d: d, state: o.StatePath, f: fence.NewFenceControllerClient(conn), id: identity.NewIdentityClient(conn), conn: conn}
	t.Cleanup(td.stop)
	return td
}

func (td *tcpDriver) stop() { td.conn.Close(); td.d.Stop() }

func (td *tcpDriver) call(rpc string, cidrs ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	switch rpc {
	case "fence":
		_, err = td.f.FenceClusterNetwork(ctx, &fence.FenceClusterNetworkRequest{Cidrs: cidrList(cidrs)})
	case "unfence":
		_, err = td.f.UnfenceClusterNetwork(ctx, &fence.UnfenceClusterNetworkRequest{Cidrs: cidrList(cidrs)})
	case "list":
		_, err = td.f.ListClusterFence(ctx, &fence.ListClusterFenceRequest{})
	}
	return err
}

func (td *tcpDriver) probe(t *testing.T) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := td.id.Probe(ctx, &identity.ProbeRequest{})
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	return r.GetReady().GetValue()
}

// eventually polls cond until it holds or the (generous) bound passes.
func eventually(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, bound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSlash0LockoutRecovers pins the lockout: fencing 0.0.0.0/0 (allowed
// here with --max-prefix 0) made the driver unreachable, and a restart
// re-applied it before serving. Now the control port is accepted before any
// drop: the fenced client lifts the fence over TCP, before and after a
// restart, and no file is touched.
func TestSlash0LockoutRecovers(t *testing.T) {
	top := newTopology(t)
	o := driver.Options{MaxPrefix: "0", ReconcileInterval: -1}
	td := startTCPDriver(t, top, o)
	if err := td.call("fence", "0.0.0.0/0"); err != nil {
		t.Fatal(err)
	}
	if top.served(fenced4) || top.served(sibling4) {
		t.Fatal("0.0.0.0/0 is not enforced on the data port")
	}
	if err := td.call("list"); err != nil {
		t.Fatalf("control path cut by the /0 fence: %v", err)
	}
	td.stop()
	o.StatePath = td.state
	td = startTCPDriver(t, top, o) // restart: /0 is re-applied before serving
	if top.served(fenced4) {
		t.Fatal("restart lost the /0 fence")
	}
	if err := td.call("unfence", "0.0.0.0/0"); err != nil {
		t.Fatalf("unfence over TCP after a restart under /0: %v", err)
	}
	if !top.served(fenced4) || !top.served(sibling4) {
		t.Fatal("still blocked after unfencing /0")
	}
}

// TestProtectedBlockNeverDropped: a --protect block stays served under a
// fence that covers it; its neighbours do not.
func TestProtectedBlockNeverDropped(t *testing.T) {
	top := newTopology(t)
	td := startTCPDriver(t, top, driver.Options{Protect: []string{sibling4.String() + "/32"}, ReconcileInterval: -1})
	if err := td.call("fence", "10.99.0.0/24"); err != nil {
		t.Fatal(err)
	}
	if !top.served(sibling4) {
		t.Fatal("protected source dropped")
	}
	if top.served(fenced4) || top.served(high4) {
		t.Fatal("unprotected sources in the /24 still served")
	}
}

// TestMappedFenceStopsIPv4Client pins the fail-open bug: a fence given as
// ::ffff:10.99.0.2/128 was acknowledged while the IPv4 client connected.
func TestMappedFenceStopsIPv4Client(t *testing.T) {
	top := newTopology(t)
	td := startTCPDriver(t, top, driver.Options{ReconcileInterval: -1})
	if err := td.call("fence", "::ffff:10.99.0.2/128"); err != nil {
		t.Fatal(err)
	}
	if top.served(fenced4) {
		t.Fatal("IPv4 client of an acknowledged ::ffff:10.99.0.2/128 fence still served (fail open)")
	}
	if !top.served(sibling4) {
		t.Fatal("sibling blocked")
	}
}

// removeTable deletes the driver's table from the server netns, as another
// tool would.
func removeTable(t *testing.T, top *topology, table string) {
	t.Helper()
	other, err := nftables.New(nsPath(top.server), nil, nftables.WithTable(table))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Remove(); err != nil {
		t.Fatal(err)
	}
}

// TestDeletedTableRestored: with the table deleted behind the driver's back
// the fenced source is served (drift); Probe says not ready at once, and the
// driver restores the table (kicked by Probe, or on its own within the
// reconcile interval), after which Probe is ready again.
func TestDeletedTableRestored(t *testing.T) {
	top := newTopology(t)
	const bound = 10 * time.Second // generous on a loaded machine
	t.Run("kicked by Probe", func(t *testing.T) {
		td := startTCPDriver(t, top, driver.Options{ReconcileInterval: time.Hour})
		if err := td.call("fence", "10.99.0.2/32"); err != nil {
			t.Fatal(err)
		}
		if !td.probe(t) {
			t.Fatal("not ready before any drift")
		}
		removeTable(t, top, nftables.TableName)
		if !top.served(fenced4) {
			t.Fatal("deleting the table did not lift the fence: the test cannot see drift")
		}
		time.Sleep(1100 * time.Millisecond) // Probe verifies at most once a second
		if td.probe(t) {
			t.Fatal("Probe ready while the table is missing")
		}
		eventually(t, bound, "table restored and Probe ready", func() bool { return td.probe(t) })
		if top.served(fenced4) {
			t.Fatal("Probe ready but the fenced source is served")
		}
		td.stop()
		removeTable(t, top, nftables.TableName) // enforcement outlives a driver; the next one has another state file
	})
	t.Run("periodic", func(t *testing.T) {
		td := startTCPDriver(t, top, driver.Options{ReconcileInterval: 200 * time.Millisecond})
		if err := td.call("fence", "10.99.0.2/32"); err != nil {
			t.Fatal(err)
		}
		removeTable(t, top, nftables.TableName)
		eventually(t, bound, "fence restored without any RPC", func() bool { return !top.served(fenced4) })
		// The reconciler marks itself ready just after the table it
		// restored is in force: a read right then raced it.
		eventually(t, bound, "ready after the restore", func() bool { ready, _ := td.d.Ready(); return ready })
	})
}

// TestTwoInstancesDoNotClobber: a second driver (another state file) on the
// same netns and table refuses to start; with its own --table both enforce
// their own fences, and one's unfence leaves the other's fence in force.
func TestTwoInstancesDoNotClobber(t *testing.T) {
	top := newTopology(t)
	first := startTCPDriver(t, top, driver.Options{ReconcileInterval: 200 * time.Millisecond})
	if err := first.call("fence", "10.99.0.2/32"); err != nil {
		t.Fatal(err)
	}
	_, err := driver.New(context.Background(), driver.Options{Backend: "nftables", NetNS: nsPath(top.server),
		StatePath: filepath.Join(t.TempDir(), "second.db")})
	if err == nil || !strings.Contains(err.Error(), "another driver instance") {
		t.Fatalf("second instance on the same table: %v, want a refusal", err)
	}
	if top.served(fenced4) {
		t.Fatal("the refused second instance lifted the first one's fence")
	}
	second, err := driver.New(context.Background(), driver.Options{Backend: "nftables", NetNS: nsPath(top.server),
		StatePath: filepath.Join(t.TempDir(), "second.db"), Table: "fenceproof-b", ReconcileInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Stop()
	dir, err := os.MkdirTemp("", "fp2")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	addr, err := second.Start("unix://" + filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c2 := client{fence.NewFenceControllerClient(conn)}
	c2.fence(t, "10.99.0.3/32")
	c2.unfence(t, "10.99.0.3/32", "10.99.0.2/32")
	time.Sleep(time.Second) // several reconcile rounds of both
	if top.served(fenced4) {
		t.Fatal("the second instance's unfence lifted the first one's fence")
	}
	if ok, why := first.d.Ready(); !ok {
		t.Fatalf("first instance saw drift from the second: %s", why)
	}
	if ok, why := second.Ready(); !ok {
		t.Fatalf("second instance saw drift from the first: %s", why)
	}
	if err := errors.Join(first.call("unfence", "10.99.0.2/32")); err != nil {
		t.Fatal(err)
	}
	if !top.served(fenced4) {
		t.Fatal("still blocked after the owner unfenced")
	}
}

// nftConn opens a netlink connection to nftables in the server netns, as
// another tool there would.
func nftConn(t *testing.T, top *topology) *gnft.Conn {
	t.Helper()
	c, err := gnft.New(gnft.WithNetNSFd(int(top.server.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// acceptHosts4 replaces the input chain's drop of @hosts4 by an accept:
// same table, same rule count, same sets, no enforcement of host fences.
func acceptHosts4(t *testing.T, top *topology) {
	c := nftConn(t, top)
	tbl := &gnft.Table{Name: nftables.TableName, Family: gnft.TableFamilyINet}
	ch := &gnft.Chain{Name: "input", Table: tbl}
	rules, err := c.GetRules(tbl, ch)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules {
		hosts := slices.ContainsFunc(r.Exprs, func(e expr.Any) bool {
			l, ok := e.(*expr.Lookup)
			return ok && l.SetName == nftables.Hosts4Name
		})
		if !hosts {
			continue
		}
		for _, e := range r.Exprs {
			if v, ok := e.(*expr.Verdict); ok {
				v.Kind = expr.VerdictAccept
			}
		}
		c.ReplaceRule(&gnft.Rule{Table: tbl, Chain: ch, Handle: r.Handle, Exprs: r.Exprs})
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("no rule matches @hosts4")
}

// makeDormant sets the table's dormant flag (nft add table inet fenceproof
// '{ flags dormant; }'): chains, rules and sets stay, no hook runs. The
// nftables library cannot set table flags, so the batch is built here.
func makeDormant(t *testing.T, top *topology) {
	var conn *netlink.Conn
	err := top.server.Do(func(ns.NetNS) (err error) {
		conn, err = netlink.Dial(unix.NETLINK_NETFILTER, nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	nfgen := func(family uint8, resID uint16) []byte {
		return []byte{family, unix.NFNETLINK_V0, byte(resID >> 8), byte(resID)}
	}
	ae := netlink.NewAttributeEncoder()
	ae.ByteOrder = binary.BigEndian
	ae.String(unix.NFTA_TABLE_NAME, nftables.TableName)
	ae.Uint32(unix.NFTA_TABLE_FLAGS, 1) // NFT_TABLE_F_DORMANT
	attrs, err := ae.Encode()
	if err != nil {
		t.Fatal(err)
	}
	msgs := []netlink.Message{
		{Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_MSG_BATCH_BEGIN), Flags: netlink.Request}, Data: nfgen(unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES)},
		{Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_NEWTABLE), Flags: netlink.Request | netlink.Acknowledge},
			Data: append(nfgen(unix.NFPROTO_INET, 0), attrs...)},
		{Header: netlink.Header{Type: netlink.HeaderType(unix.NFNL_MSG_BATCH_END), Flags: netlink.Request}, Data: nfgen(unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES)},
	}
	if _, err := conn.SendMessages(msgs); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Receive(); err != nil {
		t.Fatalf("set dormant: %v", err)
	}
	tbl, err := nftConn(t, top).ListTableOfFamily(nftables.TableName, gnft.TableFamilyINet)
	// google/nftables v0.3.0 decodes the flags in host byte order
	// (dormant reads as 1<<24 here), so any non-zero value will do.
	if err != nil || tbl.Flags == 0 {
		t.Fatalf("table not dormant: %+v, %v", tbl, err)
	}
}

// TestEditedTableRestored: edits that keep the table, its rule counts and
// its sets but stop enforcement (a drop replaced by an accept; the table
// made dormant) are drift too. Each lets the fenced source through; Probe
// answers not ready, the driver rebuilds the table and the source is
// dropped again.
func TestEditedTableRestored(t *testing.T) {
	top := newTopology(t)
	const bound = 10 * time.Second // generous on a loaded machine
	for _, edit := range []struct {
		name string
		do   func(*testing.T, *topology)
	}{{"drop replaced by accept", acceptHosts4}, {"table dormant", makeDormant}} {
		t.Run(edit.name, func(t *testing.T) {
			td := startTCPDriver(t, top, driver.Options{ReconcileInterval: time.Hour})
			defer removeTable(t, top, nftables.TableName) // the next subtest's driver has another state file
			defer td.stop()
			if err := td.call("fence", "10.99.0.2/32"); err != nil {
				t.Fatal(err)
			}
			if !td.probe(t) || top.served(fenced4) {
				t.Fatal("fence not in force before the edit")
			}
			edit.do(t, top)
			if !top.served(fenced4) {
				t.Fatal("the edit did not lift the fence: the test cannot see drift")
			}
			time.Sleep(1100 * time.Millisecond) // Probe verifies at most once a second
			if td.probe(t) {
				t.Fatal("Probe ready while the table is edited")
			}
			eventually(t, bound, "table rebuilt and Probe ready", func() bool { return td.probe(t) })
			if top.served(fenced4) {
				t.Fatal("Probe ready but the fenced source is served")
			}
		})
	}
}
