package winos

import (
	"fmt"

	"google.golang.org/grpc/codes"
)

// ListVolumesOnDisk lists the volume IDs of a disk, or of one partition
// (numbered from 1) when partitionNumber is set.
func (o *OS) ListVolumesOnDisk(diskNumber, partitionNumber uint32) ([]string, error) {
	if partitionNumber == 0 {
		o.run("ListVolumesOnDisk", nil, diskNumber)
	} else {
		o.run("ListVolumesOnPartition", nil, diskNumber, partitionNumber)
	}
	d, err := o.H.GetDisk(diskNumber)
	if err != nil {
		return nil, fail(err, "error list volumes on disk")
	}
	if partitionNumber == 0 {
		return d.Volumes, nil
	}
	if int(partitionNumber) > len(d.Volumes) {
		return nil, &Error{Code: codes.NotFound, Msg: fmt.Sprintf("error list volumes on disk: no partition %d on disk %d", partitionNumber, diskNumber)}
	}
	return d.Volumes[partitionNumber-1 : partitionNumber], nil
}

// MountVolume is Add-PartitionAccessPath.
func (o *OS) MountVolume(volumeID, path string) error {
	o.run("MountVolume", []string{volumeID, path})
	return fail(o.H.MountVolume(volumeID, path), "error mount volume to path")
}

// UnmountVolume flushes the volume's cache, then Remove-PartitionAccessPath.
func (o *OS) UnmountVolume(volumeID, path string) error {
	if err := o.WriteVolumeCache(volumeID); err != nil {
		return err
	}
	o.run("UnmountVolume", []string{volumeID, path})
	return fail(o.H.UnmountVolume(volumeID, path), "error getting driver letter to mount volume")
}

// IsVolumeFormatted reads the volume's file system type.
func (o *OS) IsVolumeFormatted(volumeID string) (bool, error) {
	o.run("IsVolumeFormatted", []string{volumeID})
	v, err := o.H.GetVolume(volumeID)
	if err != nil {
		return false, fail(err, "error checking if volume is formatted")
	}
	return v.Formatted, nil
}

// FormatVolume is Format-Volume -FileSystem ntfs.
func (o *OS) FormatVolume(volumeID string) error {
	o.run("FormatVolume", []string{volumeID})
	return fail(o.H.FormatVolume(volumeID), "error formatting volume")
}

// ResizeVolume grows a volume's partition to size (0: the largest the disk
// allows); a size at or below the current one is left alone, as csi-proxy
// does.
func (o *OS) ResizeVolume(volumeID string, size int64) error {
	v, err := o.H.GetVolume(volumeID)
	if size == 0 {
		o.run("ResizeVolumeMax", []string{volumeID})
		if err != nil {
			return fail(err, "error getting sizemin,sizemax from mount")
		}
		d, err := o.H.GetDisk(v.Disk)
		if err != nil {
			return fail(err, "error getting sizemin,sizemax from mount")
		}
		size = d.SizeBytes - 16<<20
	}
	o.run("VolumeSize", []string{volumeID})
	if err != nil {
		return fail(err, "error getting the current size of volume (%s)", volumeID)
	}
	if v.SizeBytes >= size {
		return nil
	}
	o.run("ResizeVolume", []string{volumeID}, size)
	return fail(o.H.ResizeVolume(volumeID, size), "error resizing volume")
}

// GetVolumeStats returns the volume's size and used bytes.
func (o *OS) GetVolumeStats(volumeID string) (int64, int64, error) {
	o.run("GetVolumeStats", []string{volumeID})
	v, err := o.H.GetVolume(volumeID)
	if err != nil {
		return -1, -1, fail(err, "error getting capacity and used size of volume")
	}
	return v.SizeBytes, v.UsedBytes, nil
}

// GetDiskNumberFromVolumeID returns the disk a volume is on.
func (o *OS) GetDiskNumberFromVolumeID(volumeID string) (uint32, error) {
	o.run("GetDiskNumberFromVolumeID", []string{volumeID})
	v, err := o.H.GetVolume(volumeID)
	if err != nil {
		return 0, fail(err, "error getting disk number")
	}
	return v.Disk, nil
}

// GetVolumeIDFromTargetPath follows (Get-Item).Target from the path until
// it reaches a volume.
func (o *OS) GetVolumeIDFromTargetPath(mount string) (string, error) {
	o.run("GetItemTarget", []string{mount})
	id, err := o.H.VolumeAt(mount)
	return id, fail(err, "error getting the volume for the mount %s", mount)
}

// WriteVolumeCache is Write-VolumeCache.
func (o *OS) WriteVolumeCache(volumeID string) error {
	o.run("WriteVolumeCache", []string{volumeID})
	return fail(o.H.WriteVolumeCache(volumeID), "error writing volume cache")
}

// GetClosestVolumeIDFromTargetPath follows links and climbs directories
// from the path until a volume: a mount point, or the drive's volume. Like
// csi-proxy's findClosestVolume it starts with os.Lstat of the path, so a
// path that does not exist is an error (the model used to climb from its
// parent and answer with the drive's volume).
func (o *OS) GetClosestVolumeIDFromTargetPath(targetPath string) (string, error) {
	o.H.Call("os.Lstat", targetPath)
	in, err := o.H.Lstat(targetPath)
	if err != nil {
		return "", fail(err, "error getting the closest volume for the path=%s", targetPath)
	}
	if in.Link {
		o.run("DereferenceSymlink", []string{targetPath})
	}
	o.run("VolumeForDriveLetter", []string{"C"})
	id, err := o.H.ClosestVolume(targetPath)
	return id, fail(err, "error getting the closest volume for the path=%s", targetPath)
}
