package simhost

import (
	"context"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kubernetes-csi/csi-proxy/pkg/os/iscsi"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/csiproxy/simhost/fault"
)

// smbHandler is the SMB group on every version: the remote path is checked
// (SMB-001..005) and the local path like a directory path before anything
// is mapped or linked.
type smbHandler struct{ s *Sim }

func (h smbHandler) NewSmbGlobalMapping(_ context.Context, r *api.SmbNewSmbGlobalMappingRequest, version string) (*api.SmbNewSmbGlobalMappingResponse, error) {
	s := h.s
	checks := []check{h.remote(r.RemotePath)}
	if r.LocalPath != "" {
		checks = append(checks, s.path("local_path", r.LocalPath, false)...)
		if !s.faults.Breaks(fault.MapBeforeLocalCheck) {
			checks = append(checks, h.localFree(r.LocalPath))
		}
	}
	if err := s.check("NewSmbGlobalMapping", version, r, checks...); err != nil {
		return nil, err
	}
	resp := &api.SmbNewSmbGlobalMappingResponse{}
	if s.faults.Breaks(fault.NoEffect) {
		return resp, nil
	}
	root := rootOf(r.RemotePath)
	if mapped, _ := s.OS.IsSmbMapped(root); !mapped {
		if err := s.OS.NewSmbGlobalMapping(root, r.Username, r.Password); err != nil {
			return nil, s.refuse(err)
		}
	}
	if r.LocalPath != "" && !s.faults.Breaks(fault.SMBNoLink) {
		return resp, s.refuse(s.OS.NewSmbLink(r.RemotePath, r.LocalPath))
	}
	return resp, nil
}

// remote checks a remote path (SMB-001..005).
func (h smbHandler) remote(p string) check {
	return requestCheck(p, func() error {
		_, err := h.s.v.SMBRemotePath("remote_path", p)
		return err
	})
}

// localFree: the local path of a mapping is a link to make, so it must
// not exist (LINK-003), checked before anything is mapped.
func (h smbHandler) localFree(local string) check {
	return stateCheck(local, func() error {
		_, err := h.s.Host.Lstat(local)
		return h.s.v.LinkState(restrict.Entry{Exists: true, IsDir: true}, restrict.Entry{Exists: err == nil})
	})
}

// rootOf is the share a remote path maps, \\server\share lower-cased (the
// first two components, as csi-proxy takes them).
func rootOf(remote string) string {
	var parts []string
	for _, p := range strings.Split(strings.ReplaceAll(remote, "/", `\`), `\`) {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) < 2 {
		return remote
	}
	return strings.ToLower(`\\` + parts[0] + `\` + parts[1])
}

func (h smbHandler) RemoveSmbGlobalMapping(_ context.Context, r *api.SmbRemoveSmbGlobalMappingRequest, version string) (*api.SmbRemoveSmbGlobalMappingResponse, error) {
	if err := h.s.check("RemoveSmbGlobalMapping", version, r, h.remote(r.RemotePath)); err != nil {
		return nil, err
	}
	return &api.SmbRemoveSmbGlobalMappingResponse{}, h.s.refuse(h.s.OS.RemoveSmbGlobalMapping(rootOf(r.RemotePath)))
}

// iscsiHandler is the iSCSI group on every version: portals and IQNs are
// checked before the initiator is asked anything; a portal with port 0
// gets 3260.
type iscsiHandler struct{ s *Sim }

// portal checks a request's portal (and more) and applies the default
// port 3260 to a port 0.
func (h iscsiHandler) portal(method, version string, req any, p *api.IscsiTargetPortal, more ...check) (*iscsi.TargetPortal, error) {
	if p == nil {
		p = &api.IscsiTargetPortal{}
	}
	checks := append([]check{requestCheck(p.TargetAddress, func() error {
		_, _, err := h.s.v.Portal("target_portal", p.TargetAddress, p.TargetPort)
		return err
	})}, more...)
	if err := h.s.check(method, version, req, checks...); err != nil {
		return nil, err
	}
	port := p.TargetPort
	if port == 0 && !h.s.faults.Breaks(fault.NoDefaultPort) {
		port = 3260
	}
	return &iscsi.TargetPortal{Address: p.TargetAddress, Port: port}, nil
}

func (h iscsiHandler) iqn(iqn string) check {
	return requestCheck(iqn, func() error { return h.s.v.IQN("iqn", iqn) })
}

func (h iscsiHandler) AddTargetPortal(_ context.Context, r *api.IscsiAddTargetPortalRequest, version string) (*api.IscsiAddTargetPortalResponse, error) {
	p, err := h.portal("AddTargetPortal", version, r, r.TargetPortal)
	if err != nil {
		return nil, err
	}
	return &api.IscsiAddTargetPortalResponse{}, h.s.refuse(h.s.OS.AddTargetPortal(p))
}

func (h iscsiHandler) DiscoverTargetPortal(_ context.Context, r *api.IscsiDiscoverTargetPortalRequest, version string) (*api.IscsiDiscoverTargetPortalResponse, error) {
	p, err := h.portal("DiscoverTargetPortal", version, r, r.TargetPortal)
	if err != nil {
		return nil, err
	}
	iqns, err := h.s.OS.DiscoverTargetPortal(p)
	return &api.IscsiDiscoverTargetPortalResponse{Iqns: iqns}, h.s.refuse(err)
}

func (h iscsiHandler) RemoveTargetPortal(_ context.Context, r *api.IscsiRemoveTargetPortalRequest, version string) (*api.IscsiRemoveTargetPortalResponse, error) {
	p, err := h.portal("RemoveTargetPortal", version, r, r.TargetPortal)
	if err != nil {
		return nil, err
	}
	return &api.IscsiRemoveTargetPortalResponse{}, h.s.refuse(h.s.OS.RemoveTargetPortal(p))
}

func (h iscsiHandler) ListTargetPortals(context.Context, *api.IscsiListTargetPortalsRequest, string) (*api.IscsiListTargetPortalsResponse, error) {
	ps, err := h.s.OS.ListTargetPortals()
	var out []*api.IscsiTargetPortal
	for _, p := range ps {
		out = append(out, &api.IscsiTargetPortal{TargetAddress: p.Address, TargetPort: p.Port})
	}
	return &api.IscsiListTargetPortalsResponse{TargetPortals: out}, h.s.refuse(err)
}

// authTypes are the AuthenticationType values and the names
// Connect-IscsiTarget takes.
var authTypes = map[int32]string{0: "NONE", 1: "ONEWAYCHAP", 2: "MUTUALCHAP"}

func (h iscsiHandler) ConnectTarget(_ context.Context, r *api.IscsiConnectTargetRequest, version string) (*api.IscsiConnectTargetResponse, error) {
	auth, ok := authTypes[r.AuthType]
	p, err := h.portal("ConnectTarget", version, r, r.TargetPortal, h.iqn(r.Iqn), requestCheck(auth, func() error {
		if !ok {
			return status.Errorf(codes.InvalidArgument, "auth_type %d is not NONE, ONE_WAY_CHAP or MUTUAL_CHAP", r.AuthType)
		}
		return nil
	}))
	if err != nil {
		return nil, err
	}
	return &api.IscsiConnectTargetResponse{}, h.s.refuse(h.s.OS.ConnectTarget(p, r.Iqn, auth, r.ChapUsername, r.ChapSecret))
}

func (h iscsiHandler) DisconnectTarget(_ context.Context, r *api.IscsiDisconnectTargetRequest, version string) (*api.IscsiDisconnectTargetResponse, error) {
	p, err := h.portal("DisconnectTarget", version, r, r.TargetPortal, h.iqn(r.Iqn))
	if err != nil {
		return nil, err
	}
	if h.s.faults.Breaks(fault.DisconnectKeepsTarget) {
		return &api.IscsiDisconnectTargetResponse{}, nil
	}
	return &api.IscsiDisconnectTargetResponse{}, h.s.refuse(h.s.OS.DisconnectTarget(p, r.Iqn))
}

func (h iscsiHandler) GetTargetDisks(_ context.Context, r *api.IscsiGetTargetDisksRequest, version string) (*api.IscsiGetTargetDisksResponse, error) {
	p, err := h.portal("GetTargetDisks", version, r, r.TargetPortal, h.iqn(r.Iqn))
	if err != nil {
		return nil, err
	}
	ids, err := h.s.OS.GetTargetDisks(p, r.Iqn)
	return &api.IscsiGetTargetDisksResponse{DiskIDs: ids}, h.s.refuse(err)
}

func (h iscsiHandler) SetMutualChapSecret(_ context.Context, r *api.IscsiSetMutualChapSecretRequest, version string) (*api.IscsiSetMutualChapSecretResponse, error) {
	if err := h.s.check("SetMutualChapSecret", version, r, requestCheck(r.MutualChapSecret, func() error {
		return h.s.v.MutualCHAPSecret("MutualChapSecret", r.MutualChapSecret, h.s.cfg.IPsec)
	})); err != nil {
		return nil, err
	}
	return &api.IscsiSetMutualChapSecretResponse{}, h.s.refuse(h.s.OS.SetMutualChapSecret(r.MutualChapSecret))
}

// systemHandler is the system group: service calls name a service of the
// allow-list.
type systemHandler struct{ s *Sim }

func (h systemHandler) GetBIOSSerialNumber(context.Context, *api.SystemGetBIOSSerialNumberRequest, string) (*api.SystemGetBIOSSerialNumberResponse, error) {
	n, err := h.s.OS.GetBIOSSerialNumber()
	if h.s.faults.Breaks(fault.NoSerial) {
		n = ""
	}
	return &api.SystemGetBIOSSerialNumberResponse{SerialNumber: n}, h.s.refuse(err)
}

func (h systemHandler) service(method, version string, req any, name string) error {
	return h.s.check(method, version, req, requestCheck(name, func() error { return h.s.v.Service("name", name) }))
}

func (h systemHandler) GetService(_ context.Context, r *api.SystemGetServiceRequest, version string) (*api.SystemGetServiceResponse, error) {
	if err := h.service("GetService", version, r, r.Name); err != nil {
		return nil, err
	}
	info, err := h.s.OS.GetService(r.Name)
	if err != nil {
		return nil, h.s.refuse(err)
	}
	st := int32(info.Status)
	if h.s.faults.Breaks(fault.ServiceStatusUnknown) {
		st = 0
	}
	return &api.SystemGetServiceResponse{DisplayName: info.DisplayName, StartType: int32(info.StartType), Status: st}, nil
}

func (h systemHandler) StartService(_ context.Context, r *api.SystemStartServiceRequest, version string) (*api.SystemStartServiceResponse, error) {
	if err := h.service("StartService", version, r, r.Name); err != nil {
		return nil, err
	}
	return &api.SystemStartServiceResponse{}, h.s.refuse(h.s.OS.StartService(r.Name))
}

func (h systemHandler) StopService(_ context.Context, r *api.SystemStopServiceRequest, version string) (*api.SystemStopServiceResponse, error) {
	if err := h.service("StopService", version, r, r.Name); err != nil {
		return nil, err
	}
	return &api.SystemStopServiceResponse{}, h.s.refuse(h.s.OS.StopService(r.Name, r.Force))
}
