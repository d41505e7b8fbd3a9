package restrict

import (
	"regexp"
	"slices"
	"strings"
)

// volumeIDRE is the only shape of volume ID ListVolumesOnDisk returns.
var volumeIDRE = regexp.MustCompile(`^\\\\\?\\Volume\{[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\}\\$`)

// VolumeID checks a volume ID (VOLID-001): \\?\Volume{GUID}\, nothing
// else (no drive letter, no device path, no command text).
func (v *Validator) VolumeID(field, id string) error {
	if !volumeIDRE.MatchString(id) {
		if f := v.fail("VOLID-001", field, `%q is not \\?\Volume{GUID}\`, clip(id)); f != nil {
			return f
		}
	}
	return nil
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
