package fault

import (
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
)

// Hostile hosts that check a value in one spelling, one position or one
// unit and take every other as valid: each refuses what a suite that
// varied only the letters of its probes sends, and lets through what the
// same check misses in another form.

// dirsOf are the kubelet directories a violation of rule is judged
// against: the plugins path for a link's source, the pod path for its
// target, either for any other path.
func dirsOf(rule string, h *Validator) []string {
	switch rule {
	case "LINK-001":
		return []string{h.PluginsPath}
	case "LINK-002":
		return []string{h.PodPath}
	}
	return []string{h.PluginsPath, h.PodPath}
}

// belowIgnoringDrive reports a path X:rest whose rest lies below one of
// dirs' rest, whatever X: the comparison a host makes that keeps its
// directories without their drive (\var\lib\kubelet) or drops the drive
// before comparing; sep says whether the path has its separator after the
// colon (C:\x) or not (C:x, drive-relative).
func belowIgnoringDrive(p string, dirs []string, sep bool) bool {
	if len(p) < 3 || p[1] != ':' || (p[2] == '\\') != sep {
		return false
	}
	rest := strings.TrimPrefix(p[2:], `\`)
	for _, d := range dirs {
		if len(d) > 3 && restrict.Under(d, d[:3]+rest) {
			return true
		}
	}
	return false
}

// driveLetterIgnored compares the kubelet directories below the drive
// letter only, where it checks the path and where it checks what the path
// leads to: D:\var\lib\kubelet\pods\x is taken for C:\var\lib\kubelet\pods\x.
func driveLetterIgnored(v *restrict.Violation, value string, _ Request, h *Validator) bool {
	switch v.Rule {
	case "DIR-001", "LINK-001", "LINK-002":
		return belowIgnoringDrive(value, dirsOf(v.Rule, h), true)
	case "DIR-002": // where a path on the directories' own drive leads is judged as ever
		dirs := dirsOf("", h)
		return !slices.ContainsFunc(dirs, func(d string) bool { return strings.EqualFold(d[:1], value[:1]) }) &&
			belowIgnoringDrive(value, dirs, true)
	}
	return false
}

// driveRelativeDir takes the separator after the drive's colon as
// optional: C:var\lib\kubelet\pods\x (relative to C:'s current directory,
// C:\Windows\System32) passes as below the pod path, and so does where it
// leads.
func driveRelativeDir(v *restrict.Violation, value string, _ Request, h *Validator) bool {
	return (v.Rule == "PATH-001" || v.Rule == "DIR-002") && belowIgnoringDrive(value, dirsOf("", h), false)
}

// leafRules are the character rules and the characters each refuses.
var leafRules = map[string]func(c string) bool{
	"PATH-005": func(c string) bool { return strings.Contains(c, ":") },
	"PATH-006": func(c string) bool { return strings.ContainsAny(c, "|?*") },
	"PATH-013": func(c string) bool { return strings.ContainsAny(c, `<>"`) },
	"PATH-008": func(c string) bool { return strings.IndexFunc(c, func(r rune) bool { return r < 32 }) >= 0 },
}

// leafOnlyNames judges names by their final component alone (the name
// being made, as a name check of filepath.Base does): a stream, a
// wildcard, < > " or a control character in a component on the way
// passes.
func leafOnlyNames(v *restrict.Violation, value string, _ Request, _ *Validator) bool {
	bad, ok := leafRules[v.Rule]
	if !ok {
		return false
	}
	p := strings.TrimRight(value, `\`)
	leaf := p[strings.LastIndexAny(p, `\/`)+1:]
	return !bad(leaf)
}

// lengthInCodePoints counts a path's length in Unicode code points, not
// the UTF-16 code units Windows counts: a path of characters outside the
// BMP is taken for half its length.
func lengthInCodePoints(v *restrict.Violation, value string, _ Request, _ *Validator) bool {
	return v.Rule == "PATH-007" && utf8.RuneCountInString(value) <= restrict.MaxPathLength
}

// ntObjectPrefix knows the device prefixes the KEP names (\\?\, \\.\) but
// takes \??\, the NT object manager's own prefix (which Win32 hands to NT
// untouched), as a plain path and checks what follows it.
func ntObjectPrefix(v *restrict.Violation, value string, _ Request, h *Validator) bool {
	rest, ok := strings.CutPrefix(value, `\??\`)
	return ok && (v.Rule == "PATH-001" || v.Rule == "PATH-003") && h.Dir("path", rest) == nil
}

// smbSelfIPv4Only knows this machine by its names and its IPv4 addresses
// in any form, but not by an IPv6 address (::1, ::ffff:127.0.0.1, its own)
// written as an ipv6-literal.net name.
func smbSelfIPv4Only(v *restrict.Violation, value string, _ Request, _ *Validator) bool {
	if v.Rule != "SMB-005" {
		return false
	}
	a, ok := restrict.ServerAddress(smbServer(value))
	return ok && a.Is6() && !a.Is4In6()
}

// smbSelfHostNameOnly knows this machine as localhost, a loopback address
// and its host name (the first --node-name), as a host comparing the
// server with os.Hostname() does: its other names (the FQDN, aliases) and
// its own addresses pass.
func smbSelfHostNameOnly(v *restrict.Violation, value string, _ Request, h *Validator) bool {
	if v.Rule != "SMB-005" || len(h.LocalNames) == 0 {
		return false
	}
	s := smbServer(value)
	knows := &restrict.Validator{LocalNames: h.LocalNames[:1]}
	_, err := knows.SMBRemotePath("remote_path", `\\`+s+`\x`)
	return err == nil
}

// smbServer is the server of a \\server\share remote path.
func smbServer(remote string) string {
	s, _, _ := strings.Cut(strings.TrimPrefix(remote, `\\`), `\`)
	return s
}

// servicePrefix compares service names with the allow-list on their
// first six letters: LanmanServer passes as LanmanWorkstation.
func servicePrefix(v *restrict.Violation, value string, _ Request, h *Validator) bool {
	if v.Rule != "SVC-001" || len(value) < 6 {
		return false
	}
	for _, s := range h.Services {
		if len(s) >= 6 && strings.EqualFold(value[:6], s[:6]) {
			return true
		}
	}
	return false
}

// chapLengthInChars counts the mutual CHAP secret in characters (UTF-16
// code units, as a .NET or PowerShell string's Length does), not the bytes
// the KEP counts: ééééééééééééé (13 characters, 26 bytes) passes.
func chapLengthInChars(v *restrict.Violation, value string, _ Request, _ *Validator) bool {
	n := len(utf16.Encode([]rune(value)))
	return v.Rule == "CHAP-001" && n >= 12 && n <= 16
}
