package simhost

import (
	"context"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	volv1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type diskV1 struct {
	diskv1.UnimplementedDiskServer
	s *Sim
}

func registerDiskV1(g *grpc.Server, s *Sim) { diskv1.RegisterDiskServer(g, &diskV1{s: s}) }

func (d *diskV1) ListDiskLocations(context.Context, *diskv1.ListDiskLocationsRequest) (*diskv1.ListDiskLocationsResponse, error) {
	out := map[uint32]*diskv1.DiskLocation{}
	for _, k := range d.s.Host.Disks() {
		out[k.Number] = &diskv1.DiskLocation{Adapter: k.Adapter, Bus: k.Bus, Target: k.Target, LUNID: k.LUNID}
	}
	return &diskv1.ListDiskLocationsResponse{DiskLocations: out}, nil
}

func (d *diskV1) ListDiskIDs(context.Context, *diskv1.ListDiskIDsRequest) (*diskv1.ListDiskIDsResponse, error) {
	out := map[uint32]*diskv1.DiskIDs{}
	for _, k := range d.s.Host.Disks() {
		out[k.Number] = &diskv1.DiskIDs{Page83: k.SerialNumber, SerialNumber: k.SerialNumber}
	}
	return &diskv1.ListDiskIDsResponse{DiskIDs: out}, nil
}

func (d *diskV1) PartitionDisk(_ context.Context, r *diskv1.PartitionDiskRequest) (*diskv1.PartitionDiskResponse, error) {
	return &diskv1.PartitionDiskResponse{}, d.s.refuse(d.s.Host.PartitionDisk(r.DiskNumber))
}

func (d *diskV1) Rescan(context.Context, *diskv1.RescanRequest) (*diskv1.RescanResponse, error) {
	return &diskv1.RescanResponse{}, nil
}

func (d *diskV1) GetDiskStats(_ context.Context, r *diskv1.GetDiskStatsRequest) (*diskv1.GetDiskStatsResponse, error) {
	k, err := d.s.Host.GetDisk(r.DiskNumber)
	if err != nil {
		return nil, d.s.refuse(err)
	}
	return &diskv1.GetDiskStatsResponse{TotalBytes: k.SizeBytes}, nil
}

func (d *diskV1) SetDiskState(_ context.Context, r *diskv1.SetDiskStateRequest) (*diskv1.SetDiskStateResponse, error) {
	return &diskv1.SetDiskStateResponse{}, d.s.refuse(d.s.Host.SetDiskOnline(r.DiskNumber, r.IsOnline))
}

func (d *diskV1) GetDiskState(_ context.Context, r *diskv1.GetDiskStateRequest) (*diskv1.GetDiskStateResponse, error) {
	k, err := d.s.Host.GetDisk(r.DiskNumber)
	if err != nil {
		return nil, d.s.refuse(err)
	}
	return &diskv1.GetDiskStateResponse{IsOnline: k.Online}, nil
}

type volumeV1 struct {
	volv1.UnimplementedVolumeServer
	s *Sim
}

func registerVolumeV1(g *grpc.Server, s *Sim) { volv1.RegisterVolumeServer(g, &volumeV1{s: s}) }

func (v *volumeV1) ListVolumesOnDisk(_ context.Context, r *volv1.ListVolumesOnDiskRequest) (*volv1.ListVolumesOnDiskResponse, error) {
	k, err := v.s.Host.GetDisk(r.DiskNumber)
	if err != nil {
		return nil, v.s.refuse(err)
	}
	if r.PartitionNumber > uint32(len(k.Volumes)) {
		return nil, status.Errorf(codes.NotFound, "disk %d has no partition %d", r.DiskNumber, r.PartitionNumber)
	}
	ids := k.Volumes
	if r.PartitionNumber > 0 {
		ids = ids[r.PartitionNumber-1 : r.PartitionNumber]
	}
	return &volv1.ListVolumesOnDiskResponse{VolumeIds: ids}, nil
}

func (v *volumeV1) MountVolume(_ context.Context, r *volv1.MountVolumeRequest) (*volv1.MountVolumeResponse, error) {
	if err := v.s.dirFor(r.TargetPath); err != nil {
		return nil, err
	}
	return &volv1.MountVolumeResponse{}, v.s.refuse(v.s.Host.MountVolume(r.VolumeId, r.TargetPath))
}

func (v *volumeV1) UnmountVolume(_ context.Context, r *volv1.UnmountVolumeRequest) (*volv1.UnmountVolumeResponse, error) {
	if err := v.s.dirFor(r.TargetPath); err != nil {
		return nil, err
	}
	return &volv1.UnmountVolumeResponse{}, v.s.refuse(v.s.Host.UnmountVolume(r.VolumeId, r.TargetPath))
}

func (v *volumeV1) IsVolumeFormatted(_ context.Context, r *volv1.IsVolumeFormattedRequest) (*volv1.IsVolumeFormattedResponse, error) {
	vol, err := v.s.Host.GetVolume(r.VolumeId)
	if err != nil {
		return nil, v.s.refuse(err)
	}
	return &volv1.IsVolumeFormattedResponse{Formatted: vol.Formatted}, nil
}

func (v *volumeV1) FormatVolume(_ context.Context, r *volv1.FormatVolumeRequest) (*volv1.FormatVolumeResponse, error) {
	return &volv1.FormatVolumeResponse{}, v.s.refuse(v.s.Host.FormatVolume(r.VolumeId))
}

func (v *volumeV1) ResizeVolume(_ context.Context, r *volv1.ResizeVolumeRequest) (*volv1.ResizeVolumeResponse, error) {
	return &volv1.ResizeVolumeResponse{}, v.s.refuse(v.s.Host.ResizeVolume(r.VolumeId, r.SizeBytes))
}

func (v *volumeV1) GetVolumeStats(_ context.Context, r *volv1.GetVolumeStatsRequest) (*volv1.GetVolumeStatsResponse, error) {
	vol, err := v.s.Host.GetVolume(r.VolumeId)
	if err != nil {
		return nil, v.s.refuse(err)
	}
	return &volv1.GetVolumeStatsResponse{TotalBytes: vol.SizeBytes, UsedBytes: vol.UsedBytes}, nil
}

func (v *volumeV1) GetDiskNumberFromVolumeID(_ context.Context, r *volv1.GetDiskNumberFromVolumeIDRequest) (*volv1.GetDiskNumberFromVolumeIDResponse, error) {
	vol, err := v.s.Host.GetVolume(r.VolumeId)
	if err != nil {
		return nil, v.s.refuse(err)
	}
	return &volv1.GetDiskNumberFromVolumeIDResponse{DiskNumber: vol.Disk}, nil
}

func (v *volumeV1) GetVolumeIDFromTargetPath(_ context.Context, r *volv1.GetVolumeIDFromTargetPathRequest) (*volv1.GetVolumeIDFromTargetPathResponse, error) {
	if err := v.s.dirFor(r.TargetPath); err != nil {
		return nil, err
	}
	id, err := v.s.Host.VolumeAt(r.TargetPath)
	return &volv1.GetVolumeIDFromTargetPathResponse{VolumeId: id}, v.s.refuse(err)
}

func (v *volumeV1) WriteVolumeCache(_ context.Context, r *volv1.WriteVolumeCacheRequest) (*volv1.WriteVolumeCacheResponse, error) {
	return &volv1.WriteVolumeCacheResponse{}, v.s.refuse(v.s.Host.WriteVolumeCache(r.VolumeId))
}
