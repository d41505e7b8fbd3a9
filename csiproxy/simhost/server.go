// Package simhost is the simulated Windows host: csi-proxy's API groups
// served over gRPC on unix sockets named like csi-proxy's named pipes,
// backed by hostmodel and enforcing every restriction through restrict.
//
// It is our own server on csi-proxy's generated stubs, not csi-proxy's
// server packages: those (github.com/kubernetes-csi/csi-proxy v1.1.3
// pkg/server/...) build on Linux against a host-API interface, but they do
// their own path validation before reaching the host API (one list of
// working directories for source and target, a prefix test without a
// separator boundary, errors with code UNKNOWN), so a fault that skips one
// restriction could not be injected, and its listener needs go-winio named
// pipes.
package simhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// API is one served group and version.
type API struct {
	Group, Version string
	register       func(*grpc.Server, *Sim)
}

// Served is every group and version the simulated host serves.
var Served = []API{
	{"disk", "v1", registerDiskV1},
	{"filesystem", "v1beta1", registerFSV1beta1},
	{"filesystem", "v1", registerFSV1},
	{"iscsi", "v1alpha2", registerISCSIV1alpha2},
	{"smb", "v1beta1", registerSMBV1beta1},
	{"smb", "v1", registerSMBV1},
	{"system", "v1alpha1", registerSystemV1alpha1},
	{"volume", "v1", registerVolumeV1},
}

// debugAPI is an endpoint outside the pipe scheme (csi-proxy-debug-exec)
// that the simulated host carries and its pipe-name check (PIPE-001) keeps
// from being served; the fault skip=PIPE-001 serves it.
var debugAPI = API{"debug", "exec", registerFSV1}

// Config configures a simulated host.
type Config struct {
	PluginsPath, PodPath string
	// SymlinkInPods is a symbolic link made below PodPath at start.
	SymlinkInPods string
	// IPsec: the initiator uses IPsec (mutual CHAP secrets of 1-16 bytes).
	IPsec  bool
	Faults Faults
	Log    *slog.Logger
}

// DefaultSymlinkInPods is the link the simulated host makes at start.
const DefaultSymlinkInPods = restrict.DefaultPodPath + `\fenceproof-symlink`

// Sim is a running simulated host.
type Sim struct {
	cfg     Config
	Host    *hostmodel.Host
	v       *restrict.Validator
	log     *slog.Logger
	servers []*grpc.Server
	wg      sync.WaitGroup
}

// New makes a simulated host; Serve starts it.
func New(cfg Config) *Sim {
	if cfg.PluginsPath == "" {
		cfg.PluginsPath = restrict.DefaultPluginsPath
	}
	if cfg.PodPath == "" {
		cfg.PodPath = restrict.DefaultPodPath
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Sim{
		cfg:  cfg,
		Host: hostmodel.New(cfg.PluginsPath, cfg.PodPath, cfg.SymlinkInPods),
		v:    &restrict.Validator{PluginsPath: cfg.PluginsPath, PodPath: cfg.PodPath, Skip: cfg.Faults.Skip},
		log:  cfg.Log,
	}
}

// Serve listens on one unix socket per served API in dir, named like the
// named pipe (csi-proxy-<group>-<version>), and serves until Stop.
func (s *Sim) Serve(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	apis := append([]API(nil), Served...)
	apis = append(apis, debugAPI)
	for _, a := range apis {
		if s.cfg.Faults.Drop[a.Group+"/"+a.Version] {
			continue
		}
		name := restrict.PipeBase(a.Group, a.Version)
		if _, _, err := s.v.ParsePipe(name); err != nil {
			continue // the pipe-name check keeps the debug endpoint unserved
		}
		gs := grpc.NewServer(grpc.ChainUnaryInterceptor(s.logCalls))
		a.register(gs, s)
		if err := s.listen(gs, filepath.Join(dir, name)); err != nil {
			s.Stop()
			return err
		}
	}
	return nil
}

func (s *Sim) listen(gs *grpc.Server, path string) error {
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("listen %s: %w", path, err)
	}
	s.servers = append(s.servers, gs)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = gs.Serve(l)
	}()
	return nil
}

// Stop stops every server and waits for them.
func (s *Sim) Stop() {
	for _, gs := range s.servers {
		gs.Stop()
	}
	s.wg.Wait()
}

// logCalls logs each call's method and outcome; requests are not logged
// (they carry SMB passwords and CHAP secrets).
func (s *Sim) logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil {
		s.log.Debug("call refused", "method", info.FullMethod, "code", status.Code(err).String(), "err", err.Error())
	} else {
		s.log.Debug("call", "method", info.FullMethod)
	}
	return resp, err
}

// refuse turns a validator or host error into a gRPC status.
func (s *Sim) refuse(err error) error {
	if err == nil {
		return nil
	}
	code := status.Code(err)
	var v *restrict.Violation
	if errors.As(err, &v) {
		code = codes.InvalidArgument
		if v.IsState() {
			code = codes.FailedPrecondition
		}
	}
	if s.cfg.Faults.UnknownCode && (code == codes.InvalidArgument || code == codes.FailedPrecondition) {
		code = codes.Unknown
	}
	msg := err.Error()
	if st, ok := status.FromError(err); ok {
		msg = st.Message()
	}
	return status.Error(code, msg)
}

// dirFor checks a directory-operation path.
func (s *Sim) dirFor(p string) error { return s.refuse(s.v.Dir("path", p)) }

// link is LinkPath / CreateSymlink: request rules, state rules, effect.
func (s *Sim) link(source, target string) error {
	if err := s.v.LinkPaths(source, target); err != nil {
		return s.refuse(err)
	}
	if s.cfg.Faults.EffectBeforeCheck {
		if err := s.Host.Link(source, target); err != nil {
			return s.refuse(err)
		}
		// The source exists now: judge it as it was.
		_, td, tl, te := s.Host.Stat(target)
		tx := s.Host.Exists(target)
		return s.refuse(s.v.LinkState(restrict.Entry{}, restrict.Entry{Exists: tx, IsDir: td, IsSymlink: tl, Empty: te}))
	}
	se, sd, sl, sm := s.Host.Stat(source)
	te, td, tl, tm := s.Host.Stat(target)
	if err := s.v.LinkState(restrict.Entry{Exists: se, IsDir: sd, IsSymlink: sl, Empty: sm}, restrict.Entry{Exists: te, IsDir: td, IsSymlink: tl, Empty: tm}); err != nil {
		return s.refuse(err)
	}
	if s.cfg.Faults.NoEffect {
		return nil
	}
	if se && s.cfg.Faults.Skip["LINK-003"] {
		// What a host without the check does: replace what is there.
		if err := s.Host.Rmdir(source, true); err != nil {
			return s.refuse(err)
		}
	}
	return s.refuse(s.Host.Link(source, target))
}

// mkdir checks and creates a directory.
func (s *Sim) mkdir(p string) error {
	if err := s.dirFor(p); err != nil {
		return err
	}
	if s.cfg.Faults.NoEffect {
		return nil
	}
	return s.refuse(s.Host.Mkdir(p))
}

// smbMap checks and creates a global mapping (and its local link).
func (s *Sim) smbMap(remote, local, user, password string) error {
	r, err := s.v.SMBRemotePath("remote_path", remote)
	if err != nil {
		return s.refuse(err)
	}
	if local != "" {
		if err := s.dirFor(local); err != nil {
			return err
		}
	}
	if s.cfg.Faults.NoEffect {
		return nil
	}
	key := r.Key()
	if r.Server == "" {
		key = remote
	}
	return s.refuse(s.Host.MapSMB(key, remote, local, user, password))
}

func (s *Sim) smbUnmap(remote string) error {
	r, err := s.v.SMBRemotePath("remote_path", remote)
	if err != nil {
		return s.refuse(err)
	}
	return s.refuse(s.Host.UnmapSMB(r.Key()))
}
