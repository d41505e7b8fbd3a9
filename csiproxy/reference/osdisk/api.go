// Package disk stands in for csi-proxy v1.1.3's pkg/os/disk/api.go in the
// reference lane's patched build: that file holds the disk group's host
// API interface and its Windows implementation (kernel32 and
// DeviceIoControl, which build only for Windows). This file keeps the
// interface alone, method for method (TestInterfaceIsCSIProxys compares
// them), so csi-proxy's disk server compiles on Linux over winos.
package disk

import shared "github.com/kubernetes-csi/csi-proxy/pkg/shared/disk"

// API is csi-proxy's disk host API.
type API interface {
	ListDiskLocations() (map[uint32]shared.DiskLocation, error)
	IsDiskInitialized(diskNumber uint32) (bool, error)
	InitializeDisk(diskNumber uint32) error
	BasicPartitionsExist(diskNumber uint32) (bool, error)
	CreateBasicPartition(diskNumber uint32) error
	Rescan() error
	GetDiskNumberByName(page83ID string) (uint32, error)
	ListDiskIDs() (map[uint32]shared.DiskIDs, error)
	GetDiskStats(diskNumber uint32) (int64, error)
	SetDiskState(diskNumber uint32, isOnline bool) error
	GetDiskState(diskNumber uint32) (bool, error)
}
