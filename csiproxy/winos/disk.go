package winos

import (
	shared "github.com/kubernetes-csi/csi-proxy/pkg/shared/disk"
)

// ListDiskLocations parses each disk's Location the way csi-proxy does:
// it reads Adapter, Target and LUN (never Bus).
func (o *OS) ListDiskLocations() (map[uint32]shared.DiskLocation, error) {
	o.run("ListDiskLocations", nil)
	m := map[uint32]shared.DiskLocation{}
	for _, d := range o.H.Disks() {
		m[d.Number] = shared.DiskLocation{Adapter: d.Adapter, Target: d.Target, LUNID: d.LUNID}
	}
	return m, nil
}

// IsDiskInitialized reports a disk whose partition style is not raw.
func (o *OS) IsDiskInitialized(diskNumber uint32) (bool, error) {
	o.run("IsDiskInitialized", nil, diskNumber)
	d, err := o.H.GetDisk(diskNumber)
	if err != nil {
		return false, fail(err, "error checking initialized status of disk %d", diskNumber)
	}
	return d.Initialized, nil
}

// InitializeDisk is Initialize-Disk -PartitionStyle GPT.
func (o *OS) InitializeDisk(diskNumber uint32) error {
	o.run("InitializeDisk", nil, diskNumber)
	return fail(o.H.InitializeDisk(diskNumber), "error initializing disk %d", diskNumber)
}

// BasicPartitionsExist reports a disk with a non-reserved partition.
func (o *OS) BasicPartitionsExist(diskNumber uint32) (bool, error) {
	o.run("BasicPartitionsExist", nil, diskNumber)
	d, err := o.H.GetDisk(diskNumber)
	if err != nil {
		return false, fail(err, "error checking presence of partitions on disk %d", diskNumber)
	}
	return len(d.Volumes) > 0, nil
}

// CreateBasicPartition is New-Partition -UseMaximumSize.
func (o *OS) CreateBasicPartition(diskNumber uint32) error {
	o.run("CreateBasicPartition", nil, diskNumber)
	return fail(o.H.CreatePartition(diskNumber), "error creating partition on disk %d", diskNumber)
}

// Rescan is Update-HostStorageCache.
func (o *OS) Rescan() error {
	o.run("Rescan", nil)
	return nil
}

// GetDiskNumberByName finds a disk by its page 83 ID.
func (o *OS) GetDiskNumberByName(page83ID string) (uint32, error) {
	o.run("ListDiskPaths", nil)
	o.H.Call("IOCTL_STORAGE_QUERY_PROPERTY", page83ID)
	n, err := o.H.DiskByPage83(page83ID)
	return n, fail(err, "Could not find disk with Page83 ID %s", page83ID)
}

// ListDiskIDs returns every disk's page 83 ID and serial number.
func (o *OS) ListDiskIDs() (map[uint32]shared.DiskIDs, error) {
	o.run("ListDiskIDs", nil)
	m := map[uint32]shared.DiskIDs{}
	for _, d := range o.H.Disks() {
		m[d.Number] = shared.DiskIDs{Page83: d.SerialNumber, SerialNumber: d.SerialNumber}
	}
	return m, nil
}

// GetDiskStats returns a disk's size.
func (o *OS) GetDiskStats(diskNumber uint32) (int64, error) {
	o.run("GetDiskStats", nil, diskNumber)
	d, err := o.H.GetDisk(diskNumber)
	if err != nil {
		return -1, fail(err, "error getting size of disk")
	}
	return d.SizeBytes, nil
}

// SetDiskState is Set-Disk -IsOffline.
func (o *OS) SetDiskState(diskNumber uint32, isOnline bool) error {
	o.run("SetDiskState", nil, diskNumber, !isOnline)
	return fail(o.H.SetDiskOnline(diskNumber, isOnline), "error setting disk attach state")
}

// GetDiskState reads a disk's IsOffline.
func (o *OS) GetDiskState(diskNumber uint32) (bool, error) {
	o.run("GetDiskState", nil, diskNumber)
	d, err := o.H.GetDisk(diskNumber)
	if err != nil {
		return false, fail(err, "error getting disk state")
	}
	return d.Online, nil
}
