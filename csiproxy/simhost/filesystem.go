package simhost

import (
	"context"

	fsv1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1"
	fsv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1beta1"
	"google.golang.org/grpc"
)

// fsV1 serves filesystem v1 (CreateSymlink, IsSymlink).
type fsV1 struct {
	fsv1.UnimplementedFilesystemServer
	s *Sim
}

func registerFSV1(g *grpc.Server, s *Sim) { fsv1.RegisterFilesystemServer(g, &fsV1{s: s}) }

func (f *fsV1) PathExists(_ context.Context, r *fsv1.PathExistsRequest) (*fsv1.PathExistsResponse, error) {
	if err := f.s.dirFor(r.Path); err != nil {
		return nil, err
	}
	return &fsv1.PathExistsResponse{Exists: f.s.Host.Exists(r.Path)}, nil
}

func (f *fsV1) Mkdir(_ context.Context, r *fsv1.MkdirRequest) (*fsv1.MkdirResponse, error) {
	return &fsv1.MkdirResponse{}, f.s.mkdir(r.Path)
}

func (f *fsV1) Rmdir(_ context.Context, r *fsv1.RmdirRequest) (*fsv1.RmdirResponse, error) {
	if err := f.s.dirFor(r.Path); err != nil {
		return nil, err
	}
	return &fsv1.RmdirResponse{}, f.s.refuse(f.s.Host.Rmdir(r.Path, r.Force))
}

func (f *fsV1) CreateSymlink(_ context.Context, r *fsv1.CreateSymlinkRequest) (*fsv1.CreateSymlinkResponse, error) {
	return &fsv1.CreateSymlinkResponse{}, f.s.link(r.SourcePath, r.TargetPath)
}

func (f *fsV1) IsSymlink(_ context.Context, r *fsv1.IsSymlinkRequest) (*fsv1.IsSymlinkResponse, error) {
	if err := f.s.dirFor(r.Path); err != nil {
		return nil, err
	}
	ok, err := f.s.Host.IsSymlink(r.Path)
	return &fsv1.IsSymlinkResponse{IsSymlink: ok}, f.s.refuse(err)
}

// fsV1beta1 serves filesystem v1beta1 (LinkPath, IsMountPoint, and a path
// context that says which kubelet path a directory operation is below).
type fsV1beta1 struct {
	fsv1beta1.UnimplementedFilesystemServer
	s *Sim
}

func registerFSV1beta1(g *grpc.Server, s *Sim) {
	fsv1beta1.RegisterFilesystemServer(g, &fsV1beta1{s: s})
}

// inContext checks a v1beta1 path against the kubelet path its context
// names (PLUGIN or POD).
func (f *fsV1beta1) inContext(p string, c fsv1beta1.PathContext) error {
	v := *f.s.v
	if c == fsv1beta1.PathContext_POD {
		v.PluginsPath = v.PodPath
	} else {
		v.PodPath = v.PluginsPath
	}
	return f.s.refuse(v.Dir("path", p))
}

func (f *fsV1beta1) PathExists(_ context.Context, r *fsv1beta1.PathExistsRequest) (*fsv1beta1.PathExistsResponse, error) {
	if err := f.inContext(r.Path, r.Context); err != nil {
		return nil, err
	}
	return &fsv1beta1.PathExistsResponse{Exists: f.s.Host.Exists(r.Path)}, nil
}

func (f *fsV1beta1) Mkdir(_ context.Context, r *fsv1beta1.MkdirRequest) (*fsv1beta1.MkdirResponse, error) {
	if err := f.inContext(r.Path, r.Context); err != nil {
		return nil, err
	}
	return &fsv1beta1.MkdirResponse{}, f.s.mkdir(r.Path)
}

func (f *fsV1beta1) Rmdir(_ context.Context, r *fsv1beta1.RmdirRequest) (*fsv1beta1.RmdirResponse, error) {
	if err := f.inContext(r.Path, r.Context); err != nil {
		return nil, err
	}
	return &fsv1beta1.RmdirResponse{}, f.s.refuse(f.s.Host.Rmdir(r.Path, r.Force))
}

func (f *fsV1beta1) LinkPath(_ context.Context, r *fsv1beta1.LinkPathRequest) (*fsv1beta1.LinkPathResponse, error) {
	return &fsv1beta1.LinkPathResponse{}, f.s.link(r.SourcePath, r.TargetPath)
}

func (f *fsV1beta1) IsMountPoint(_ context.Context, r *fsv1beta1.IsMountPointRequest) (*fsv1beta1.IsMountPointResponse, error) {
	if err := f.s.dirFor(r.Path); err != nil {
		return nil, err
	}
	ok, err := f.s.Host.IsMountPoint(r.Path)
	return &fsv1beta1.IsMountPointResponse{IsMountPoint: ok}, f.s.refuse(err)
}
