package hostmodel

import (
	"strings"
)

// Where a Win32 path leads once the Win32 layer has normalised it.
type Where int

// Places a path can lead.
const (
	// Local is a path on a local drive (C:\...), including one reached
	// through a UNC path to this machine (\\localhost\C$\...).
	Local Where = iota
	// Remote is \\server\share\... on another machine.
	Remote
	// Device is a device or a namespace the file tree does not hold:
	// \\.\NUL, C:\pods\CON (a legacy device name), \\.\pipe\x,
	// \\.\PhysicalDrive0, \\?\GLOBALROOT\..., an unmounted volume.
	Device
)

func (w Where) String() string {
	return [...]string{"local", "remote", "device"}[w]
}

// Name is a Win32 path as the Win32 layer hands it to the object manager:
// where it leads, its root and its components after normalisation.
type Name struct {
	Where Where
	// Root is "C:" for a local path, \\server\share for a remote one, the
	// device path (\\.\NUL) for a device.
	Root string
	// Parts are the components below Root.
	Parts []string
	// Verbatim: a \\?\ path, whose components were not normalised (they
	// may end in dots or spaces, or be a device name, literally).
	Verbatim bool
}

// String is the canonical spelling: C:\a\b, \\server\share\a, \\.\NUL.
func (n Name) String() string {
	if n.Where == Local {
		return n.Root + `\` + strings.Join(n.Parts, `\`)
	}
	if len(n.Parts) == 0 {
		return n.Root
	}
	return n.Root + `\` + strings.Join(n.Parts, `\`)
}

// ServiceCWD is the working directory of a Windows service such as
// csi-proxy: relative paths it is handed resolve below it.
const ServiceCWD = `C:\Windows\System32`

// reservedNames are the legacy DOS device names (Windows before 11 maps a
// final component with any of these base names, extension or not, to the
// device), with the console and clock names.
var reservedNames = func() map[string]bool {
	m := map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true, "CLOCK$": true}
	for _, d := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³"} {
		m["COM"+d], m["LPT"+d] = true, true
	}
	return m
}()

// DeviceName reports whether a path component names a legacy device:
// its base name (before the first '.' or ':', trailing spaces dropped) is
// CON, PRN, AUX, NUL, COM0-9, LPT0-9 (and the superscript digits),
// CONIN$, CONOUT$ or CLOCK$, in any case.
func DeviceName(component string) (string, bool) {
	base := component
	if i := strings.IndexAny(base, ".:"); i >= 0 {
		base = base[:i]
	}
	base = Upper(strings.TrimRight(base, " "))
	return base, reservedNames[base]
}

// isSep reports a Win32 separator; the Win32 layer reads / as \.
func isSep(c byte) bool { return c == '\\' || c == '/' }

// Win32 normalises p the way GetFullPathName and RtlDosPathNameToNtPathName
// do (the rules of "File path formats on Windows systems", learn.microsoft.com):
// the path type is identified (\\?\ and \??\ verbatim, \\.\ device, \\server\share
// UNC, drive-absolute, drive-relative, rooted, relative); a final component
// naming a legacy device makes the path that device; relative forms are
// taken from cwd; / becomes \ and runs of separators collapse; "." and ".."
// are evaluated (never above the root); a component ending in a single
// period loses it; the final component loses its trailing periods and
// spaces. A UNC path to this machine (node.IsLocalHost) with an
// administrative share (C$, ADMIN$) is the local path it shares.
func Win32(p, cwd string, node Node) Name {
	if len(p) >= 4 && (p[0] == '\\' && p[1] == '\\' || p[0] == '\\' && p[1] == '?') && p[2] == '?' && p[3] == '\\' {
		return nt(p[4:], true, node) // \\?\ and the NT namespace's own \??\, untouched
	}
	if len(p) >= 4 && isSep(p[0]) && isSep(p[1]) && (p[2] == '.' || p[2] == '?') && isSep(p[3]) {
		return nt(p[4:], false, node)
	}
	if len(p) >= 2 && isSep(p[0]) && isSep(p[1]) {
		parts := splitSeps(p[2:])
		if len(parts) < 2 {
			return Name{Where: Device, Root: `\\` + strings.Join(parts, `\`)}
		}
		return unc(parts[0], parts[1], streamless(normalise(parts[2:], !endsInSep(p))), node)
	}
	var abs []string // components from the drive root
	drive := "C:"
	switch {
	case len(p) >= 2 && p[1] == ':' && isLetter(p[0]):
		drive = strings.ToUpper(p[:1]) + ":"
		if len(p) == 2 || !isSep(p[2]) { // C:x: relative to the drive's current directory
			abs = cwdParts(cwd, drive)
		}
		p = p[2:]
	case len(p) >= 1 && isSep(p[0]): // \x: rooted on the current drive
		drive = cwdDrive(cwd)
	default:
		drive = cwdDrive(cwd)
		abs = cwdParts(cwd, drive)
	}
	parts := splitSeps(p)
	norm := normalise(append(abs, parts...), !endsInSep(p))
	// A final component naming a legacy device makes the path that device,
	// before or after normalisation (C:\pods\NUL, C:\pods\nul.txt,
	// C:\pods\CON\.).
	for _, list := range [][]string{parts, norm} {
		if n := len(list); n > 0 && !endsInSep(p) {
			if dev, ok := DeviceName(list[n-1]); ok {
				return Name{Where: Device, Root: `\\.\` + dev}
			}
		}
	}
	return Name{Where: Local, Root: drive, Parts: streamless(norm)}
}

// streamless drops the alternate data stream of every component
// (x:stream, x::$DATA, x::$INDEX_ALLOCATION name x itself or its stream:
// NTFS opens x).
func streamless(parts []string) []string {
	for i, p := range parts {
		if j := strings.IndexByte(p, ':'); j > 0 {
			parts[i] = p[:j]
		}
	}
	return parts
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func endsInSep(p string) bool { return p != "" && isSep(p[len(p)-1]) }

// splitSeps splits at separators, dropping empty components (collapsing
// runs of separators).
func splitSeps(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '\\' || r == '/' })
}

func cwdDrive(cwd string) string {
	if len(cwd) >= 2 && cwd[1] == ':' {
		return strings.ToUpper(cwd[:1]) + ":"
	}
	return "C:"
}

// cwdParts is the working directory's components if it is on drive,
// else none (the drive's root).
func cwdParts(cwd, drive string) []string {
	if !strings.EqualFold(cwdDrive(cwd), drive) {
		return nil
	}
	return splitSeps(cwd[2:])
}

// normalise evaluates "." and "..", strips a single trailing period of a
// component, and, if final is set, the trailing periods and spaces of the
// last component.
func normalise(parts []string, final bool) []string {
	var out []string
	for _, c := range parts {
		switch c {
		case ".":
			continue
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		if strings.HasSuffix(c, ".") && !strings.HasSuffix(c, "..") {
			c = c[:len(c)-1]
		}
		out = append(out, c)
	}
	if final && len(out) > 0 {
		last := strings.TrimRight(out[len(out)-1], ". ")
		if last == "" {
			out = out[:len(out)-1]
		} else {
			out[len(out)-1] = last
		}
	}
	return out
}

// nt is the NT namespace below \??\: a drive, UNC\server\share, a volume
// GUID, or a device. The root (the drive, UNC\server\share, the device)
// is never eaten by ".."; below it a \\.\ path is normalised, a \\?\
// path taken literally.
func nt(rest string, verbatim bool, node Node) Name {
	if len(rest) >= 14 && strings.EqualFold(rest[:10], "GLOBALROOT") && isSep(rest[10]) && rest[11:13] == "??" && isSep(rest[13]) {
		return nt(rest[14:], verbatim, node) // the object root's \??\ is \??\ again
	}
	var parts []string
	if verbatim {
		parts = strings.Split(strings.TrimRight(rest, `\`), `\`)
	} else {
		parts = splitSeps(rest)
	}
	if len(parts) == 0 || parts[0] == "" {
		return Name{Where: Device, Root: `\\.\`, Verbatim: verbatim}
	}
	head, below := parts[0], parts[1:]
	isUNC := strings.EqualFold(head, "UNC") && len(parts) >= 3
	if isUNC {
		below = parts[3:]
	}
	if !verbatim {
		below = normalise(below, !endsInSep(rest))
	}
	switch {
	case len(head) == 2 && head[1] == ':' && isLetter(head[0]):
		return Name{Where: Local, Root: strings.ToUpper(head[:1]) + ":", Parts: streamless(below), Verbatim: verbatim}
	case isUNC:
		n := unc(parts[1], parts[2], below, node)
		n.Verbatim = verbatim
		return n
	}
	return Name{Where: Device, Root: `\\.\` + head, Parts: below, Verbatim: verbatim}
}

// unc is \\server\share\parts: local when the server is this machine and
// the share an administrative one.
func unc(server, share string, parts []string, node Node) Name {
	if node.IsLocalHost(server) {
		switch s := Upper(share); {
		case len(s) == 2 && s[1] == '$' && isLetter(s[0]):
			return Name{Where: Local, Root: s[:1] + ":", Parts: parts}
		case s == "ADMIN$":
			return Name{Where: Local, Root: "C:", Parts: append([]string{"Windows"}, parts...)}
		}
		return Name{Where: Device, Root: `\\` + server + `\` + share, Parts: parts}
	}
	return Name{Where: Remote, Root: `\\` + server + `\` + share, Parts: parts}
}
