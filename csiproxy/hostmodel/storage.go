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
	Initialized                 bool
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
	System    bool     // the volume the OS runs from
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

// InitializeDisk gives a raw disk a GPT partition table
// (Initialize-Disk); an initialised disk is refused.
func (h *Host) InitializeDisk(n uint32) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, err := h.disk(n)
	if err != nil {
		return err
	}
	if !d.Online {
		return errf(codes.FailedPrecondition, "disk %d is offline", n)
	}
	if d.Initialized {
		return errf(codes.FailedPrecondition, "disk %d has already been initialized", n)
	}
	d.Initialized = true
	return nil
}

// CreatePartition makes one partition with one volume spanning the rest
// of an initialised disk (New-Partition -UseMaximumSize).
func (h *Host) CreatePartition(n uint32) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, err := h.disk(n)
	if err != nil {
		return err
	}
	if !d.Online || !d.Initialized {
		return errf(codes.FailedPrecondition, "disk %d is offline or not initialized", n)
	}
	if len(d.Volumes) > 0 {
		return errf(codes.FailedPrecondition, "disk %d has no free space", n)
	}
	id := fmt.Sprintf(`\\?\Volume{f3e9c0de-0000-4000-8000-%012x}\`, n)
	h.volumes[volumeKey(id)] = &Volume{ID: id, Disk: n, SizeBytes: d.SizeBytes - 16<<20}
	d.Partitioned = true
	d.Volumes = append(d.Volumes, id)
	return nil
}

// DiskByPage83 returns the number of the disk with a page 83 ID.
func (h *Host) DiskByPage83(id string) (uint32, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.disks {
		if d.SerialNumber == id {
			return d.Number, nil
		}
	}
	return 0, errf(codes.NotFound, "could not find disk with page 83 ID %s", id)
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
	v := h.volumes[volumeKey(id)]
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

// MountVolume mounts a volume at an existing empty directory
// (Add-PartitionAccessPath): links on the way are followed, the directory
// itself must not be a link.
func (h *Host) MountVolume(id, target string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, err := h.volume(id)
	if err != nil {
		return err
	}
	f, err := h.find(target, false)
	if err != nil {
		return err
	}
	switch n := f.node; {
	case n == nil:
		return errf(codes.NotFound, "%s does not exist", target)
	case n.mount == v.ID:
		return nil
	case !n.dir || n.link != "" || n.mount != "" || !n.empty():
		return errf(codes.FailedPrecondition, "%s is not an empty directory", n.path())
	default:
		n.mount = v.ID
		v.Mounts = append(v.Mounts, n.path())
		return nil
	}
}

// UnmountVolume removes the mount of a volume at target
// (Remove-PartitionAccessPath).
func (h *Host) UnmountVolume(id, target string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, err := h.volume(id)
	if err != nil {
		return err
	}
	f, err := h.find(target, false)
	if err != nil {
		return err
	}
	n := f.node
	if n == nil || n.mount != v.ID {
		return errf(codes.NotFound, "volume %s is not mounted at %s", id, target)
	}
	n.mount = ""
	p := n.path()
	for i, m := range v.Mounts {
		if strings.EqualFold(m, p) {
			v.Mounts = append(v.Mounts[:i], v.Mounts[i+1:]...)
			break
		}
	}
	return nil
}

// VolumeAt returns the volume mounted where p leads (links followed, as
// (Get-Item).Target is followed by csi-proxy).
func (h *Host) VolumeAt(p string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.find(p, true)
	if err != nil {
		return "", err
	}
	if f.node == nil || f.node.mount == "" {
		return "", errf(codes.NotFound, "no volume is mounted at %s", p)
	}
	return f.node.mount, nil
}

// ClosestVolume returns the volume holding p: the nearest mount at or
// above where p leads, else the volume of its drive.
func (h *Host) ClosestVolume(p string) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.find(p, true)
	if err != nil {
		return "", err
	}
	n := f.node
	if n == nil {
		n = f.parent
	}
	for ; n != nil; n = n.parent {
		if n.mount != "" {
			return n.mount, nil
		}
	}
	return "", errf(codes.NotFound, "no volume holds %s", p)
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

// volumeKey is how the volume manager finds a volume by a volume GUID path:
// by its GUID, whatever the prefix (\\?\ or \\.\), the case of its hex
// digits or a final separator; any other ID as it is.
func volumeKey(id string) string {
	open, close := strings.IndexByte(id, '{'), strings.LastIndexByte(id, '}')
	if open < 0 || close < open || len(id) < 4 || !strings.EqualFold(id[:open], `\\?\Volume`) && !strings.EqualFold(id[:open], `\\.\Volume`) ||
		strings.TrimSuffix(id[close+1:], `\`) != "" {
		return id
	}
	return `\\?\Volume{` + strings.ToLower(id[open+1:close]) + `}\`
}
