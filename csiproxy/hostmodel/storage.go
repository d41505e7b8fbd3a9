package hostmodel

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
)

// Disk is one disk device.
type Disk struct {
	Number                      uint32
	Adapter, Bus, Target, LUNID string
	SerialNumber                string
	SizeBytes                   int64
	Online                      bool
	Partitioned                 bool
	System                      bool // the OS disk: never repartitioned
	Volumes                     []string
	ISCSI                       string // portal|iqn of the target it came from
}

// Volume is one volume on a disk partition.
type Volume struct {
	ID        string
	Disk      uint32
	SizeBytes int64
	UsedBytes int64
	Formatted bool
	Mounts    []string // canonical paths
	Flushes   int
}

// formatOverhead is what NTFS uses on a fresh volume in the model.
const formatOverhead = 64 << 20

func (h *Host) addDisk(size int64, lun string) *Disk {
	n := h.nextDisk
	h.nextDisk++
	d := &Disk{
		Number: n, Adapter: "0", Bus: "0", Target: "0", LUNID: lun,
		SerialNumber: fmt.Sprintf("FENCEPROOF-DISK-%04d", n),
		SizeBytes:    size, Online: true,
	}
	h.disks[n] = d
	return d
}

func (h *Host) disk(n uint32) (*Disk, error) {
	d := h.disks[n]
	if d == nil {
		return nil, errf(codes.NotFound, "disk %d does not exist", n)
	}
	return d, nil
}

// Disks returns a copy of every disk, by number.
func (h *Host) Disks() []Disk {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Disk
	for _, d := range h.disks {
		c := *d
		c.Volumes = append([]string(nil), d.Volumes...)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// GetDisk returns a copy of one disk.
func (h *Host) GetDisk(n uint32) (Disk, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, err := h.disk(n)
	if err != nil {
		return Disk{}, err
	}
	c := *d
	c.Volumes = append([]string(nil), d.Volumes...)
	return c, nil
}

// PartitionDisk initialises a disk and creates one partition with one
// volume spanning it, unless it is partitioned already (then nothing
// changes). An offline disk cannot be partitioned.
func (h *Host) PartitionDisk(n uint32) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, err := h.disk(n)
	if err != nil {
		return err
	}
	if d.Partitioned {
		return nil
	}
	if !d.Online {
		return errf(codes.FailedPrecondition, "disk %d is offline", n)
	}
	id := fmt.Sprintf(`\\?\Volume{f3e9c0de-0000-4000-8000-%012x}\`, n)
	h.volumes[id] = &Volume{ID: id, Disk: n, SizeBytes: d.SizeBytes - 16<<20}
	d.Partitioned = true
	d.Volumes = append(d.Volumes, id)
	return nil
}

// SetDiskOnline sets the online state of a disk. The OS disk stays online.
func (h *Host) SetDiskOnline(n uint32, online bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, err := h.disk(n)
	if err != nil {
		return err
	}
	if d.System && !online {
		return errf(codes.FailedPrecondition, "disk %d holds the operating system", n)
	}
	d.Online = online
	return nil
}

func (h *Host) volume(id string) (*Volume, error) {
	v := h.volumes[id]
	if v == nil {
		return nil, errf(codes.NotFound, "volume %s does not exist", id)
	}
	return v, nil
}

// GetVolume returns a copy of one volume.
func (h *Host) GetVolume(id string) (Volume, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, err := h.volume(id)
	if err != nil {
		return Volume{}, err
	}
	c := *v
	c.Mounts = append([]string(nil), v.Mounts...)
	return c, nil
}

// FormatVolume formats a volume with NTFS. A mounted volume is refused.
func (h *Host) FormatVolume(id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, err := h.volume(id)
	if err != nil {
		return err
	}
	if len(v.Mounts) > 0 {
		return errf(codes.FailedPrecondition, "volume %s is mounted at %s", id, v.Mounts[0])
	}
	v.Formatted, v.UsedBytes = true, formatOverhead
	return nil
}

// MountVolume mounts a volume at an existing empty directory.
func (h *Host) MountVolume(id, target string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, err := h.volume(id)
	if err != nil {
		return err
	}
	k := key(target)
	n := h.fs[k]
	switch {
	case n == nil:
		return errf(codes.NotFound, "%s does not exist", Canonical(target))
	case n.mount == id:
		return nil
	case !n.dir || n.link != "" || n.mount != "" || len(h.children(k)) > 0:
		return errf(codes.FailedPrecondition, "%s is not an empty directory", n.path)
	}
	n.mount = id
	v.Mounts = append(v.Mounts, n.path)
	return nil
}

// UnmountVolume removes the mount of a volume at target.
func (h *Host) UnmountVolume(id, target string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, err := h.volume(id)
	if err != nil {
		return err
	}
	n := h.fs[key(target)]
	if n == nil || n.mount != id {
		return errf(codes.NotFound, "volume %s is not mounted at %s", id, Canonical(target))
	}
	n.mount = ""
	for i, m := range v.Mounts {
		if strings.EqualFold(m, n.path) {
			v.Mounts = append(v.Mounts[:i], v.Mounts[i+1:]...)
			break
		}
	}
	return nil
}

// VolumeAt returns the volume mounted at p.
func (h *Host) VolumeAt(p string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.fs[key(p)]
	if n == nil || n.mount == "" {
		return "", errf(codes.NotFound, "no volume is mounted at %s", Canonical(p))
	}
	return n.mount, nil
}

// ResizeVolume grows or shrinks a volume; 0 means as large as the disk
// allows. It cannot exceed the disk nor go below what is used.
func (h *Host) ResizeVolume(id string, size int64) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, err := h.volume(id)
	if err != nil {
		return err
	}
	max := h.disks[v.Disk].SizeBytes - 16<<20
	if size == 0 {
		size = max
	}
	if size < 0 || size > max {
		return errf(codes.OutOfRange, "size %d is outside 1..%d", size, max)
	}
	if size < v.UsedBytes {
		return errf(codes.FailedPrecondition, "size %d is below the %d bytes used", size, v.UsedBytes)
	}
	v.SizeBytes = size
	return nil
}

// WriteVolumeCache flushes a volume's cache.
func (h *Host) WriteVolumeCache(id string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, err := h.volume(id)
	if err != nil {
		return err
	}
	v.Flushes++
	return nil
}
