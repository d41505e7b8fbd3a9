// Package hostmodel is the in-memory Windows host behind the simulated
// csi-proxy: a case-insensitive file tree with directories, symbolic links
// and volume mount points, disks with partitions and volumes, SMB global
// mappings, iSCSI portals, targets and the mutual CHAP secret, and a few
// Windows services. It performs operations; it does not validate requests
// (csiproxy/restrict does, in the server), so a server that skips a
// restriction shows here what the real host would have done: a link in
// C:\Windows, a mapping of an administrative share.
//
// Errors carry a gRPC status code. Every method is safe for concurrent use.
package hostmodel

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// node is one entry of the file tree.
type node struct {
	path  string // as first created, canonical form
	dir   bool
	link  string // symlink target, canonical; "" if not a link
	mount string // volume ID mounted here
}

// Host is the simulated Windows host.
type Host struct {
	mu       sync.Mutex
	fs       map[string]*node // key: lower-cased canonical path
	disks    map[uint32]*Disk
	volumes  map[string]*Volume
	smb      map[string]*SMBMapping
	portals  map[string]Portal
	targets  map[string]*Target
	chap     string
	services map[string]*Service
	serial   string
	nextDisk uint32
}

// Canonical resolves a path the way the Windows object manager would:
// \\?\ and \\.\ prefixes dropped, / read as \, a relative or
// drive-relative path taken from C:\ (the service's working directory),
// "." and ".." resolved, alternate data stream suffixes (":stream")
// dropped, no trailing separator. UNC paths stay UNC.
func Canonical(p string) string {
	p = strings.ReplaceAll(p, "/", `\`)
	for _, pre := range []string{`\\?\`, `\\.\`} {
		p = strings.TrimPrefix(p, pre)
	}
	prefix := ""
	switch {
	case strings.HasPrefix(p, `\\`):
		prefix, p = `\\`, p[2:]
	case len(p) >= 2 && p[1] == ':':
		prefix, p = strings.ToUpper(p[:1])+`:\`, p[2:]
	default:
		prefix = `C:\`
	}
	var out []string
	for _, c := range strings.Split(p, `\`) {
		if i := strings.IndexByte(c, ':'); i >= 0 {
			c = c[:i]
		}
		switch c {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, c)
		}
	}
	return prefix + strings.Join(out, `\`)
}

func key(p string) string { return strings.ToLower(Canonical(p)) }

func parent(canon string) string {
	i := strings.LastIndexByte(canon, '\\')
	if i < 0 {
		return ""
	}
	if i == 2 && canon[1] == ':' {
		return canon[:3]
	}
	return canon[:i]
}

func errf(c codes.Code, format string, args ...any) error {
	return status.Errorf(c, format, args...)
}

// mkdirAll creates p and its parents; the caller holds mu.
func (h *Host) mkdirAll(p string) error {
	c := Canonical(p)
	var chain []string
	for x := c; x != "" && h.fs[strings.ToLower(x)] == nil; x = parent(x) {
		chain = append(chain, x)
		if len(x) <= 3 {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		h.fs[strings.ToLower(chain[i])] = &node{path: chain[i], dir: true}
	}
	if n := h.fs[strings.ToLower(c)]; !n.dir || n.link != "" {
		return errf(codes.FailedPrecondition, "%s exists and is not a directory", c)
	}
	return nil
}

// Mkdir creates a directory and its missing parents; an existing directory
// is not an error.
func (h *Host) Mkdir(p string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mkdirAll(p)
}

func (h *Host) children(k string) []string {
	var out []string
	for ck := range h.fs {
		if parent(ck) == k && ck != k {
			out = append(out, ck)
		}
	}
	sort.Strings(out)
	return out
}

// Rmdir removes a directory (with force, its contents too) or a symbolic
// link (never what it points to).
func (h *Host) Rmdir(p string, force bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := key(p)
	n := h.fs[k]
	if n == nil {
		return errf(codes.NotFound, "%s does not exist", Canonical(p))
	}
	if n.link == "" {
		if n.mount != "" {
			return errf(codes.FailedPrecondition, "%s is a mount point of %s", n.path, n.mount)
		}
		if kids := h.children(k); len(kids) > 0 {
			if !force {
				return errf(codes.FailedPrecondition, "%s is not empty", n.path)
			}
			for _, c := range kids {
				if err := h.removeTree(c); err != nil {
					return err
				}
			}
		}
	}
	delete(h.fs, k)
	return nil
}

func (h *Host) removeTree(k string) error {
	n := h.fs[k]
	if n.mount != "" {
		return errf(codes.FailedPrecondition, "%s is a mount point of %s", n.path, n.mount)
	}
	if n.link == "" {
		for _, c := range h.children(k) {
			if err := h.removeTree(c); err != nil {
				return err
			}
		}
	}
	delete(h.fs, k)
	return nil
}

// Exists reports whether a path exists (a link counts, whatever it points to).
func (h *Host) Exists(p string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fs[key(p)] != nil
}

// IsSymlink reports whether p is a symbolic link.
func (h *Host) IsSymlink(p string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.fs[key(p)]
	if n == nil {
		return false, errf(codes.NotFound, "%s does not exist", Canonical(p))
	}
	return n.link != "", nil
}

// IsMountPoint reports whether p is a link or a volume mount point.
func (h *Host) IsMountPoint(p string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := h.fs[key(p)]
	if n == nil {
		return false, errf(codes.NotFound, "%s does not exist", Canonical(p))
	}
	return n.link != "" || n.mount != "", nil
}

// Stat is what restrict.LinkState needs to know of a path.
func (h *Host) Stat(p string) (exists, isDir, isSymlink, empty bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := key(p)
	n := h.fs[k]
	if n == nil {
		return false, false, false, false
	}
	return true, n.dir, n.link != "", len(h.children(k)) == 0 && n.mount == ""
}

// Link creates a directory symbolic link at source pointing to target.
func (h *Host) Link(source, target string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := Canonical(source)
	if h.fs[strings.ToLower(s)] != nil {
		return errf(codes.AlreadyExists, "%s exists", s)
	}
	if p := h.fs[strings.ToLower(parent(s))]; p == nil || !p.dir {
		return errf(codes.NotFound, "parent of %s does not exist", s)
	}
	h.fs[strings.ToLower(s)] = &node{path: s, dir: true, link: Canonical(target)}
	return nil
}

// Entries lists every path of the file tree with what it is, sorted; tests
// and the simulator's dump use it to see side effects.
func (h *Host) Entries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, n := range h.fs {
		s := n.path
		switch {
		case n.link != "":
			s += " -> " + n.link
		case n.mount != "":
			s += " [" + n.mount + "]"
		case n.dir:
			s += `\`
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func (n *node) String() string { return fmt.Sprintf("%s link=%q mount=%q", n.path, n.link, n.mount) }
