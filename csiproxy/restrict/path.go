package restrict

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxPathLength is the design's cap (Windows MAX_PATH), counted in UTF-16
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

// Path checks the syntax rules PATH-001..008 of one path field. Each rule
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
	)
}

func (v *Validator) controlChars(field, p string) *Violation {
	if !utf8.ValidString(p) {
		return v.fail("PATH-008", field, "not valid UTF-8")
	}
	for _, r := range p {
		if r < 32 || r == 0x7f {
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

func (v *Validator) unc(field, p string) *Violation {
	if isUNC(p) {
		return v.fail("PATH-003", field, "UNC and device paths (\\\\server\\share, \\\\?\\, \\\\.\\) are not allowed")
	}
	return nil
}

func (v *Validator) absolute(field, p string) *Violation {
	if !isUNC(p) && !isDriveAbs(p) {
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

// stripDevice drops a \\?\ or \\.\ prefix: PATH-003 judges it, the
// character rules judge what follows.
func stripDevice(p string) string {
	if len(p) >= 4 && isSep(p[0]) && isSep(p[1]) && (p[2] == '?' || p[2] == '.') && isSep(p[3]) {
		return p[4:]
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
	if i := strings.IndexAny(stripDevice(p), `|?*<>"`); i >= 0 {
		return v.fail("PATH-006", field, "character %q is not allowed", stripDevice(p)[i])
	}
	return nil
}

// Under reports whether path p lies strictly below dir: same drive and
// directories compared case-insensitively (as Windows does), on a path
// component boundary (C:\pods-evil is not under C:\pods), with / read as \.
// The directory itself is not under itself.
func Under(dir, p string) bool {
	dir = strings.TrimRight(strings.ReplaceAll(dir, "/", `\`), `\`)
	p = strings.ReplaceAll(p, "/", `\`)
	if len(p) <= len(dir)+1 || !strings.EqualFold(p[:len(dir)], dir) || p[len(dir)] != '\\' {
		return false
	}
	return strings.Trim(p[len(dir):], `\`) != ""
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

// Dir checks a path of Mkdir, Rmdir, PathExists, IsSymlink and similar:
// its syntax, and that it lies below one of the two kubelet paths (DIR-001).
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

// Entry is what a host knows of one path.
type Entry struct {
	Exists, IsDir, IsSymlink, Empty bool
}

// LinkState checks the host-state rules of LinkPath: the source does not
// exist (LINK-003); the target is an existing (LINK-004), empty (LINK-005)
// directory that is not a symbolic link (LINK-006).
func (v *Validator) LinkState(source, target Entry) error {
	if source.Exists {
		if f := v.fail("LINK-003", "source_path", "already exists"); f != nil {
			return f
		}
	}
	if target.IsSymlink {
		if f := v.fail("LINK-006", "target_path", "is a symbolic link"); f != nil {
			return f
		}
	} else {
		if !target.Exists || !target.IsDir {
			if f := v.fail("LINK-004", "target_path", "is not an existing directory"); f != nil {
				return f
			}
		} else if !target.Empty {
			if f := v.fail("LINK-005", "target_path", "is not empty"); f != nil {
				return f
			}
		}
	}
	return nil
}
