package simhost

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/csiproxy/simhost/fault"
)

// fsHandler is the filesystem group on every version. Directory calls
// follow os.MkdirAll (an existing directory is fine), os.Remove and
// os.RemoveAll (a missing path is fine with force; a link is removed, never
// followed); CreateSymlink makes the link at target_path pointing to
// source_path, as csi-proxy v1 does (os.Symlink(source, target)), and
// LinkPath (v1alpha1, v1beta1) is the same call.
type fsHandler struct{ s *Sim }

func (f fsHandler) PathExists(_ context.Context, r *api.FilesystemPathExistsRequest, version string) (*api.FilesystemPathExistsResponse, error) {
	if err := f.s.check("PathExists", version, r, f.s.path("path", r.Path, false)...); err != nil {
		return nil, err
	}
	ok, err := f.s.OS.PathExists(r.Path)
	return &api.FilesystemPathExistsResponse{Exists: ok}, f.s.refuse(err)
}

func (f fsHandler) Mkdir(_ context.Context, r *api.FilesystemMkdirRequest, version string) (*api.FilesystemMkdirResponse, error) {
	if err := f.s.check("Mkdir", version, r, f.s.path("path", r.Path, true)...); err != nil {
		return nil, err
	}
	if f.s.faults.Breaks(fault.NoEffect) {
		return &api.FilesystemMkdirResponse{}, nil
	}
	if f.s.faults.Breaks(fault.MkdirNotIdempotent) && f.s.Host.Exists(r.Path) {
		return nil, status.Errorf(codes.AlreadyExists, "%s exists", r.Path)
	}
	return &api.FilesystemMkdirResponse{}, f.s.refuse(f.s.OS.Mkdir(r.Path))
}

func (f fsHandler) Rmdir(_ context.Context, r *api.FilesystemRmdirRequest, version string) (*api.FilesystemRmdirResponse, error) {
	if err := f.s.check("Rmdir", version, r, f.s.path("path", r.Path, false)...); err != nil {
		return nil, err
	}
	if in, err := f.s.Host.Lstat(r.Path); err == nil && in.Link && f.s.faults.Breaks(fault.RmdirFollowsLink) {
		_ = f.s.Host.RemoveContents(r.Path)
	}
	return &api.FilesystemRmdirResponse{}, f.s.refuse(f.s.OS.Rmdir(r.Path, r.Force))
}

func (f fsHandler) RmdirContents(_ context.Context, r *api.FilesystemRmdirContentsRequest, version string) (*api.FilesystemRmdirContentsResponse, error) {
	if err := f.s.check("RmdirContents", version, r, f.s.path("path", r.Path, true)...); err != nil {
		return nil, err
	}
	return &api.FilesystemRmdirContentsResponse{}, f.s.refuse(f.s.OS.RmdirContents(r.Path))
}

func (f fsHandler) IsSymlink(_ context.Context, r *api.FilesystemIsSymlinkRequest, version string) (*api.FilesystemIsSymlinkResponse, error) {
	// IsSymlink reads where the link leads (its answer says whether that
	// exists), so the link's own target must not lead outside either.
	if err := f.s.check("IsSymlink", version, r, f.s.path("path", r.Path, true)...); err != nil {
		return nil, err
	}
	ok, err := f.s.OS.IsSymlink(r.Path)
	return &api.FilesystemIsSymlinkResponse{IsSymlink: ok}, f.s.refuse(err)
}

func (f fsHandler) CreateSymlink(_ context.Context, r *api.FilesystemCreateSymlinkRequest, version string) (*api.FilesystemCreateSymlinkResponse, error) {
	s := f.s
	source, target := r.SourcePath, r.TargetPath
	source1 := requestCheck(source, func() error {
		if err := s.ascii("source_path", source); err != nil {
			return err
		}
		return s.v.Check(restrict.KindLinkSource, source, 0)
	})
	target1 := requestCheck(target, func() error {
		if err := s.ascii("target_path", target); err != nil {
			return err
		}
		return s.v.Check(restrict.KindLinkTarget, target, 0)
	})
	through := stateCheck(target, func() error { return s.reached("DIR-002", "target_path", target, false) })
	sourceState := stateCheck(source, func() error {
		in, err := s.Host.Stat(source)
		if err := s.v.LinkState(restrict.Entry{Exists: err == nil, IsDir: in.Dir}, restrict.Entry{}); err != nil {
			return err
		}
		return s.reached("LINK-005", "source_path", source, true)
	})
	targetState := stateCheck(target, func() error {
		_, err := s.Host.Lstat(target)
		return s.v.LinkState(restrict.Entry{Exists: true, IsDir: true}, restrict.Entry{Exists: err == nil})
	})
	resp := &api.FilesystemCreateSymlinkResponse{}
	if s.faults.Breaks(fault.EffectBeforeCheck) {
		if err := s.check("CreateSymlink", version, r, source1, target1, through, targetState); err != nil {
			return nil, err
		}
		if err := s.OS.CreateSymlink(source, target); err != nil {
			return nil, s.refuse(err)
		}
		return resp, s.check("CreateSymlink", version, r, sourceState)
	}
	if err := s.check("CreateSymlink", version, r, source1, target1, through, targetState, sourceState); err != nil {
		return nil, err
	}
	if s.faults.Breaks(fault.NoEffect) {
		return resp, nil
	}
	if s.faults.Breaks(fault.LinkAtSource) {
		return resp, s.refuse(s.OS.CreateSymlink(target, source))
	}
	return resp, s.refuse(s.OS.CreateSymlink(source, target))
}
