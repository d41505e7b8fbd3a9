package conformance

import (
	"context"
	"errors"

	fsv1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1"
	fsv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1beta1"
	smbv1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1"
	smbv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1beta1"
	"google.golang.org/grpc"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// fsAPI is what the suite needs of one filesystem version, so every rule
// runs against each served version the same way.
type fsAPI interface {
	Version() string
	Link(ctx context.Context, source, target string) error
	Mkdir(ctx context.Context, p string) error
	Rmdir(ctx context.Context, p string, force bool) error
	Exists(ctx context.Context, p string) (bool, error)
	IsLink(ctx context.Context, p string) (bool, error)
}

// smbAPI is what the suite needs of one smb version.
type smbAPI interface {
	Version() string
	Map(ctx context.Context, remote, local, user, password string) error
	Unmap(ctx context.Context, remote string) error
}

// respErr turns the Error field older versions answer with into an error.
func respErr(s string, err error) error {
	if err == nil && s != "" {
		return errors.New(s)
	}
	return err
}

type fsV1 struct{ c fsv1.FilesystemClient }

func (f fsV1) Version() string { return "v1" }
func (f fsV1) Link(ctx context.Context, s, t string) error {
	_, err := f.c.CreateSymlink(ctx, &fsv1.CreateSymlinkRequest{SourcePath: s, TargetPath: t})
	return err
}
func (f fsV1) Mkdir(ctx context.Context, p string) error {
	_, err := f.c.Mkdir(ctx, &fsv1.MkdirRequest{Path: p})
	return err
}
func (f fsV1) Rmdir(ctx context.Context, p string, force bool) error {
	_, err := f.c.Rmdir(ctx, &fsv1.RmdirRequest{Path: p, Force: force})
	return err
}
func (f fsV1) Exists(ctx context.Context, p string) (bool, error) {
	r, err := f.c.PathExists(ctx, &fsv1.PathExistsRequest{Path: p})
	return r.GetExists(), err
}
func (f fsV1) IsLink(ctx context.Context, p string) (bool, error) {
	r, err := f.c.IsSymlink(ctx, &fsv1.IsSymlinkRequest{Path: p})
	return r.GetIsSymlink(), err
}

// fsV1beta1 sends the path context matching the kubelet path a path is
// below (POD for the pod path, PLUGIN otherwise).
type fsV1beta1 struct {
	c   fsv1beta1.FilesystemClient
	pod string
}

func (f fsV1beta1) ctx(p string) fsv1beta1.PathContext {
	if restrict.Under(f.pod, p) {
		return fsv1beta1.PathContext_POD
	}
	return fsv1beta1.PathContext_PLUGIN
}
func (f fsV1beta1) Version() string { return "v1beta1" }
func (f fsV1beta1) Link(ctx context.Context, s, t string) error {
	r, err := f.c.LinkPath(ctx, &fsv1beta1.LinkPathRequest{SourcePath: s, TargetPath: t})
	return respErr(r.GetError(), err)
}
func (f fsV1beta1) Mkdir(ctx context.Context, p string) error {
	r, err := f.c.Mkdir(ctx, &fsv1beta1.MkdirRequest{Path: p, Context: f.ctx(p)})
	return respErr(r.GetError(), err)
}
func (f fsV1beta1) Rmdir(ctx context.Context, p string, force bool) error {
	r, err := f.c.Rmdir(ctx, &fsv1beta1.RmdirRequest{Path: p, Context: f.ctx(p), Force: force})
	return respErr(r.GetError(), err)
}
func (f fsV1beta1) Exists(ctx context.Context, p string) (bool, error) {
	r, err := f.c.PathExists(ctx, &fsv1beta1.PathExistsRequest{Path: p, Context: f.ctx(p)})
	return r.GetExists(), respErr(r.GetError(), err)
}
func (f fsV1beta1) IsLink(ctx context.Context, p string) (bool, error) {
	r, err := f.c.IsMountPoint(ctx, &fsv1beta1.IsMountPointRequest{Path: p})
	return r.GetIsMountPoint(), respErr(r.GetError(), err)
}

type smbV1 struct{ c smbv1.SmbClient }

func (m smbV1) Version() string { return "v1" }
func (m smbV1) Map(ctx context.Context, remote, local, user, password string) error {
	_, err := m.c.NewSmbGlobalMapping(ctx, &smbv1.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: user, Password: password})
	return err
}
func (m smbV1) Unmap(ctx context.Context, remote string) error {
	_, err := m.c.RemoveSmbGlobalMapping(ctx, &smbv1.RemoveSmbGlobalMappingRequest{RemotePath: remote})
	return err
}

type smbV1beta1 struct{ c smbv1beta1.SmbClient }

func (m smbV1beta1) Version() string { return "v1beta1" }
func (m smbV1beta1) Map(ctx context.Context, remote, local, user, password string) error {
	r, err := m.c.NewSmbGlobalMapping(ctx, &smbv1beta1.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: user, Password: password})
	return respErr(r.GetError(), err)
}
func (m smbV1beta1) Unmap(ctx context.Context, remote string) error {
	r, err := m.c.RemoveSmbGlobalMapping(ctx, &smbv1beta1.RemoveSmbGlobalMappingRequest{RemotePath: remote})
	return respErr(r.GetError(), err)
}

// adapters builds the fs and smb adapters of the served versions the suite
// knows.
func adapters(conns map[string]*grpc.ClientConn, podPath string) ([]fsAPI, []smbAPI) {
	var fs []fsAPI
	var smb []smbAPI
	if c := conns[restrict.PipeBase("filesystem", "v1beta1")]; c != nil {
		fs = append(fs, fsV1beta1{c: fsv1beta1.NewFilesystemClient(c), pod: podPath})
	}
	if c := conns[restrict.PipeBase("filesystem", "v1")]; c != nil {
		fs = append(fs, fsV1{c: fsv1.NewFilesystemClient(c)})
	}
	if c := conns[restrict.PipeBase("smb", "v1beta1")]; c != nil {
		smb = append(smb, smbV1beta1{c: smbv1beta1.NewSmbClient(c)})
	}
	if c := conns[restrict.PipeBase("smb", "v1")]; c != nil {
		smb = append(smb, smbV1{c: smbv1.NewSmbClient(c)})
	}
	return fs, smb
}
