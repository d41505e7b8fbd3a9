package restrict

import (
	"regexp"
	"slices"
	"strings"
)

// volumeIDRE is a volume GUID path: \\?\Volume{GUID}\ as csi-proxy's
// ListVolumesOnDisk returns it, \\.\Volume{GUID} as the KEP writes it,
// with or without the final separator, hex digits in either case.
var volumeIDRE = regexp.MustCompile(`^\\\\[?.]\\Volume\{([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\}\\?$`)

// VolumeID checks a volume ID (VOLID-001): a volume GUID path, nothing
// else (no drive letter, no device path, no command text).
func (v *Validator) VolumeID(field, id string) error {
	if !volumeIDRE.MatchString(id) {
		if f := v.fail("VOLID-001", field, `%q is not \\?\Volume{GUID}\ or \\.\Volume{GUID}\`, clip(id)); f != nil {
			return f
		}
	}
	return nil
}

// VolumeKey is what identifies the volume a volume ID names: its GUID in
// lower case ("" for an ID that is no volume GUID path), so every spelling
// of one volume has one key.
func VolumeKey(id string) string {
	m := volumeIDRE.FindStringSubmatch(id)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// Service checks a service name against the allow-list (SVC-001),
// case-insensitively as Windows names services.
func (v *Validator) Service(field, name string) error {
	if !slices.ContainsFunc(v.Services, func(s string) bool { return strings.EqualFold(s, name) }) {
		if f := v.fail("SVC-001", field, "service %q is not one of %v", clip(name), v.Services); f != nil {
			return f
		}
	}
	return nil
}

// clip shortens a value quoted in an error.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
