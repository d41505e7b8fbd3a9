package simhost

import (
	"context"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/simhost/fault"
)

// volumeHandler is the volume group on every version: volume IDs must be
// \\?\Volume{GUID}\, the OS volume is never changed, paths are checked
// like the filesystem group's.
type volumeHandler struct{ s *Sim }

func (h volumeHandler) ListVolumesOnDisk(_ context.Context, r *api.VolumeListVolumesOnDiskRequest, _ string) (*api.VolumeListVolumesOnDiskResponse, error) {
	ids, err := h.s.OS.ListVolumesOnDisk(r.DiskNumber, r.PartitionNumber)
	return &api.VolumeListVolumesOnDiskResponse{VolumeIds: ids}, h.s.refuse(err)
}

func (h volumeHandler) MountVolume(_ context.Context, r *api.VolumeMountVolumeRequest, version string) (*api.VolumeMountVolumeResponse, error) {
	if err := h.s.check("MountVolume", version, r, append(h.s.volumeID("volume_id", r.VolumeId, true), h.s.path("target_path", r.TargetPath, false)...)...); err != nil {
		return nil, err
	}
	return &api.VolumeMountVolumeResponse{}, h.s.refuse(h.s.OS.MountVolume(r.VolumeId, r.TargetPath))
}

func (h volumeHandler) UnmountVolume(_ context.Context, r *api.VolumeUnmountVolumeRequest, version string) (*api.VolumeUnmountVolumeResponse, error) {
	if err := h.s.check("UnmountVolume", version, r, append(h.s.volumeID("volume_id", r.VolumeId, true), h.s.path("target_path", r.TargetPath, false)...)...); err != nil {
		return nil, err
	}
	if h.s.faults.Breaks(fault.UnmountKeepsMount) {
		return &api.VolumeUnmountVolumeResponse{}, nil
	}
	return &api.VolumeUnmountVolumeResponse{}, h.s.refuse(h.s.OS.UnmountVolume(r.VolumeId, r.TargetPath))
}

func (h volumeHandler) IsVolumeFormatted(_ context.Context, r *api.VolumeIsVolumeFormattedRequest, version string) (*api.VolumeIsVolumeFormattedResponse, error) {
	if err := h.s.check("IsVolumeFormatted", version, r, h.s.volumeID("volume_id", r.VolumeId, false)...); err != nil {
		return nil, err
	}
	ok, err := h.s.OS.IsVolumeFormatted(r.VolumeId)
	return &api.VolumeIsVolumeFormattedResponse{Formatted: ok}, h.s.refuse(err)
}

func (h volumeHandler) FormatVolume(_ context.Context, r *api.VolumeFormatVolumeRequest, version string) (*api.VolumeFormatVolumeResponse, error) {
	if err := h.s.check("FormatVolume", version, r, h.s.volumeID("volume_id", r.VolumeId, true)...); err != nil {
		return nil, err
	}
	return &api.VolumeFormatVolumeResponse{}, h.s.refuse(h.s.OS.FormatVolume(r.VolumeId))
}

func (h volumeHandler) ResizeVolume(_ context.Context, r *api.VolumeResizeVolumeRequest, version string) (*api.VolumeResizeVolumeResponse, error) {
	if err := h.s.check("ResizeVolume", version, r, h.s.volumeID("volume_id", r.VolumeId, true)...); err != nil {
		return nil, err
	}
	return &api.VolumeResizeVolumeResponse{}, h.s.refuse(h.s.OS.ResizeVolume(r.VolumeId, r.SizeBytes))
}

func (h volumeHandler) GetVolumeStats(_ context.Context, r *api.VolumeGetVolumeStatsRequest, version string) (*api.VolumeGetVolumeStatsResponse, error) {
	if err := h.s.check("GetVolumeStats", version, r, h.s.volumeID("volume_id", r.VolumeId, false)...); err != nil {
		return nil, err
	}
	total, used, err := h.s.OS.GetVolumeStats(r.VolumeId)
	return &api.VolumeGetVolumeStatsResponse{TotalBytes: total, UsedBytes: used}, h.s.refuse(err)
}

func (h volumeHandler) GetDiskNumberFromVolumeID(_ context.Context, r *api.VolumeGetDiskNumberFromVolumeIDRequest, version string) (*api.VolumeGetDiskNumberFromVolumeIDResponse, error) {
	if err := h.s.check("GetDiskNumberFromVolumeID", version, r, h.s.volumeID("volume_id", r.VolumeId, false)...); err != nil {
		return nil, err
	}
	n, err := h.s.OS.GetDiskNumberFromVolumeID(r.VolumeId)
	return &api.VolumeGetDiskNumberFromVolumeIDResponse{DiskNumber: n}, h.s.refuse(err)
}

func (h volumeHandler) GetVolumeIDFromTargetPath(_ context.Context, r *api.VolumeGetVolumeIDFromTargetPathRequest, version string) (*api.VolumeGetVolumeIDFromTargetPathResponse, error) {
	if err := h.s.check("GetVolumeIDFromTargetPath", version, r, h.s.path("target_path", r.TargetPath, true)...); err != nil {
		return nil, err
	}
	id, err := h.s.OS.GetVolumeIDFromTargetPath(r.TargetPath)
	return &api.VolumeGetVolumeIDFromTargetPathResponse{VolumeId: id}, h.s.refuse(err)
}

func (h volumeHandler) GetClosestVolumeIDFromTargetPath(_ context.Context, r *api.VolumeGetClosestVolumeIDFromTargetPathRequest, version string) (*api.VolumeGetClosestVolumeIDFromTargetPathResponse, error) {
	if err := h.s.check("GetClosestVolumeIDFromTargetPath", version, r, h.s.path("target_path", r.TargetPath, true)...); err != nil {
		return nil, err
	}
	id, err := h.s.OS.GetClosestVolumeIDFromTargetPath(r.TargetPath)
	return &api.VolumeGetClosestVolumeIDFromTargetPathResponse{VolumeId: id}, h.s.refuse(err)
}

func (h volumeHandler) WriteVolumeCache(_ context.Context, r *api.VolumeWriteVolumeCacheRequest, version string) (*api.VolumeWriteVolumeCacheResponse, error) {
	if err := h.s.check("WriteVolumeCache", version, r, h.s.volumeID("volume_id", r.VolumeId, false)...); err != nil {
		return nil, err
	}
	return &api.VolumeWriteVolumeCacheResponse{}, h.s.refuse(h.s.OS.WriteVolumeCache(r.VolumeId))
}

// diskHandler is the disk group on every version: the OS disk is never
// partitioned or set offline.
type diskHandler struct{ s *Sim }

func (h diskHandler) ListDiskLocations(context.Context, *api.DiskListDiskLocationsRequest, string) (*api.DiskListDiskLocationsResponse, error) {
	out := map[uint32]*api.DiskDiskLocation{}
	for _, d := range h.s.Host.Disks() {
		out[d.Number] = &api.DiskDiskLocation{Adapter: d.Adapter, Bus: d.Bus, Target: d.Target, LUNID: d.LUNID}
	}
	return &api.DiskListDiskLocationsResponse{DiskLocations: out}, nil
}

func (h diskHandler) ListDiskIDs(context.Context, *api.DiskListDiskIDsRequest, string) (*api.DiskListDiskIDsResponse, error) {
	ids, err := h.s.OS.ListDiskIDs()
	if h.s.faults.Breaks(fault.DiskIDsMissing) {
		delete(ids, 1)
	}
	out := map[uint32]*api.DiskDiskIDs{}
	for n, id := range ids {
		out[n] = &api.DiskDiskIDs{Page83: id.Page83, SerialNumber: id.SerialNumber,
			Identifiers: map[string]string{"page83": id.Page83, "serialNumber": id.SerialNumber}}
	}
	return &api.DiskListDiskIDsResponse{DiskIDs: out}, h.s.refuse(err)
}

func (h diskHandler) PartitionDisk(_ context.Context, r *api.DiskPartitionDiskRequest, version string) (*api.DiskPartitionDiskResponse, error) {
	if err := h.s.check("PartitionDisk", version, r, h.s.disk("disk_number", r.DiskNumber)); err != nil {
		return nil, err
	}
	o := h.s.OS
	initialized, err := o.IsDiskInitialized(r.DiskNumber)
	if err == nil && !initialized {
		err = o.InitializeDisk(r.DiskNumber)
	}
	if err == nil {
		var parts bool
		if parts, err = o.BasicPartitionsExist(r.DiskNumber); err == nil && !parts {
			err = o.CreateBasicPartition(r.DiskNumber)
		}
	}
	return &api.DiskPartitionDiskResponse{}, h.s.refuse(err)
}

func (h diskHandler) Rescan(context.Context, *api.DiskRescanRequest, string) (*api.DiskRescanResponse, error) {
	if h.s.faults.Breaks(fault.RescanFails) {
		return nil, status.Error(codes.Internal, "Update-HostStorageCache failed")
	}
	return &api.DiskRescanResponse{}, h.s.refuse(h.s.OS.Rescan())
}

func (h diskHandler) GetDiskNumberByName(_ context.Context, r *api.DiskGetDiskNumberByNameRequest, _ string) (*api.DiskGetDiskNumberByNameResponse, error) {
	n, err := h.s.OS.GetDiskNumberByName(r.DiskName)
	if err != nil {
		return nil, h.s.refuse(err)
	}
	return &api.DiskGetDiskNumberByNameResponse{DiskNumber: strconv.FormatUint(uint64(n), 10)}, nil
}

func (h diskHandler) GetDiskStats(_ context.Context, r *api.DiskGetDiskStatsRequest, _ string) (*api.DiskGetDiskStatsResponse, error) {
	n, err := h.s.OS.GetDiskStats(r.DiskNumber)
	return &api.DiskGetDiskStatsResponse{TotalBytes: n}, h.s.refuse(err)
}

func (h diskHandler) SetDiskState(_ context.Context, r *api.DiskSetDiskStateRequest, version string) (*api.DiskSetDiskStateResponse, error) {
	if err := h.s.check("SetDiskState", version, r, h.s.disk("disk_number", r.DiskNumber)); err != nil {
		return nil, err
	}
	if h.s.faults.Breaks(fault.StateNotKept) {
		return &api.DiskSetDiskStateResponse{}, nil
	}
	return &api.DiskSetDiskStateResponse{}, h.s.refuse(h.s.OS.SetDiskState(r.DiskNumber, r.IsOnline))
}

func (h diskHandler) GetDiskState(_ context.Context, r *api.DiskGetDiskStateRequest, _ string) (*api.DiskGetDiskStateResponse, error) {
	ok, err := h.s.OS.GetDiskState(r.DiskNumber)
	return &api.DiskGetDiskStateResponse{IsOnline: ok}, h.s.refuse(err)
}
