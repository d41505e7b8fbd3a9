// Package driver is fenceproof's reference CSI-Addons fence driver: the
// FenceController and Identity gRPC services over a unix socket or TCP,
// validating requests per the spec's error table, storing fences durably in
// bbolt and enforcing them through a backend (memory, or nftables on Linux).
//
// # Durability and ordering
//
// The store is the truth and the backend is its projection. Concurrent
// mutations are group-committed (mutate.go): each is validated and staged in
// order on one combined change, exactly as if serialised (no side effect on
// any error), and the batch runs as: commit the touched records to the store
// (fsync) → hand the backend the prefixes that entered and left the set
// (backend.Incremental) or the whole next set, in one atomic transaction →
// answer. If the backend fails, the previous records are committed back to
// the store, so store and enforcement stay equal and the RPCs return UNKNOWN
// having changed nothing. A crash between the commit and the backend update
// leaves the store ahead of the kernel; New re-applies the whole store before
// serving, so an acknowledged fence is never lost and an unacknowledged one
// is at worst enforced early (fail closed).
//
// # Prefixes
//
// CIDR blocks are parsed strictly with net/netip and stored in canonical
// form (netip.Prefix.Masked().String()): host bits are cleared (or rejected
// with HostBits "reject"), IPv6 is compressed and lower-case. IPv4-mapped
// IPv6 blocks (::ffff:192.0.2.0/120) are the IPv4 blocks they name
// (192.0.2.0/24): stored, listed and enforced as such, because the client
// behind them connects over IPv4 (cidr.Unmap). Prefixes wider than
// Options.MaxPrefix (default: /0) are refused. Unfence removes
// only the exactly matching stored prefix; the backend enforces the union of
// what is stored, so an overlapping fence stays in force.
package driver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/csi-addons/spec/lib/go/fence"
	"github.com/csi-addons/spec/lib/go/identity"
	"google.golang.org/grpc"

	"github.com/fenceproof/fenceproof/driver/backend"
	"github.com/fenceproof/fenceproof/driver/backend/memory"
	refstorebackend "github.com/fenceproof/fenceproof/driver/backend/refstore"
	"github.com/fenceproof/fenceproof/driver/cidr"
	"github.com/fenceproof/fenceproof/driver/fault"
	"github.com/fenceproof/fenceproof/driver/store"
	"github.com/fenceproof/fenceproof/endpoint"
)

// DefaultName is the Identity name used when Options.Name is empty.
const DefaultName = "fenceproof.reference.driver"

// Options configures a Driver.
type Options struct {
	Name, Version      string            // GetIdentity name / vendor_version (defaults DefaultName, build version)
	Backend            string            // "memory" (default) | "nftables" | "refstore" | "ceph" (a -tags ceph build)
	RefstoreAdmin      string            // refstore: admin endpoint, unix:///path.sock or tcp://host:port
	RefstoreTokenFile  string            // refstore: bearer token file for a tcp:// admin endpoint
	Ceph               CephOptions       // ceph: the cluster and the blocklist policy
	StatePath          string            // bbolt file; required
	NetNS              string            // nftables only: "" = current netns, "new" = a private netns, else a netns path
	Table              string            // nftables only: table name, default "fenceproof"; one per driver instance in a netns
	Secrets            map[string]string // secrets every request must carry (all keys, equal values); empty = no auth
	RequiredParameters []string          // parameter keys every request must carry, with a non-empty value
	HostBits           string            // "normalise" (default) | "reject"
	MaxPrefix          string            // shortest prefix lengths accepted, "N" or "V4,V6" (cidr.ParseMinBits); "" refuses only /0 and ::/0
	Protect            []string          // CIDR blocks enforcement never drops, besides loopback and the TCP control port
	ProtectedPorts     []uint16          // nftables GetFenceClients: peers ESTABLISHED to these local ports
	StaticClients      []Client          // GetFenceClients answer when the backend sees no clients
	DisableGetClients  bool              // do not advertise GET_CLIENTS_TO_FENCE; GetFenceClients is UNIMPLEMENTED
	Faults             []string          // fault specs (package fault); a bad spec is an error
	ReconcileInterval  time.Duration     // how often enforcement is verified and repaired; 0 = DefaultReconcileInterval, <0 = never
	MaxMessageBytes    int               // largest request accepted; 0 = DefaultMaxMessageBytes
	MaxStreams         int               // concurrent RPCs per connection; 0 = DefaultMaxStreams
	MaxInFlight        int               // RPCs executing at once; 0 = DefaultMaxInFlight
	MaxBatchCIDRs      int               // CIDRs one group commit carries at most; 0 = DefaultMaxBatchCIDRs
	TLS                TLSFiles          // TLS for a tcp:// endpoint
	Logger             *slog.Logger      // default slog.Default()
}

// Client is one GetFenceClients answer entry.
type Client struct {
	ID        string
	Addresses []string // CIDR blocks
}

// DefaultStaticClients is the GetFenceClients answer when nothing is
// configured and nothing is seen: one client in a documentation range.
var DefaultStaticClients = []Client{{ID: "ref-client-1", Addresses: []string{"192.0.2.200/32"}}}

// Driver is a running reference driver.
type Driver struct {
	o        Options
	log      *slog.Logger
	faults   *fault.Set   // deliberate faults, acting at the hooks of the faithful path; nil: none
	parse    fault.Parser // the faithful parse of one CIDR (parseBlock), which the cidr hook wraps
	hostBits cidr.HostBits
	minBits  cidr.MinBits
	protect  []netip.Prefix
	clients  []Client
	store    *store.Store
	backend  backend.Backend

	mu      sync.Mutex   // serialises mutations
	qmu     sync.Mutex   // guards queue
	queue   []*mreq      // mutations waiting for the next batch (group commit)
	stateMu sync.RWMutex // guards live and maxSeq: written by mutations (under mu), read by List
	live    fenceSet     // mirror of the last committed store state
	maxSeq  uint64
	sortMu  sync.Mutex
	sorted  []*fence.CIDR // List's answer; nil when stale

	maxBatch      atomic.Int64 // most requests one commit carried (tests check batching happened)
	maxBatchSize  atomic.Int64 // most CIDRs a commit of several requests carried
	maxBatchCIDRs int          // bound on the CIDRs of one group commit (DefaultMaxBatchCIDRs)

	notReady atomic.Pointer[string] // why enforcement differs from the store; nil when it does not
	stopLoop chan struct{}
	kick     chan struct{} // wakes the reconciler (Probe saw drift)

	lastProbeVerify time.Time // guarded by mu
	loopDone        chan struct{}

	slots    chan struct{} // in-flight RPCs (boundInterceptor)
	srv      *grpc.Server
	lis      net.Listener
	sockPath string
	done     chan struct{}
	stopOnce sync.Once
	serveErr error
}

// New opens the store, builds the backend and re-applies every stored fence
// before returning.
func New(ctx context.Context, o Options) (*Driver, error) {
	d := &Driver{o: o, log: o.Logger, done: make(chan struct{}), maxBatchCIDRs: o.MaxBatchCIDRs}
	if d.maxBatchCIDRs <= 0 {
		d.maxBatchCIDRs = DefaultMaxBatchCIDRs
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	if d.o.Name == "" {
		d.o.Name = DefaultName
	}
	if d.o.Version == "" {
		d.o.Version = buildVersion()
	}
	var err error
	if d.faults, err = fault.Parse(o.Faults); err != nil {
		return nil, err
	}
	d.parse = d.parseBlock
	if d.hostBits, err = cidr.ParseHostBits(o.HostBits); err != nil {
		return nil, err
	}
	if d.minBits, err = cidr.ParseMinBits(o.MaxPrefix); err != nil {
		return nil, err
	}
	if d.protect, err = protectedSet(o.Protect); err != nil {
		return nil, err
	}
	if d.clients, err = checkClients(o.StaticClients); err != nil {
		return nil, err
	}
	for k := range o.Secrets {
		if k == "" {
			return nil, errors.New("secret with an empty key")
		}
	}
	if d.store, err = store.Open(o.StatePath); err != nil {
		return nil, err
	}
	st, err := d.load()
	if err != nil {
		d.store.Close()
		return nil, fmt.Errorf("load state %s: %w", o.StatePath, err)
	}
	d.live, d.maxSeq = st, st.maxSeq()
	if d.backend, err = newBackend(ctx, o, d.protect, d.store.InstanceID(), d.log); err != nil {
		d.store.Close()
		return nil, err
	}
	if err := d.backend.Apply(ctx, d.faults.Enforced(st.prefixes())); err != nil {
		d.backend.Close()
		d.store.Close()
		return nil, fmt.Errorf("re-apply %d stored fences: %w", len(st), err)
	}
	d.startReconciler()
	d.log.Info(MsgReady, "backend", backendName(o), "state", o.StatePath, "fences", len(st),
		KeyCIDRs, boundedCIDRs(blockKeys(st.sorted())), KeyCIDRCount, len(st), KeyTimeNs, time.Now().UnixNano(),
		"secret_keys", sortedKeys(o.Secrets), "faults", d.faults.Specs())
	return d, nil
}

func backendName(o Options) string {
	if o.Backend == "" {
		return "memory"
	}
	return o.Backend
}

func newBackend(ctx context.Context, o Options, protect []netip.Prefix, owner string, log *slog.Logger) (backend.Backend, error) {
	switch backendName(o) {
	case "memory":
		if o.NetNS != "" || o.Table != "" {
			return nil, errors.New("--netns and --table apply to the nftables backend only")
		}
		return memory.New(), nil
	case "nftables":
		return newNftables(o, protect, owner, log)
	case "refstore":
		if o.RefstoreAdmin == "" {
			return nil, errors.New("the refstore backend needs --refstore-admin")
		}
		return refstorebackend.New(o.RefstoreAdmin, o.RefstoreTokenFile, log)
	case "ceph":
		return newCeph(ctx, o, owner, log)
	}
	return nil, fmt.Errorf("unknown backend %q (want memory, nftables, refstore or ceph)", o.Backend)
}

// loopback is always protected.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// protectedSet parses --protect blocks and adds loopback.
func protectedSet(cs []string) ([]netip.Prefix, error) {
	out := slices.Clone(loopback)
	for _, c := range cs {
		p, err := cidr.Parse(c, cidr.Normalise)
		if err != nil {
			return nil, fmt.Errorf("protected block %q: %v", c, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func checkClients(cs []Client) ([]Client, error) {
	if len(cs) == 0 {
		return DefaultStaticClients, nil
	}
	for _, c := range cs {
		if c.ID == "" || len(c.Addresses) == 0 {
			return nil, fmt.Errorf("static client %q needs an id and at least one address", c.ID)
		}
		for _, a := range c.Addresses {
			if _, err := cidr.Parse(a, cidr.Reject); err != nil {
				return nil, fmt.Errorf("static client %q address %q: %v", c.ID, a, err)
			}
		}
	}
	return cs, nil
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// load reads the stored fences, through the load hook: each record becomes
// a block once, IPv4-mapped records are rewritten as IPv4 and every block
// is checked.
func (d *Driver) load() (fenceSet, error) {
	l := d.faults.Load()
	if l.Forget {
		d.log.Warn("a fault discards every stored fence at start")
		if err := d.store.Set(store.State{}); err != nil {
			return nil, err
		}
	}
	records, err := d.store.Load()
	if err != nil {
		return nil, err
	}
	if l.Keep > 0 && len(records) > l.Keep {
		records = oldest(records, l.Keep)
		d.log.Warn("a fault keeps only the oldest stored fences at start", "kept", l.Keep)
		if err := d.store.Set(records); err != nil {
			return nil, err
		}
	}
	st := loadSet(records)
	if l.Migrate {
		if err := d.migrateMapped(st); err != nil {
			return nil, err
		}
	}
	return st, d.checkBlocks(st, l)
}

// oldest are the n records fenced first.
func oldest(records store.State, n int) store.State {
	keys := slices.SortedFunc(maps.Keys(records), func(a, b string) int { return cmp.Compare(records[a].Seq, records[b].Seq) })
	out := store.State{}
	for _, k := range keys[:n] {
		out[k] = records[k]
	}
	return out
}

// Fences returns the prefixes in force now, read from the store, sorted.
// After Stop it returns the last committed set.
func (d *Driver) Fences() []netip.Prefix {
	var ps []netip.Prefix
	if records, err := d.store.Load(); err == nil {
		ps = loadSet(records).prefixes()
	} else {
		d.stateMu.RLock()
		ps = d.live.prefixes()
		d.stateMu.RUnlock()
	}
	slices.SortFunc(ps, netip.Prefix.Compare)
	return ps
}

// Start listens on an endpoint ("unix:///path.sock" or "tcp://host:port")
// and serves in the background. It returns the actual address in endpoint
// form.
func (d *Driver) Start(at string) (string, error) {
	if d.srv != nil {
		return "", errors.New("driver already started")
	}
	ep, err := endpoint.Parse(at, endpoint.Listen)
	if err != nil {
		return "", err
	}
	network, address := ep.Scheme, ep.Address
	if network == endpoint.Unix {
		if err := removeStaleSocket(address); err != nil {
			return "", err
		}
	}
	sopts, err := d.serverOptions(network)
	if err != nil {
		return "", err
	}
	var lis net.Listener
	if network == endpoint.Unix {
		lis, err = listenUnix(address)
	} else {
		lis, err = net.Listen(network, address)
	}
	if err != nil {
		return "", fmt.Errorf("listen %s: %w", at, err)
	}
	addr := "tcp://" + lis.Addr().String()
	if network == endpoint.TCP {
		if err := d.protectControlPort(lis.Addr()); err != nil {
			lis.Close()
			return "", err
		}
	}
	if network == endpoint.Unix {
		if err := os.Chmod(address, 0o600); err != nil {
			lis.Close()
			return "", err
		}
		d.sockPath = address
		addr = "unix://" + address
	}
	d.lis = lis
	d.srv = grpc.NewServer(sopts...)
	identity.RegisterIdentityServer(d.srv, &identityServer{d: d})
	fence.RegisterFenceControllerServer(d.srv, &fenceServer{d: d})
	go func() {
		if err := d.srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			d.serveErr = err
			d.log.Error("serve", "err", err)
		}
		d.Stop()
	}()
	d.log.Info("listening", "endpoint", addr)
	return addr, nil
}

// Serve is Start followed by waiting until Stop.
func (d *Driver) Serve(at string) error {
	if _, err := d.Start(at); err != nil {
		return err
	}
	<-d.done
	return d.serveErr
}

// Stop stops serving gracefully (in-flight RPCs get 5 s to finish), then
// closes the backend and the store. Enforcement stays in place. Safe to call
// more than once.
func (d *Driver) Stop() {
	d.stopOnce.Do(func() {
		if d.srv != nil {
			stopped := make(chan struct{})
			go func() { d.srv.GracefulStop(); close(stopped) }()
			select {
			case <-stopped:
			case <-time.After(5 * time.Second):
				d.srv.Stop()
			}
		}
		if d.stopLoop != nil {
			close(d.stopLoop)
			<-d.loopDone
		}
		d.mu.Lock()
		if err := d.backend.Close(); err != nil {
			d.log.Error("close backend", "err", err)
		}
		if err := d.store.Close(); err != nil {
			d.log.Error("close store", "err", err)
		}
		d.mu.Unlock()
		if d.sockPath != "" {
			os.Remove(d.sockPath)
		}
		d.log.Info("stopped")
		close(d.done)
	})
}

// protectControlPort makes the backend accept the TCP endpoint's port from
// every source before any drop rule, and re-applies the set with it, so no
// fence (not even 0.0.0.0/0) cuts the driver off from the clients that
// would lift it. It warns when the endpoint listens on every interface.
func (d *Driver) protectControlPort(a net.Addr) error {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return nil
	}
	if ta.IP.IsUnspecified() {
		d.log.Warn("the TCP endpoint listens on every interface: anyone who can reach this host may call the driver; name an address (tcp://10.0.0.5:9070) and use TLS", "endpoint", a.String())
	}
	cp, ok := d.backend.(interface{ SetControlPorts([]uint16) })
	if !ok {
		return nil
	}
	cp.SetControlPorts([]uint16{uint16(ta.Port)})
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stateMu.RLock()
	ps := d.faults.Enforced(d.live.prefixes())
	d.stateMu.RUnlock()
	if err := d.backend.Apply(context.Background(), ps); err != nil {
		return fmt.Errorf("protect control port %d: %w", ta.Port, err)
	}
	return nil
}

// removeStaleSocket removes a socket file nobody listens on; a live one is
// an error, anything else at the path is left alone and reported.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("%s exists and is not a socket", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%s: another process is listening", path)
	}
	return os.Remove(path)
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
