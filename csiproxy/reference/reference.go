// Package reference is the reference lane: csi-proxy v1.1.3's own server
// code (its pkg/server packages, unmodified, from the module
// github.com/kubernetes-csi/csi-proxy pinned at v1.1.3) serving every API
// group and version it serves on Windows, over unix sockets named like its
// named pipes, with csiproxy/winos (csi-proxy's Windows layer on the
// in-memory host) as its host API. The conformance suite runs against it
// to judge the suite itself: what csi-proxy accepts and refuses is what a
// real node does, up to the host model.
//
// The disk group's server needs its OS package's API interface, and that
// package only compiles for Windows; a build with the csiproxy_disk tag
// against PatchedModule (csi-proxy with that one file reduced to its
// interface, osdisk/api.go) serves it too. Without the tag the lane
// serves the other 18 group versions.
package reference

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	filesystemsrv "github.com/kubernetes-csi/csi-proxy/pkg/server/filesystem"
	iscsisrv "github.com/kubernetes-csi/csi-proxy/pkg/server/iscsi"
	smbsrv "github.com/kubernetes-csi/csi-proxy/pkg/server/smb"
	syssrv "github.com/kubernetes-csi/csi-proxy/pkg/server/system"
	srvtypes "github.com/kubernetes-csi/csi-proxy/pkg/server/types"
	volumesrv "github.com/kubernetes-csi/csi-proxy/pkg/server/volume"
	"google.golang.org/grpc"
	"k8s.io/klog/v2"

	"github.com/fenceproof/fenceproof/csiproxy/winos"
)

// Version is the csi-proxy release whose server code this lane runs.
const Version = "v1.1.3"

// Config is csi-proxy's command line, by its own flag names.
type Config struct {
	// KubeletPath is --kubelet-path (default C:\var\lib\kubelet).
	KubeletPath string
	// WorkingDirs are the --working-dir flags.
	WorkingDirs []string
	// Log receives csi-proxy's klog output; nil discards it.
	Log io.Writer
	// ServerOptions are added to every gRPC server (the host record's
	// interceptor).
	ServerOptions []grpc.ServerOption
}

// DefaultKubeletPath is csi-proxy's default --kubelet-path.
const DefaultKubeletPath = `C:\var\lib\kubelet`

// diskGroup builds the disk group's server; set by the csiproxy_disk build.
var diskGroup func(*winos.OS) (srvtypes.APIGroup, error)

// ServesDisk reports whether this build serves the disk group.
func ServesDisk() bool { return diskGroup != nil }

// Server is csi-proxy's API groups served on unix sockets.
type Server struct {
	servers []*grpc.Server
	wg      sync.WaitGroup
	// Served lists the pipe base names served (csi-proxy-<group>-<version>).
	Served []string
}

// groups builds csi-proxy's API groups the way its main does: the
// filesystem server with the working directories and the kubelet path,
// the SMB server on top of it.
func groups(cfg Config, o *winos.OS) ([]srvtypes.APIGroup, error) {
	if cfg.KubeletPath == "" {
		cfg.KubeletPath = DefaultKubeletPath
	}
	fs, err := filesystemsrv.NewServer(append(append([]string(nil), cfg.WorkingDirs...), cfg.KubeletPath), o)
	if err != nil {
		return nil, err
	}
	vol, err := volumesrv.NewServer(o)
	if err != nil {
		return nil, err
	}
	smb, err := smbsrv.NewServer(o, fs)
	if err != nil {
		return nil, err
	}
	sys, err := syssrv.NewServer(o)
	if err != nil {
		return nil, err
	}
	iscsi, err := iscsisrv.NewServer(o)
	if err != nil {
		return nil, err
	}
	out := []srvtypes.APIGroup{fs, vol, smb, sys, iscsi}
	if diskGroup != nil {
		d, err := diskGroup(o)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Serve serves every versioned API of csi-proxy's groups on o's host, one
// unix socket per version in dir, until Stop.
func Serve(dir string, cfg Config, o *winos.OS) (*Server, error) {
	quietKlog(cfg.Log)
	gs, err := groups(cfg, o)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Server{}
	for _, g := range gs {
		for _, api := range g.VersionedAPIs() {
			name := fmt.Sprintf("csi-proxy-%s-%s", api.Group, api.Version)
			path := filepath.Join(dir, name)
			_ = os.Remove(path)
			l, err := net.Listen("unix", path)
			if err != nil {
				s.Stop()
				return nil, fmt.Errorf("listen %s: %w", path, err)
			}
			srv := grpc.NewServer(cfg.ServerOptions...)
			api.Registrant(srv)
			s.servers = append(s.servers, srv)
			s.Served = append(s.Served, name)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				_ = srv.Serve(l)
			}()
		}
	}
	return s, nil
}

// quietKlog sends csi-proxy's klog output to w (nowhere when nil),
// never to standard error.
func quietKlog(w io.Writer) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL", "one_output": "true"} {
		_ = fs.Set(name, v)
	}
	if w == nil {
		w = io.Discard
	}
	klog.SetOutput(w)
}

// Stop stops every server and waits for them.
func (s *Server) Stop() {
	for _, srv := range s.servers {
		srv.Stop()
	}
	s.wg.Wait()
}

// String lists what is served.
func (s *Server) String() string { return strings.Join(s.Served, " ") }
