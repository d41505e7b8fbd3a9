package simhost

import (
	"context"

	iscsiv1alpha2 "github.com/kubernetes-csi/csi-proxy/client/api/iscsi/v1alpha2"
	smbv1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1"
	smbv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1beta1"
	sysv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/system/v1alpha1"
	"google.golang.org/grpc"

	"github.com/fenceproof/fenceproof/csiproxy/hostmodel"
)

type smbV1 struct {
	smbv1.UnimplementedSmbServer
	s *Sim
}

func registerSMBV1(g *grpc.Server, s *Sim) { smbv1.RegisterSmbServer(g, &smbV1{s: s}) }

func (m *smbV1) NewSmbGlobalMapping(_ context.Context, r *smbv1.NewSmbGlobalMappingRequest) (*smbv1.NewSmbGlobalMappingResponse, error) {
	return &smbv1.NewSmbGlobalMappingResponse{}, m.s.smbMap(r.RemotePath, r.LocalPath, r.Username, r.Password)
}

func (m *smbV1) RemoveSmbGlobalMapping(_ context.Context, r *smbv1.RemoveSmbGlobalMappingRequest) (*smbv1.RemoveSmbGlobalMappingResponse, error) {
	return &smbv1.RemoveSmbGlobalMappingResponse{}, m.s.smbUnmap(r.RemotePath)
}

type smbV1beta1 struct {
	smbv1beta1.UnimplementedSmbServer
	s *Sim
}

func registerSMBV1beta1(g *grpc.Server, s *Sim) {
	smbv1beta1.RegisterSmbServer(g, &smbV1beta1{s: s})
}

func (m *smbV1beta1) NewSmbGlobalMapping(_ context.Context, r *smbv1beta1.NewSmbGlobalMappingRequest) (*smbv1beta1.NewSmbGlobalMappingResponse, error) {
	return &smbv1beta1.NewSmbGlobalMappingResponse{}, m.s.smbMap(r.RemotePath, r.LocalPath, r.Username, r.Password)
}

func (m *smbV1beta1) RemoveSmbGlobalMapping(_ context.Context, r *smbv1beta1.RemoveSmbGlobalMappingRequest) (*smbv1beta1.RemoveSmbGlobalMappingResponse, error) {
	return &smbv1beta1.RemoveSmbGlobalMappingResponse{}, m.s.smbUnmap(r.RemotePath)
}

type iscsiV1alpha2 struct {
	iscsiv1alpha2.UnimplementedIscsiServer
	s *Sim
}

func registerISCSIV1alpha2(g *grpc.Server, s *Sim) {
	iscsiv1alpha2.RegisterIscsiServer(g, &iscsiV1alpha2{s: s})
}

// portal checks a request's portal and applies the default port.
func (i *iscsiV1alpha2) portal(p *iscsiv1alpha2.TargetPortal) (hostmodel.Portal, error) {
	addr, port, err := i.s.v.Portal("target_portal", p.GetTargetAddress(), p.GetTargetPort())
	if err != nil {
		return hostmodel.Portal{}, i.s.refuse(err)
	}
	if i.s.cfg.Faults.NoDefaultPort {
		port = p.GetTargetPort()
	}
	return hostmodel.Portal{Address: addr, Port: port}, nil
}

func (i *iscsiV1alpha2) AddTargetPortal(_ context.Context, r *iscsiv1alpha2.AddTargetPortalRequest) (*iscsiv1alpha2.AddTargetPortalResponse, error) {
	p, err := i.portal(r.TargetPortal)
	if err != nil {
		return nil, err
	}
	i.s.Host.AddPortal(p)
	return &iscsiv1alpha2.AddTargetPortalResponse{}, nil
}

func (i *iscsiV1alpha2) DiscoverTargetPortal(_ context.Context, r *iscsiv1alpha2.DiscoverTargetPortalRequest) (*iscsiv1alpha2.DiscoverTargetPortalResponse, error) {
	p, err := i.portal(r.TargetPortal)
	if err != nil {
		return nil, err
	}
	iqns, err := i.s.Host.Discover(p)
	return &iscsiv1alpha2.DiscoverTargetPortalResponse{Iqns: iqns}, i.s.refuse(err)
}

func (i *iscsiV1alpha2) RemoveTargetPortal(_ context.Context, r *iscsiv1alpha2.RemoveTargetPortalRequest) (*iscsiv1alpha2.RemoveTargetPortalResponse, error) {
	p, err := i.portal(r.TargetPortal)
	if err != nil {
		return nil, err
	}
	return &iscsiv1alpha2.RemoveTargetPortalResponse{}, i.s.refuse(i.s.Host.RemovePortal(p))
}

func (i *iscsiV1alpha2) ListTargetPortals(context.Context, *iscsiv1alpha2.ListTargetPortalsRequest) (*iscsiv1alpha2.ListTargetPortalsResponse, error) {
	var out []*iscsiv1alpha2.TargetPortal
	for _, p := range i.s.Host.Portals() {
		out = append(out, &iscsiv1alpha2.TargetPortal{TargetAddress: p.Address, TargetPort: p.Port})
	}
	return &iscsiv1alpha2.ListTargetPortalsResponse{TargetPortals: out}, nil
}

func (i *iscsiV1alpha2) ConnectTarget(_ context.Context, r *iscsiv1alpha2.ConnectTargetRequest) (*iscsiv1alpha2.ConnectTargetResponse, error) {
	p, err := i.portal(r.TargetPortal)
	if err != nil {
		return nil, err
	}
	if err := i.s.v.IQN("iqn", r.Iqn); err != nil {
		return nil, i.s.refuse(err)
	}
	return &iscsiv1alpha2.ConnectTargetResponse{}, i.s.refuse(i.s.Host.Connect(p, r.Iqn, r.AuthType.String()))
}

func (i *iscsiV1alpha2) DisconnectTarget(_ context.Context, r *iscsiv1alpha2.DisconnectTargetRequest) (*iscsiv1alpha2.DisconnectTargetResponse, error) {
	p, err := i.portal(r.TargetPortal)
	if err != nil {
		return nil, err
	}
	if err := i.s.v.IQN("iqn", r.Iqn); err != nil {
		return nil, i.s.refuse(err)
	}
	return &iscsiv1alpha2.DisconnectTargetResponse{}, i.s.refuse(i.s.Host.Disconnect(p, r.Iqn))
}

func (i *iscsiV1alpha2) GetTargetDisks(_ context.Context, r *iscsiv1alpha2.GetTargetDisksRequest) (*iscsiv1alpha2.GetTargetDisksResponse, error) {
	p, err := i.portal(r.TargetPortal)
	if err != nil {
		return nil, err
	}
	if err := i.s.v.IQN("iqn", r.Iqn); err != nil {
		return nil, i.s.refuse(err)
	}
	ids, err := i.s.Host.TargetDisks(p, r.Iqn)
	return &iscsiv1alpha2.GetTargetDisksResponse{DiskIDs: ids}, i.s.refuse(err)
}

func (i *iscsiV1alpha2) SetMutualChapSecret(_ context.Context, r *iscsiv1alpha2.SetMutualChapSecretRequest) (*iscsiv1alpha2.SetMutualChapSecretResponse, error) {
	if err := i.s.v.MutualCHAPSecret("MutualChapSecret", r.MutualChapSecret, i.s.cfg.IPsec); err != nil {
		return nil, i.s.refuse(err)
	}
	i.s.Host.SetMutualCHAP(r.MutualChapSecret)
	return &iscsiv1alpha2.SetMutualChapSecretResponse{}, nil
}

type systemV1alpha1 struct {
	sysv1alpha1.UnimplementedSystemServer
	s *Sim
}

func registerSystemV1alpha1(g *grpc.Server, s *Sim) {
	sysv1alpha1.RegisterSystemServer(g, &systemV1alpha1{s: s})
}

func (y *systemV1alpha1) GetBIOSSerialNumber(context.Context, *sysv1alpha1.GetBIOSSerialNumberRequest) (*sysv1alpha1.GetBIOSSerialNumberResponse, error) {
	return &sysv1alpha1.GetBIOSSerialNumberResponse{SerialNumber: y.s.Host.Serial()}, nil
}

func (y *systemV1alpha1) GetService(_ context.Context, r *sysv1alpha1.GetServiceRequest) (*sysv1alpha1.GetServiceResponse, error) {
	sv, err := y.s.Host.Service(r.Name)
	if err != nil {
		return nil, y.s.refuse(err)
	}
	st := sysv1alpha1.ServiceStatus_STOPPED
	if sv.Running {
		st = sysv1alpha1.ServiceStatus_RUNNING
	}
	return &sysv1alpha1.GetServiceResponse{DisplayName: sv.DisplayName, StartType: sysv1alpha1.StartType_AUTOMATIC, Status: st}, nil
}

func (y *systemV1alpha1) StartService(_ context.Context, r *sysv1alpha1.StartServiceRequest) (*sysv1alpha1.StartServiceResponse, error) {
	return &sysv1alpha1.StartServiceResponse{}, y.s.refuse(y.s.Host.SetServiceRunning(r.Name, true))
}

func (y *systemV1alpha1) StopService(_ context.Context, r *sysv1alpha1.StopServiceRequest) (*sysv1alpha1.StopServiceResponse, error) {
	return &sysv1alpha1.StopServiceResponse{}, y.s.refuse(y.s.Host.SetServiceRunning(r.Name, false))
}
