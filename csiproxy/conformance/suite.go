package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/endpoint"
	"github.com/fenceproof/fenceproof/csiproxy/hostrecord"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// Config is what a run needs. Rules that would change a real host beyond
// the kubelet directories run only when their resource is named.
type Config struct {
	// Endpoint is unix:///dir or npipe://./pipe/.
	Endpoint string
	// PluginsPath and PodPath are the KEP's kubelet-csi-plugins-path and
	// kubelet-pod-path (csi-proxy v1: below --kubelet-path).
	PluginsPath, PodPath string
	// WorkingDirs are csi-proxy v1's --working-dir directories: the host
	// accepts paths below them too, so no refusal case that lands in one
	// is sent.
	WorkingDirs []string
	// EscapeLink names a symbolic link that exists below both kubelet
	// directories and leads outside them (DIR-002, LINK-005 cases); empty
	// skips those cases.
	EscapeLink string
	// InsideLink names a symbolic link below the pod path leading to a
	// directory below it (a valid path through a link); empty skips it.
	InsideLink string
	// ScratchDisk is a disk the suite may take offline, partition and
	// format (DISK-002, VOL-001); negative skips them.
	ScratchDisk int
	// SMBShare is a reachable \\server\share with SMBUser/SMBPassword
	// (SMBAPI-001, and the SMB refusal cases, which need a server that
	// answers so a refusal cannot be a network failure); empty skips them.
	SMBShare, SMBUser, SMBPassword string
	// ISCSIPortal is a reachable portal address (ISCSIAPI-00x, the iSCSI
	// refusal cases and the CHAP cases, which change the node-wide secret);
	// empty skips them.
	ISCSIPortal string
	// Disruptive sends the refusal cases a real node would feel if its
	// csi-proxy accepted them (the pod directory itself to RmdirContents,
	// the OS volume to FormatVolume, a running service to StopService).
	// A host with a record of its Windows calls (simulated, reference)
	// gets them anyway.
	Disruptive bool
	// IgnoreRecord judges as on a real node even when the host reports its
	// Windows calls: any error is a refusal, disruptive cases need
	// Disruptive.
	IgnoreRecord bool
	// RPCTimeout bounds every call.
	RPCTimeout time.Duration
	// Seed is the run's seed: every name, case, separator and spelling of
	// every probe is drawn from it (restrict.Draw), so a run replays with
	// it and no two runs share a fixed marker.
	Seed uint64
	// Profile is the rules the host is held to: the KEP's text alone, or
	// everything (hardened, the default).
	Profile restrict.Profile
	// NodeNames are the node's names (short and fully qualified) and
	// NodeAddresses its IP addresses: an SMB mapping to any spelling of
	// them maps the node itself (SMB-005).
	NodeNames, NodeAddresses []string
}

// Defaults are csi-proxy's default paths, no destructive resources, the
// hardened profile, a seed from the clock.
func Defaults() Config {
	return Config{
		PluginsPath: restrict.DefaultPluginsPath, PodPath: restrict.DefaultPodPath,
		ScratchDisk: -1, RPCTimeout: 10 * time.Second, Seed: NewSeed(), Profile: restrict.Hardened,
	}
}

// NewSeed is a seed from the clock.
func NewSeed() uint64 { return uint64(time.Now().UnixNano()) }

// state is shared by the specs of one run.
type state struct {
	cfg      Config
	suite    *rulebook.Suite
	setupErr error
	ep       endpoint.Endpoint
	served   []string
	conns    map[string]*grpc.ClientConn
	// versions are the served group versions the api package knows,
	// newest first within a group.
	versions []api.GroupVersion
	// recorded: the host reports the Windows calls it makes for each
	// request (a simulated or reference host; not a real node).
	recorded bool
	// scratch is the volume the refusal cases name when they probe
	// another field: the scratch disk's, else one no host has (found at
	// the first case, after DISK-002 and VOL-001 made it).
	scratch  string
	osDisk   string
	osVolume string
	iqn      string
	// draw is the run's seeded source of names and probes.
	draw     *restrict.Draw
	refusals []refusal
	// escapeLost is the first accepted request of a removing RPC
	// (removes) that may name an existing entry: it may have deleted the
	// escape link, so later cases through the link are not sent (their
	// premise may not hold; the rule that accepted it fails already).
	escapeLost string
	// varied are the RPCs whose probes go out after a pause or under
	// load, drawn at the first refusal rule.
	varied map[string]variation
}

func newState(cfg Config, strict bool) *state {
	if cfg.Profile == "" {
		cfg.Profile = restrict.Hardened
	}
	server, share, _ := strings.Cut(strings.TrimPrefix(cfg.SMBShare, `\\`), `\`)
	s := &state{cfg: cfg, draw: restrict.NewDraw(cfg.Seed, restrict.Place{
		Plugins: cfg.PluginsPath, Pods: cfg.PodPath, Escape: cfg.EscapeLink,
		SMBServer: server, SMBShare: share, Portal: cfg.ISCSIPortal,
		NodeNames: cfg.NodeNames, NodeAddresses: cfg.NodeAddresses,
	})}
	s.suite = book.Suite(rulebook.SuiteOptions{Strict: strict, Before: s.mustBeReady})
	return s
}

// mustBeReady fails every rule when the setup failed.
func (s *state) mustBeReady() {
	if s.setupErr != nil {
		Fail("setup: " + s.setupErr.Error())
	}
}

// it registers the body of rule id as one spec; a rule whose source the
// profile does not hold a host to is not run.
func (s *state) it(id string, body func(ctx context.Context)) {
	s.suite.It(id, func(ctx context.Context) {
		if from := sourceOf(id); !s.cfg.Profile.Holds(from) {
			rulebook.Skip("profile %s holds a host to the KEP's text; this rule's source is %s", s.cfg.Profile, from)
		}
		body(ctx)
	})
}

// name is a fresh name, drawn.
func (s *state) name() string { return s.draw.Name() }

func (s *state) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.RPCTimeout)
}

// failures collects per-case failures so a rule reports every failing
// case, not only the first.
type failures []string

func (f *failures) add(format string, args ...any) { *f = append(*f, fmt.Sprintf(format, args...)) }

func (f failures) check() {
	ExpectWithOffset(1, len(f)).To(BeZero(), fmt.Sprintf("%d case(s) failed:\n  %s", len(f), strings.Join(f, "\n  ")))
}

// setup discovers the served versions, dials each, finds the host's
// record and the disk and volume the OS runs from.
func (s *state) setup(ctx context.Context) error {
	ep, err := endpoint.Parse(s.cfg.Endpoint)
	if err != nil {
		return err
	}
	s.ep = ep
	dctx, cancel := s.call(ctx)
	defer cancel()
	if s.served, err = ep.Discover(dctx); err != nil {
		return fmt.Errorf("discovering the served API versions: %w", err)
	}
	s.conns = map[string]*grpc.ClientConn{}
	for _, name := range s.served {
		c, err := ep.DialName(name, grpc.WithChainUnaryInterceptor(hostrecord.ClientInterceptor()))
		if err != nil {
			return err
		}
		s.conns[name] = c
	}
	for i := len(api.Versions) - 1; i >= 0; i-- {
		if gv := api.Versions[i]; s.conns[gv.PipeBase()] != nil {
			s.versions = append(s.versions, gv)
		}
	}
	slices.SortStableFunc(s.versions, func(a, b api.GroupVersion) int { return strings.Compare(a.Group, b.Group) })
	s.findOSDisk(dctx)
	s.draw.OSDisk, s.draw.OSVolume = s.osDisk, s.osVolume
	s.recorded = !s.cfg.IgnoreRecord && s.reports(dctx)
	return nil
}

// reports asks whether the host reports its Windows calls.
func (s *state) reports(ctx context.Context) bool {
	if fs := s.fs(); fs != nil {
		wctx, calls := hostrecord.Watch(ctx)
		_, _ = fs.PathExists(wctx, &api.FilesystemPathExistsRequest{Path: s.cfg.PodPath + `\` + s.name()})
		return calls.Reported
	}
	return false
}

// findOSDisk asks the host which volume holds a directory it makes below
// the pod path (volume v2alpha1's GetClosestVolumeIDFromTargetPath, which
// wants a path that exists) and which disk it is on; the SYSDISK-001
// cases are skipped when no served version tells.
func (s *state) findOSDisk(ctx context.Context) {
	dir := s.cfg.PodPath + `\` + s.name()
	if s.mkdir(ctx, dir) != nil {
		return
	}
	defer s.rmdir(ctx, dir)
	for _, gv := range s.of("volume", "GetClosestVolumeIDFromTargetPath") {
		v := api.NewVolumeClient(s.conns[gv.PipeBase()], gv.Version)
		r, err := v.GetClosestVolumeIDFromTargetPath(ctx, &api.VolumeGetClosestVolumeIDFromTargetPathRequest{TargetPath: dir})
		if err != nil || r.VolumeId == "" {
			continue
		}
		d, err := v.GetDiskNumberFromVolumeID(ctx, &api.VolumeGetDiskNumberFromVolumeIDRequest{VolumeId: r.VolumeId})
		if err != nil {
			continue
		}
		s.osVolume, s.osDisk = r.VolumeId, fmt.Sprint(d.DiskNumber)
		return
	}
}

// of lists the served versions of a group that have a method (by its
// version-neutral name), newest first.
func (s *state) of(group, method string) []api.GroupVersion {
	var out []api.GroupVersion
	for _, gv := range s.versions {
		if gv.Group == group && (method == "" || gv.Has(method)) {
			out = append(out, gv)
		}
	}
	return out
}

// register builds the spec tree for cfg.
func register(s *state) {
	Describe("csi-proxy", Ordered, ContinueOnFailure, func() {

		BeforeAll(func(ctx SpecContext) { s.setupErr = s.setup(ctx) })
		AfterAll(func() {
			for _, c := range s.conns {
				_ = c.Close()
			}
		})
		versionSpecs(s)
		fsSpecs(s)
		storageSpecs(s)
		remoteSpecs(s)
		noEffectSpecs(s)
		injectionSpecs(s)
		refusalSpecs(s)
		codeSpecs(s)
	})
}

// RunOptions are the settings of a command-line run.
type RunOptions struct {
	LabelFilter string
	Verbose     bool
	NoColor     bool
	// Strict makes SHOULD rules fail the run instead of warning.
	Strict bool
}

// Run runs the suite once in this process (a Ginkgo limit) and returns the
// verdict per rule.
func Run(cfg Config, opts RunOptions) (*Result, error) {
	if _, err := endpoint.Parse(cfg.Endpoint); err != nil {
		return nil, err
	}
	s := newState(cfg, opts.Strict)
	var _ = Describe("", func() { register(s) })
	base, err := s.suite.Run(rulebook.RunOptions{
		Selection: rulebook.Selection{LabelFilter: opts.LabelFilter},
		Verbose:   opts.Verbose, NoColor: opts.NoColor,
	})
	if err != nil {
		return nil, err
	}
	return newResult(s, base), nil
}
