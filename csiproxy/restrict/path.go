package restrict

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxPathLength is the KEP's cap (Windows MAX_PATH), counted in UTF-16
// code units as Windows counts it.
const MaxPathLength = 260

// isUNC reports a path starting with two separators: \\server\share,
// \\?\ and \\.\ device paths (Windows treats / like \ here).
func isUNC(p string) bool {
	return len(p) >= 2 && isSep(p[0]) && isSep(p[1])
}

func isSep(c byte) bool { return c == '\\' || c == '/' }

// isDriveAbs reports a drive-letter absolute path, "C:\..." (or "C:/...",
// which PATH-002 refuses separately).
func isDriveAbs(p string) bool {
	return len(p) >= 3 && isLetter(p[0]) && p[1] == ':' && isSep(p[2])
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// Path checks the syntax rules PATH-001..012 of one path field. Each rule
// judges only its own concern, so that skipping one rule (a fault) lets
// exactly its cases through: a relative path is PATH-001's alone, a UNC
// path PATH-003's alone.
func (v *Validator) Path(field, p string) error {
	return first(
		v.controlChars(field, p),
		v.length(field, p),
		v.unc(field, p),
		v.absolute(field, p),
		v.slashes(field, p),
		v.dotdot(field, p),
		v.colon(field, p),
		v.wildcards(field, p),
		v.forbidden(field, p),
		v.dots(field, p),
		v.trailing(field, p),
		v.devices(field, p),
		v.shortNames(field, p),
	)
}

func (v *Validator) controlChars(field, p string) *Violation {
	if !utf8.ValidString(p) {
		return v.fail("PATH-008", field, "not valid UTF-8")
	}
	for _, r := range p {
		if r < 32 {
			return v.fail("PATH-008", field, "control character %U", r)
		}
	}
	return nil
}

func (v *Validator) length(field, p string) *Violation {
	n := 0
	for _, r := range p {
		n += utf16Len(r)
	}
	if n > MaxPathLength {
		return v.fail("PATH-007", field, "%d characters, at most %d allowed", n, MaxPathLength)
	}
	return nil
}

func utf16Len(r rune) int {
	if utf16.IsSurrogate(r) || r < 0x10000 {
		return 1
	}
	return 2
}

// isNTPath reports a path of the NT object manager's namespace, \??\C:\...:
// Win32 hands it to NT untouched.
func isNTPath(p string) bool { return strings.HasPrefix(p, `\??\`) }

func (v *Validator) unc(field, p string) *Violation {
	if isUNC(p) || isNTPath(p) {
		return v.fail("PATH-003", field, `UNC and device paths (\\server\share, \\localhost\C$, \\?\, \\.\, \??\) are not allowed`)
	}
	return nil
}

func (v *Validator) absolute(field, p string) *Violation {
	if !isUNC(p) && !isNTPath(p) && !isDriveAbs(p) {
		return v.fail("PATH-001", field, "not an absolute drive-letter path like C:\\...")
	}
	return nil
}

func (v *Validator) slashes(field, p string) *Violation {
	if strings.Contains(p, "/") {
		return v.fail("PATH-002", field, "'/' separator; only '\\' is allowed")
	}
	return nil
}

func (v *Validator) dotdot(field, p string) *Violation {
	if strings.Contains(p, "..") {
		return v.fail("PATH-004", field, "'..' is not allowed")
	}
	return nil
}

// stripDevice drops a device namespace prefix (\\?\ or \\.\, and
// GLOBALROOT\??\ after it, or \??\): PATH-003 judges it, the character
// rules judge what follows.
func stripDevice(p string) string {
	switch {
	case len(p) >= 4 && isSep(p[0]) && isSep(p[1]) && (p[2] == '?' || p[2] == '.') && isSep(p[3]):
		p = p[4:]
		if len(p) >= 14 && strings.EqualFold(p[:10], "GLOBALROOT") && isSep(p[10]) && p[11:13] == "??" && isSep(p[13]) {
			p = p[14:]
		}
	case isNTPath(p):
		p = p[4:]
	}
	return p
}

func (v *Validator) colon(field, p string) *Violation {
	p = stripDevice(p)
	rest := p
	if len(p) >= 2 && isLetter(p[0]) && p[1] == ':' {
		rest = p[2:] // the drive designator
	}
	if strings.Contains(rest, ":") {
		return v.fail("PATH-005", field, "':' is allowed only after the drive letter")
	}
	return nil
}

func (v *Validator) wildcards(field, p string) *Violation {
	if i := strings.IndexAny(stripDevice(p), `|?*`); i >= 0 {
		return v.fail("PATH-006", field, "character %q is not allowed", stripDevice(p)[i])
	}
	return nil
}

func (v *Validator) forbidden(field, p string) *Violation {
	if i := strings.IndexAny(p, `<>"`); i >= 0 {
		return v.fail("PATH-013", field, "character %q is not allowed in a Windows name", p[i])
	}
	return nil
}

func (v *Validator) dots(field, p string) *Violation {
	for _, c := range pathParts(p) {
		if c == "." || c == "" {
			return v.fail("PATH-009", field, `"." or empty component: Windows would drop it`)
		}
	}
	return nil
}

func (v *Validator) trailing(field, p string) *Violation {
	for _, c := range pathParts(p) {
		if c != "." && c != ".." && (strings.HasSuffix(c, ".") || strings.HasSuffix(c, " ")) {
			return v.fail("PATH-010", field, "component %q ends in a dot or a space: Windows would strip it", c)
		}
	}
	return nil
}

// reserved are the legacy DOS device names.
var reserved = regexp.MustCompile(`^(?i:CON|PRN|AUX|NUL|CONIN\$|CONOUT\$|CLOCK\$|COM[0-9¹²³]|LPT[0-9¹²³])$`)

func (v *Validator) devices(field, p string) *Violation {
	for _, c := range pathParts(p) {
		base := c
		if i := strings.IndexAny(base, ".:"); i >= 0 {
			base = base[:i]
		}
		if reserved.MatchString(strings.TrimRightFunc(base, unicode.IsSpace)) {
			return v.fail("PATH-011", field, "component %q names a device", c)
		}
	}
	return nil
}

// shortName is an 8.3 alias: a tilde and digits ending the base name.
var shortName = regexp.MustCompile(`~[0-9]+(\.[^.]*)?$`)

func (v *Validator) shortNames(field, p string) *Violation {
	for _, c := range pathParts(p) {
		if shortName.MatchString(c) {
			return v.fail("PATH-012", field, "component %q has the shape of an 8.3 alias", c)
		}
	}
	return nil
}

// pathParts is every component below the root (a drive, \\server\share:
// its server and share are names, not components), empty ones included;
// one trailing separator does not count.
func pathParts(p string) []string {
	if q := stripDevice(p); q != p && len(q) >= 4 && strings.EqualFold(q[:3], "UNC") && isSep(q[3]) {
		p = `\\` + q[4:] // \\?\UNC\server\share is \\server\share
	}
	p = stripDevice(p)
	switch {
	case len(p) >= 2 && isLetter(p[0]) && p[1] == ':':
		p = p[2:]
	case isUNC(p):
		p = p[2:]
		for range 2 {
			if i := strings.IndexAny(p, `\/`); i >= 0 {
				p = p[i+1:]
			} else {
				p = ""
			}
		}
		p = `\` + p
	}
	if len(p) > 0 && isSep(p[0]) {
		p = p[1:]
	}
	if len(p) > 0 && isSep(p[len(p)-1]) {
		p = p[:len(p)-1]
	}
	if p == "" {
		return nil
	}
	return strings.Split(strings.ReplaceAll(p, "/", `\`), `\`)
}

// Under reports whether path p lies strictly below dir: same drive and
// directories compared as NTFS compares names (its upper-case table, code
// unit by code unit), on a path component boundary (C:\pods-evil is not under
// C:\pods), with / read as \. The directory itself is not under itself.
func Under(dir, p string) bool {
	dir = upper(strings.TrimRight(strings.ReplaceAll(dir, "/", `\`), `\`))
	p = upper(strings.ReplaceAll(p, "/", `\`))
	if len(p) <= len(dir)+1 || p[:len(dir)] != dir || p[len(dir)] != '\\' {
		return false
	}
	return strings.Trim(p[len(dir):], `\`) != ""
}

// AtOrUnder reports p equal to dir or below it.
func AtOrUnder(dir, p string) bool {
	return upper(strings.TrimRight(dir, `\`)) == upper(strings.TrimRight(p, `\`)) || Under(dir, p)
}

// underRule checks a prefix rule; it judges drive-letter absolute paths only
// (the others are PATH-001's and PATH-003's).
func (v *Validator) underRule(rule, field, dir, p string) *Violation {
	if isDriveAbs(p) && !Under(dir, p) {
		return v.fail(rule, field, "%q is not below %q", p, dir)
	}
	return nil
}

// LinkPaths checks the request-only rules of LinkPath / CreateSymlink:
// both paths' syntax, the source below kubelet-csi-plugins-path (LINK-001)
// and the target below kubelet-pod-path (LINK-002).
func (v *Validator) LinkPaths(source, target string) error {
	if err := v.Path("source_path", source); err != nil {
		return err
	}
	if err := v.underRule("LINK-001", "source_path", v.PluginsPath, source); err != nil {
		return err
	}
	if err := v.Path("target_path", target); err != nil {
		return err
	}
	if err := v.underRule("LINK-002", "target_path", v.PodPath, target); err != nil {
		return err
	}
	return nil
}

// Dir checks a path of Mkdir, Rmdir, PathExists, IsSymlink, MountVolume
// and the other path fields: its syntax, and that it lies strictly below
// one of the two kubelet paths (DIR-001).
func (v *Validator) Dir(field, p string) error {
	if err := v.Path(field, p); err != nil {
		return err
	}
	if isDriveAbs(p) && !Under(v.PluginsPath, p) && !Under(v.PodPath, p) {
		if f := v.fail("DIR-001", field, "%q is below neither %q nor %q", p, v.PluginsPath, v.PodPath); f != nil {
			return f
		}
	}
	return nil
}
