package restrict

import "strings"

// Entry is what a host knows of one path.
type Entry struct {
	// Exists: the path names an entry (a link counts).
	Exists bool
	// IsDir: where the path leads is a directory.
	IsDir bool
}

// LinkState checks the host-state rules of CreateSymlink (LinkPath in
// v1alpha1 and v1beta1) the way csi-proxy v1 makes the link,
// os.Symlink(source_path, target_path): the link to create, target, must
// not exist (LINK-003); the directory linked to, source, must exist and be
// a directory (LINK-004).
func (v *Validator) LinkState(source, target Entry) error {
	if target.Exists {
		if f := v.fail("LINK-003", "target_path", "already exists"); f != nil {
			return f
		}
	}
	if !source.Exists || !source.IsDir {
		if f := v.fail("LINK-004", "source_path", "is not an existing directory"); f != nil {
			return f
		}
	}
	return nil
}

// Reach is where a path leads once the host has followed every link on
// the way.
type Reach struct {
	// Local: a path on this machine (Path is its canonical C:\... form);
	// otherwise Remote (\\server\share\... of a mapped share) or neither (a
	// device).
	Local, Remote bool
	Path          string
}

// Reached checks where a path leads (DIR-002, or LINK-005 for the
// directory a link points to): a local path at or below a kubelet
// directory, or a remote share; never a device or another local path.
func (v *Validator) Reached(rule, field string, r Reach) error {
	switch {
	case r.Remote:
		return nil
	case r.Local && (AtOrUnder(v.PluginsPath, r.Path) || AtOrUnder(v.PodPath, r.Path)):
		return nil
	case r.Local:
		if f := v.fail(rule, field, "leads to %s, outside the kubelet directories", r.Path); f != nil {
			return f
		}
	default:
		if f := v.fail(rule, field, "leads to the device %s", r.Path); f != nil {
			return f
		}
	}
	return nil
}

// SystemDisk refuses a change to the disk the OS runs from (SYSDISK-001).
func (v *Validator) SystemDisk(field string, disk uint32, system []uint32) error {
	for _, s := range system {
		if disk == s {
			if f := v.fail("SYSDISK-001", field, "disk %d holds the operating system", disk); f != nil {
				return f
			}
		}
	}
	return nil
}

// SystemVolume refuses a change to a volume the OS runs from
// (SYSDISK-001).
func (v *Validator) SystemVolume(field, id string, system []string) error {
	for _, s := range system {
		if k := VolumeKey(id); k != "" && k == VolumeKey(s) || strings.EqualFold(id, s) {
			if f := v.fail("SYSDISK-001", field, "volume %s holds the operating system", id); f != nil {
				return f
			}
		}
	}
	return nil
}
