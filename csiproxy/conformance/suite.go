package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"

	"github.com/fenceproof/fenceproof/csiproxy/endpoint"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// Config is what a run needs. Rules that would change a real host beyond
// the kubelet directories run only when their resource is named.
type Config struct {
	// Endpoint is unix:///dir or npipe://./pipe/.
	Endpoint string
	// PluginsPath and PodPath are csi-proxy's kubelet-csi-plugins-path and
	// kubelet-pod-path.
	PluginsPath, PodPath string
	// SymlinkInPods is an existing symbolic link below PodPath (LINK-006);
	// empty skips that case.
	SymlinkInPods string
	// ScratchDisk is a disk the suite may go offline, partition and
	// format (DISK-002, VOL-001); negative skips them.
	ScratchDisk int
	// SMBShare is a reachable \\server\share with SMBUser/SMBPassword
	// (SMBAPI-001 and the valid SMB cases); empty skips them.
	SMBShare, SMBUser, SMBPassword string
	// ISCSIPortal is a reachable portal address (ISCSIAPI-001, the default
	// port and the valid CHAP cases, which change the node-wide secret);
	// empty skips them.
	ISCSIPortal string
	// RPCTimeout bounds every call.
	RPCTimeout time.Duration
	// RunID names what the suite creates (fp-<RunID>-N).
	RunID string
}

// Defaults are csi-proxy's default paths, no destructive resources.
func Defaults() Config {
	return Config{
		PluginsPath: restrict.DefaultPluginsPath, PodPath: restrict.DefaultPodPath,
		ScratchDisk: -1, RPCTimeout: 10 * time.Second, RunID: fmt.Sprint(time.Now().Unix() % 100000),
	}
}

// state is shared by the specs of one run.
type state struct {
	cfg      Config
	suite    *rulebook.Suite
	setupErr error
	ep       endpoint.Endpoint
	served   []string
	conns    map[string]*grpc.ClientConn
	fs       []fsAPI
	smb      []smbAPI
	n        atomic.Int64
}

func newState(cfg Config, strict bool) *state {
	s := &state{cfg: cfg}
	s.suite = book.Suite(rulebook.SuiteOptions{Strict: strict, Before: s.mustBeReady})
	return s
}

// mustBeReady fails every rule when the setup failed.
func (s *state) mustBeReady() {
	if s.setupErr != nil {
		Fail("setup: " + s.setupErr.Error())
	}
}

// it registers the body of rule id as one spec.
func (s *state) it(id string, body func(ctx context.Context)) { s.suite.It(id, body) }

func (s *state) name() string { return fmt.Sprintf("fp-%s-%d", s.cfg.RunID, s.n.Add(1)) }

func (s *state) expand(p, src, tgt string) string {
	return restrict.Expand(p, s.cfg.PluginsPath, s.cfg.PodPath, src, tgt)
}

func (s *state) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.RPCTimeout)
}

func (s *state) conn(group, version string) *grpc.ClientConn {
	return s.conns[restrict.PipeBase(group, version)]
}

// failures collects per-case failures so a rule reports every failing
// case, not only the first.
type failures []string

func (f *failures) add(format string, args ...any) { *f = append(*f, fmt.Sprintf(format, args...)) }

func (f failures) check() {
	ExpectWithOffset(1, len(f)).To(BeZero(), fmt.Sprintf("%d case(s) failed:\n  %s", len(f), strings.Join(f, "\n  ")))
}

// setup discovers the served versions and dials each.
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
		c, err := ep.DialName(name)
		if err != nil {
			return err
		}
		s.conns[name] = c
	}
	s.fs, s.smb = adapters(s.conns, s.cfg.PodPath)
	return nil
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
		restrictionSpecs(s)
		stateSpecs(s)
		fsSpecs(s)
		storageSpecs(s)
		remoteSpecs(s)
		codeSpecs(s)
	})
}

// RunOptions are the settings of a command-line run.
type RunOptions struct {
	LabelFilter string
	JUnitPath   string
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
		JUnitPath: opts.JUnitPath, Verbose: opts.Verbose, NoColor: opts.NoColor,
	})
	if err != nil {
		return nil, err
	}
	return newResult(s, base), nil
}
