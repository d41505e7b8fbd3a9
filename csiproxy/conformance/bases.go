package conformance

import (
	"context"
	"reflect"
	"strconv"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// placeholderVolume is a well-formed volume ID no host has, for the volume
// field of a request whose path is probed when no scratch disk is given.
const placeholderVolume = `\\?\Volume{00000000-0000-4000-8000-00000000f00d}\`

// scratchVolume is the first volume of the scratch disk, if it has one,
// else a volume no host has.
func (s *state) scratchVolume(ctx context.Context) string {
	if s.cfg.ScratchDisk < 0 {
		return placeholderVolume
	}
	for _, gv := range s.of("volume", "ListVolumesOnDisk") {
		v := api.NewVolumeClient(s.conns[gv.PipeBase()], gv.Version)
		r, err := v.ListVolumesOnDisk(ctx, &api.VolumeListVolumesOnDiskRequest{DiskNumber: uint32(s.cfg.ScratchDisk)})
		if err == nil && len(r.VolumeIds) > 0 && r.VolumeIds[0] != "" {
			return r.VolumeIds[0]
		}
		break
	}
	return placeholderVolume
}

// targetIQN is the target the suite connects to: the first the
// configured portal offers (found once), else a well-formed one.
func (s *state) targetIQN(ctx context.Context, g api.IscsiClient) string {
	if s.iqn != "" {
		return s.iqn
	}
	s.iqn = "iqn.2003-01.io.fenceproof:target"
	if _, err := g.AddTargetPortal(ctx, &api.IscsiAddTargetPortalRequest{TargetPortal: s.portal()}); err == nil {
		if d, err := g.DiscoverTargetPortal(ctx, &api.IscsiDiscoverTargetPortalRequest{TargetPortal: s.portal()}); err == nil && len(d.Iqns) > 0 {
			s.iqn = d.Iqns[0]
		}
		_, _ = g.RemoveTargetPortal(ctx, &api.IscsiRemoveTargetPortalRequest{TargetPortal: s.portal()})
	}
	return s.iqn
}

func (s *state) portal() *api.IscsiTargetPortal {
	return &api.IscsiTargetPortal{TargetAddress: s.cfg.ISCSIPortal, TargetPort: restrict.DefaultISCSIPort}
}

// base is a valid request of an RPC on one version, every field set, what
// undoes the effect of a host that accepted the probe, and what removes
// what was made for the request.
type base struct {
	req  any
	undo func(ctx context.Context, req any)
	done func(ctx context.Context)
}

func nop(context.Context, any) {}

func noop(context.Context) {}

// base builds the request the probe of field then changes; it makes on the
// host only what the other fields need. name is the probe's fresh name,
// which the other fields name too.
func (s *state) base(ctx context.Context, gv api.GroupVersion, r restrict.RPC, c restrict.Case, field, name string) base {
	cl := s.client(gv)
	req := newRequest(cl, r.Method)
	fresh := s.cfg.PodPath + `\` + name
	// rm removes what an accepted request of a changing RPC made: only a
	// path naming the fresh entry (never a kubelet directory itself, which
	// a host that accepted it would delete).
	rm := func(ctx context.Context, req any) {
		if !r.Changes {
			return
		}
		for _, f := range r.Fields {
			if v := fieldOf(req, f.Name); (f.Kind == restrict.KindPath || f.Kind == restrict.KindLinkTarget) && s.draw.Issued(v) {
				s.rmdir(ctx, v)
			}
		}
	}
	switch g := cl.(type) {
	case api.FilesystemClient:
		defer s.pathContext(req)
		switch r.Method {
		case "Rmdir":
			// Force only where the case names a fresh entry: a host that
			// accepted {pods} itself must not be asked to delete it all.
			*req.(*api.FilesystemRmdirRequest) = api.FilesystemRmdirRequest{Path: fresh, Force: strings.Contains(c.Value, "{s}")}
			return base{req, nop, noop}
		case "CreateSymlink":
			src := s.cfg.PluginsPath + `\` + name + "-src"
			done := noop
			if field != "SourcePath" {
				_ = s.mkdir(ctx, src)
				done = func(ctx context.Context) { s.rmdir(ctx, src) }
			}
			*req.(*api.FilesystemCreateSymlinkRequest) = api.FilesystemCreateSymlinkRequest{SourcePath: src, TargetPath: fresh}
			return base{req, func(ctx context.Context, req any) {
				_, _ = g.Rmdir(ctx, &api.FilesystemRmdirRequest{Path: fieldOf(req, "TargetPath")}) // a link: never forced
			}, done}
		}
		_ = setField(req, "Path", fresh, 0)
		return base{req, rm, noop}
	case api.VolumeClient:
		if s.scratch == "" {
			s.scratch = s.scratchVolume(ctx)
		}
		_ = setField(req, "VolumeId", s.scratch, 0)
		_ = setField(req, "TargetPath", fresh, 0)
		switch r.Method {
		case "MountVolume", "UnmountVolume":
			done := noop
			if field != "TargetPath" {
				_ = s.mkdir(ctx, fresh)
				done = func(ctx context.Context) { s.rmdir(ctx, fresh) }
			}
			return base{req, func(ctx context.Context, req any) {
				_, _ = g.UnmountVolume(ctx, &api.VolumeUnmountVolumeRequest{VolumeId: fieldOf(req, "VolumeId"), TargetPath: fieldOf(req, "TargetPath")})
				rm(ctx, req)
			}, done}
		case "ResizeVolume":
			req.(*api.VolumeResizeVolumeRequest).SizeBytes = 1 // at or below any size: csi-proxy leaves it alone
		}
		return base{req, rm, noop}
	case api.DiskClient:
		if d, ok := req.(*api.DiskSetDiskStateRequest); ok {
			d.IsOnline = true // setting an online disk online changes nothing
		}
		return base{req, nop, noop}
	case api.SmbClient:
		_ = setField(req, "RemotePath", s.cfg.SMBShare, 0)
		_ = setField(req, "Username", s.cfg.SMBUser, 0)
		_ = setField(req, "Password", s.cfg.SMBPassword, 0)
		unmap := func(ctx context.Context, req any) {
			rem := fieldOf(req, "RemotePath")
			if parts := strings.Split(strings.Trim(rem, `\`), `\`); len(parts) >= 2 {
				rem = `\\` + parts[0] + `\` + parts[1]
			}
			_, _ = g.RemoveSmbGlobalMapping(ctx, &api.SmbRemoveSmbGlobalMappingRequest{RemotePath: rem})
			if l := fieldOf(req, "LocalPath"); strings.Contains(l, name) {
				s.unlink(ctx, l)
			}
		}
		done := func(ctx context.Context) {
			_, _ = g.RemoveSmbGlobalMapping(ctx, &api.SmbRemoveSmbGlobalMappingRequest{RemotePath: s.cfg.SMBShare})
		}
		if r.Method == "NewSmbGlobalMapping" && s.draw.Pick("", "link") != "" {
			// linked to a fresh local path or not, drawn: the checks of
			// remote_path hold on both branches
			_ = setField(req, "LocalPath", fresh, 0)
		}
		if r.Method == "RemoveSmbGlobalMapping" {
			// a mapping to remove, so a host that does not check removes it
			_, _ = g.NewSmbGlobalMapping(ctx, &api.SmbNewSmbGlobalMappingRequest{RemotePath: s.cfg.SMBShare, Username: s.cfg.SMBUser, Password: s.cfg.SMBPassword})
		}
		return base{req, unmap, done}
	case api.IscsiClient:
		iqn := s.targetIQN(ctx, g)
		_ = setField(req, "Iqn", iqn, 0)
		if f := portalField(req); f != nil {
			*f = s.portal()
		}
		undo := func(ctx context.Context, req any) {
			if f := portalField(req); f != nil && *f != nil {
				_, _ = g.DisconnectTarget(ctx, &api.IscsiDisconnectTargetRequest{TargetPortal: *f, Iqn: fieldOf(req, "Iqn")})
				_, _ = g.RemoveTargetPortal(ctx, &api.IscsiRemoveTargetPortalRequest{TargetPortal: *f})
			}
		}
		done := noop
		switch r.Method {
		case "ConnectTarget", "DisconnectTarget", "GetTargetDisks", "DiscoverTargetPortal", "RemoveTargetPortal":
			_, _ = g.AddTargetPortal(ctx, &api.IscsiAddTargetPortalRequest{TargetPortal: s.portal()})
			done = func(ctx context.Context) {
				_, _ = g.DisconnectTarget(ctx, &api.IscsiDisconnectTargetRequest{TargetPortal: s.portal(), Iqn: iqn})
				_, _ = g.RemoveTargetPortal(ctx, &api.IscsiRemoveTargetPortalRequest{TargetPortal: s.portal()})
			}
		}
		if c, ok := req.(*api.IscsiConnectTargetRequest); ok {
			// without CHAP, one-way or mutual, drawn: the checks of the
			// portal and the name hold on every branch
			if n, _ := strconv.Atoi(s.draw.Pick("0", "1", "2")); n != 0 {
				c.AuthType = int32(n)
				c.ChapUsername = s.name()
				c.ChapSecret = s.draw.Spell("{chapok}", restrict.KindMutualCHAP, "")
			}
		}
		if r.Method == "DisconnectTarget" || r.Method == "GetTargetDisks" {
			_, _ = g.ConnectTarget(ctx, &api.IscsiConnectTargetRequest{TargetPortal: s.portal(), Iqn: iqn})
		}
		return base{req, undo, done}
	case api.SystemClient:
		if r.Method == "StopService" {
			// forced or not, drawn: the allow-list holds on both
			req.(*api.SystemStopServiceRequest).Force = s.draw.Pick("", "force") != ""
			return base{req, func(ctx context.Context, req any) {
				_, _ = g.StartService(ctx, &api.SystemStartServiceRequest{Name: fieldOf(req, "Name")})
			}, noop}
		}
		return base{req, nop, noop}
	}
	return base{req, nop, noop}
}

// pathContext draws the path context of a filesystem request of the
// versions that have one (PLUGIN or CONTAINER): the checks of its path
// hold in both.
func (s *state) pathContext(req any) {
	if f := reflect.ValueOf(req).Elem().FieldByName("Context"); f.IsValid() && f.CanInt() {
		n, _ := strconv.Atoi(s.draw.Pick("0", "1"))
		f.SetInt(int64(n))
	}
}

// portalField is the TargetPortal field of an iSCSI request, nil if it
// has none.
func portalField(req any) **api.IscsiTargetPortal {
	switch r := req.(type) {
	case *api.IscsiAddTargetPortalRequest:
		return &r.TargetPortal
	case *api.IscsiDiscoverTargetPortalRequest:
		return &r.TargetPortal
	case *api.IscsiRemoveTargetPortalRequest:
		return &r.TargetPortal
	case *api.IscsiConnectTargetRequest:
		return &r.TargetPortal
	case *api.IscsiDisconnectTargetRequest:
		return &r.TargetPortal
	case *api.IscsiGetTargetDisksRequest:
		return &r.TargetPortal
	}
	return nil
}
