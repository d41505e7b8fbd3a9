// Package simhost is the simulated Windows host: every group version of
// csi-proxy's API (the 23 of client v1.1.3, through csiproxy/api's
// generated adapters) served over gRPC on unix sockets named like
// csi-proxy's named pipes, with csi-proxy v1's semantics (csiproxy/winos on
// csiproxy/hostmodel: the link at target_path, os.MkdirAll, os.RemoveAll)
// and every restriction of csiproxy/restrict enforced before any Windows
// call: what a correct csi-proxy does. Faults (package fault) break it on
// purpose, one way each, so the conformance suite can be shown to catch
// each, and make hostile hosts built to pass it while being unsafe.
//
// Every answer reports the Windows calls made for the request
// (csiproxy/hostrecord): the suite reads it to tell a refusal by
// validation from a failure of the Windows call it let through.
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

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
	"github.com/fenceproof/fenceproof/csiproxy/hostrecord"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/csiproxy/simhost/fault"
	"github.com/fenceproof/fenceproof/csiproxy/winos"
)

// Config configures a simulated host.
type Config struct {
	PluginsPath, PodPath string
	// IPsec: the initiator uses IPsec (mutual CHAP secrets of 1-16 bytes).
	IPsec bool
	// Services is the SVC-001 allow-list; nil is restrict.DefaultServices.
	Services []string
	// EscapeLink and InsideLink name the node's links (hostmodel.Standard);
	// empty: hostmodel.EscapeLink, hostmodel.InsideLink.
	EscapeLink, InsideLink string
	// Faults break the host; nil is the faithful host.
	Faults *fault.Set
	Log    *slog.Logger
}

// Sim is a running simulated host.
type Sim struct {
	cfg     Config
	Host    *hostmodel.Host
	OS      *winos.OS
	v       *restrict.Validator
	faults  *fault.Set
	log     *slog.Logger
	servers []*grpc.Server
	closers []func()
	wg      sync.WaitGroup
}

// New makes a simulated host on the standard node (hostmodel.Standard);
// Serve starts it.
func New(cfg Config) *Sim {
	if cfg.PluginsPath == "" {
		cfg.PluginsPath = restrict.DefaultPluginsPath
	}
	if cfg.PodPath == "" {
		cfg.PodPath = restrict.DefaultPodPath
	}
	if cfg.Services == nil {
		cfg.Services = restrict.DefaultServices
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.EscapeLink == "" {
		cfg.EscapeLink = hostmodel.EscapeLink
	}
	if cfg.InsideLink == "" {
		cfg.InsideLink = hostmodel.InsideLink
	}
	h := hostmodel.New(hostmodel.Standard(cfg.PluginsPath, cfg.PodPath, cfg.EscapeLink, cfg.InsideLink))
	o := winos.New(h)
	o.Interpolate = cfg.Faults.Interpolated()
	node := hostmodel.DefaultNode
	return &Sim{
		cfg: cfg, Host: h, OS: o, log: cfg.Log, faults: cfg.Faults,
		v: &restrict.Validator{PluginsPath: cfg.PluginsPath, PodPath: cfg.PodPath, LocalNames: node.Names, LocalAddresses: node.Addresses,
			Services: cfg.Services, Skip: cfg.Faults.Skipped()},
	}
}

// debugPipe is an endpoint outside the pipe scheme that the simulated host
// carries and its pipe-name check (PIPE-001) keeps unserved; the fault
// skip=PIPE-001 serves it.
const debugPipe = "csi-proxy-debug-exec"

// Serve listens on one unix socket per served group version in dir, named
// like its named pipe (csi-proxy-<group>-<version>), and on the record
// socket, and serves until Stop.
func (s *Sim) Serve(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	h := s.handlers()
	for _, gv := range api.Versions {
		if !s.faults.Serves(gv.Group + "/" + gv.Version) {
			continue
		}
		gs := s.grpcServer()
		gv.Register(gs, h)
		if err := s.listen(gs, filepath.Join(dir, gv.PipeBase())); err != nil {
			s.Stop()
			return err
		}
	}
	if _, _, err := s.v.ParsePipe(debugPipe); err == nil {
		gs := s.grpcServer()
		api.Versions[0].Register(gs, h)
		if err := s.listen(gs, filepath.Join(dir, debugPipe)); err != nil {
			s.Stop()
			return err
		}
	}
	if s.faults.Breaks(fault.DeadEndpoint) {
		if err := s.serveDead(filepath.Join(dir, "csi-proxy-volume-v3")); err != nil {
			s.Stop()
			return err
		}
	}
	return nil
}

func (s *Sim) grpcServer() *grpc.Server {
	return grpc.NewServer(grpc.ChainUnaryInterceptor(s.logCalls, hostrecord.Interceptor(s.Host)))
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

// serveDead listens on path and closes every connection it accepts.
func (s *Sim) serveDead(path string) error {
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, func() { _ = l.Close() })
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return nil
}

// Stop stops every server and waits for them, then closes what the faults
// keep.
func (s *Sim) Stop() {
	for _, gs := range s.servers {
		gs.Stop()
	}
	for _, c := range s.closers {
		c()
	}
	s.wg.Wait()
	if err := s.faults.Close(); err != nil {
		s.log.Error("closing the faults", "err", err)
	}
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

// refuse turns a validator, Windows-layer or host error into a gRPC
// status: a violated request rule is INVALID_ARGUMENT, a violated state
// rule FAILED_PRECONDITION, a Windows failure its own code.
func (s *Sim) refuse(err error) error {
	if err == nil {
		return nil
	}
	code := status.Code(err)
	var v *restrict.Violation
	var w *winos.Error
	switch {
	case errors.As(err, &v):
		code = codes.InvalidArgument
		if v.IsState() {
			code = codes.FailedPrecondition
		}
	case errors.As(err, &w):
		code = w.Code
	}
	code = s.faults.Code(code)
	msg := err.Error()
	if st, ok := status.FromError(err); ok && w == nil && v == nil {
		msg = st.Message()
	}
	return status.Error(code, msg)
}

func (s *Sim) handlers() api.Handlers {
	return api.Handlers{
		Disk: diskHandler{s}, Filesystem: fsHandler{s}, Iscsi: iscsiHandler{s},
		Smb: smbHandler{s}, System: systemHandler{s}, Volume: volumeHandler{s},
	}
}
