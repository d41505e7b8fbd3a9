// Package hostmodel is an in-memory Windows host: file trees with
// directories, files, symbolic links and volume mount points, reached
// through the Win32 path rules (normalisation, legacy device names, 8.3
// aliases, case-insensitive names, UNC to this machine, links followed to
// their final target); disks with partitions and volumes; SMB global
// mappings of the shares of simulated file servers; iSCSI portals, targets
// and the mutual CHAP secret; Windows services; and a PowerShell that
// records every command line it is given and runs only the injection
// canaries it finds in them.
//
// It performs operations the way the Windows calls csi-proxy makes behave
// (os.MkdirAll, os.Remove, os.Symlink, the storage cmdlets); it does not
// validate requests (csiproxy/restrict does, in a server), so a server that
// skips a check shows here what the real host would have done.
//
// Errors carry a gRPC status code. Every method is safe for concurrent use.
package hostmodel

import (
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Host is the simulated Windows host.
type Host struct {
	mu       sync.Mutex
	roots    map[string]*node // drives ("C:") and remote shares (\\SERVER\SHARE), by Upper
	node     Node             // this machine's names and addresses, for UNC paths to itself
	disks    map[uint32]*Disk
	volumes  map[string]*Volume
	smb      map[string]*SMBMapping // by lower-cased \\server\share
	servers  map[string][]string    // reachable SMB servers (lower-case) and their shares
	portals  map[string]Portal
	arrays   map[string]bool // reachable iSCSI portal addresses (lower-case)
	targets  map[string]*Target
	chap     string
	services map[string]*Service
	serial   string
	nextDisk uint32
	commands []Command
	canaries []string
}

func errf(c codes.Code, format string, args ...any) error {
	return status.Errorf(c, format, args...)
}

// Info is what Lstat and Stat report of a path.
type Info struct {
	// Path is the entry's canonical path (links before it followed).
	Path      string
	Dir, Link bool
	Device    bool
	Target    string // a link's target as stored
	Mount     string // the volume mounted here
	Empty     bool
	Where     Where
}

func info(f found) Info {
	n := f.node
	return Info{Path: n.path(), Dir: n.dir, Link: n.link != "", Target: n.link, Mount: n.mount, Empty: n.empty() && n.mount == "", Where: f.name.Where}
}

// stat is Lstat (follow false) or Stat (follow true); the caller holds mu.
func (h *Host) stat(p string, follow bool) (Info, error) {
	f, err := h.find(p, follow)
	if err != nil {
		if f.name.Where == Device && status.Code(err) == codes.FailedPrecondition {
			return Info{Path: f.name.String(), Device: true, Where: Device}, nil
		}
		return Info{}, err
	}
	if f.node == nil {
		return Info{}, errf(codes.NotFound, "%s: the system cannot find the file specified", p)
	}
	return info(f), nil
}

// Lstat describes p without following a link in its final component (as
// os.Lstat). A device (C:\pods\NUL) exists and is not a directory.
func (h *Host) Lstat(p string) (Info, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stat(p, false)
}

// Stat describes what p leads to, every link followed (as os.Stat).
func (h *Host) Stat(p string) (Info, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stat(p, true)
}

// Resolve is where p leads with every link on the way followed, and the
// final component's link too if follow is set: the question a host asks
// before acting on a path a client named. Where part of the path does not
// exist (or a file stands on the way), the error says so and the Name is
// still where the path leads: what exists, its links followed, then the
// rest as named (Root is empty when not even that is known).
func (h *Host) Resolve(p string, follow bool) (Name, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.find(p, follow)
	if err != nil && f.name.Where == Device {
		return f.name, nil
	}
	return f.name, err
}

// MkdirAll creates p and every missing parent (as os.MkdirAll): an
// existing directory, or a link to one, is not an error; an existing file
// is.
func (h *Host) MkdirAll(p string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mkdirAll(p)
}

func (h *Host) mkdirAll(p string) error {
	err := h.mkdir(p)
	if status.Code(err) != codes.NotFound {
		return err
	}
	if f, _ := h.find(p, true); f.name.Where == Device {
		return err
	}
	n := h.win32(p)
	if len(n.Parts) == 0 {
		return errf(codes.NotFound, "%s: the system cannot find the drive specified", p)
	}
	parent := Name{Where: n.Where, Root: n.Root, Parts: n.Parts[:len(n.Parts)-1]}
	if err := h.mkdirAll(parent.String()); err != nil {
		return err
	}
	// once: a parent Windows names differently (a middle component with a
	// trailing space is not the directory made for it) fails as it does
	// in Windows rather than looping
	return h.mkdir(n.String())
}

// mkdir makes p's final component (os.Mkdir, but an existing directory is
// not an error).
func (h *Host) mkdir(p string) error {
	f, err := h.find(p, true)
	switch {
	case err != nil:
		return err
	case f.node == nil:
		return h.create(f, newDir(f.last, nil))
	case !f.node.dir:
		return errf(codes.FailedPrecondition, "%s: exists and is not a directory", p)
	}
	return nil
}

// create adds c as f's missing final component.
func (h *Host) create(f found, c *node) error {
	if f.parent == nil || !f.parent.dir {
		return errf(codes.NotFound, "%s: the parent directory does not exist", f.name)
	}
	c.name = f.last
	f.parent.add(c)
	return nil
}

// CreateFile creates an empty file (tests use it to fill directories).
func (h *Host) CreateFile(p string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.createFile(p)
}

func (h *Host) createFile(p string) error {
	f, err := h.find(p, true)
	if err != nil {
		return err
	}
	if f.node != nil {
		return errf(codes.AlreadyExists, "%s: exists", p)
	}
	return h.create(f, &node{kids: map[string]*node{}})
}

// Remove deletes one entry (as os.Remove on Windows: DeleteFile, then
// RemoveDirectory): a file, an empty directory, or a link (never what it
// points to). A directory with a volume mounted is refused.
func (h *Host) Remove(p string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.find(p, false)
	if err != nil {
		return err
	}
	switch n := f.node; {
	case n == nil:
		return errf(codes.NotFound, "%s: the system cannot find the file specified", p)
	case n.parent == nil:
		return errf(codes.FailedPrecondition, "%s: is the root of %s", p, n.name)
	case n.mount != "":
		return errf(codes.FailedPrecondition, "%s: a volume (%s) is mounted here", n.path(), n.mount)
	case n.link == "" && !n.empty():
		return errf(codes.FailedPrecondition, "%s: the directory is not empty", n.path())
	default:
		n.parent.remove(n)
		return nil
	}
}

// RemoveAll deletes p and everything below it (as os.RemoveAll of Go 1.20,
// csi-proxy v1.1.3's build): a missing path is not an error, a link is
// removed and never followed, and a mounted volume stops the walk with an
// error. A path ending in a separator and "." is refused before anything
// (Go's endsWithDot: rmdir cannot remove "."), so pods\. removes nothing;
// pods\.\ and pods\  are the pod directory to Windows, and go.
func (h *Host) RemoveAll(p string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p == "." || len(p) >= 2 && p[len(p)-1] == '.' && isSep(p[len(p)-2]) {
		return errf(codes.InvalidArgument, "RemoveAll %s: invalid argument", p)
	}
	f, err := h.find(p, false)
	if err != nil {
		if status.Code(err) == codes.NotFound {
			return nil
		}
		return err
	}
	if f.node == nil {
		return nil
	}
	if f.node.parent == nil {
		return h.removeBelow(f.node)
	}
	return h.removeTree(f.node)
}

// RemoveContents deletes everything inside the directory p leads to
// (RmdirContents: the directory is opened, so a link to it is followed).
func (h *Host) RemoveContents(p string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.find(p, true)
	if err != nil {
		return err
	}
	if f.node == nil || !f.node.dir {
		return errf(codes.NotFound, "%s: not a directory", p)
	}
	return h.removeBelow(f.node)
}

func (h *Host) removeTree(n *node) error {
	if n.mount != "" {
		return errf(codes.FailedPrecondition, "%s: a volume (%s) is mounted here", n.path(), n.mount)
	}
	if n.link == "" {
		if err := h.removeBelow(n); err != nil {
			return err
		}
	}
	n.parent.remove(n)
	return nil
}

func (h *Host) removeBelow(n *node) error {
	for _, c := range n.kids {
		if err := h.removeTree(c); err != nil {
			return err
		}
	}
	return nil
}

// Symlink creates newname as a symbolic link to oldname (as os.Symlink on
// Windows): newname must not exist and its directory must; oldname is
// stored as given ('/' read as '\'), need not exist, and a relative one is
// taken from newname's directory when followed.
func (h *Host) Symlink(oldname, newname string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.symlink(oldname, newname)
}

func (h *Host) symlink(oldname, newname string) error {
	f, err := h.find(newname, false)
	if err != nil {
		return err
	}
	if f.node != nil {
		return errf(codes.AlreadyExists, "%s: cannot create a file when that file already exists", newname)
	}
	target := strings.ReplaceAll(oldname, "/", `\`)
	dir := false
	if t, err := h.find(h.linkTarget(f.parent, target, nil).String(), true); err == nil && t.node != nil {
		dir = t.node.dir
	}
	return h.create(f, &node{dir: dir, link: target, kids: map[string]*node{}})
}

// Exists reports whether p names an entry (a link counts, whatever it
// points to; as os.Lstat).
func (h *Host) Exists(p string) bool {
	_, err := h.Lstat(p)
	return err == nil
}
