package hostmodel

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
)

// node is one entry of a file tree: a directory, a file, or a symbolic
// link (a reparse point), possibly with a volume mounted on it.
type node struct {
	name   string // the long name, as created
	short  string // its 8.3 alias; "" when the long name is itself 8.3
	dir    bool
	link   string // a symbolic link's target, as stored; "" if not a link
	mount  string // the volume ID mounted on this directory
	kids   map[string]*node
	parent *node
	// shorts are the children by 8.3 alias; next is the next ~N to try
	// for an alias base.
	shorts map[string]*node
	next   map[string]int
}

func newDir(name string, parent *node) *node {
	return &node{name: name, dir: true, kids: map[string]*node{}, parent: parent}
}

// lookup finds a child by its long name or its 8.3 alias, compared the way
// NTFS compares names (Upper).
func (n *node) lookup(name string) *node {
	k := Upper(name)
	if c := n.kids[k]; c != nil {
		return c
	}
	return n.shorts[k]
}

// add links a new child, giving it an 8.3 alias unique in n.
func (n *node) add(c *node) {
	c.parent = n
	c.short = n.shortName(c.name)
	n.kids[Upper(c.name)] = c
	if c.short != "" {
		if n.shorts == nil {
			n.shorts = map[string]*node{}
		}
		n.shorts[c.short] = c
	}
}

// remove unlinks a child.
func (n *node) remove(c *node) {
	delete(n.kids, Upper(c.name))
	if c.short != "" {
		delete(n.shorts, c.short)
	}
}

// valid83 reports a name that is its own 8.3 name: 1-8 base characters, an
// optional extension of 1-3, no spaces, one dot at most, no characters
// short names exclude.
func valid83(name string) bool {
	base, ext, dot := strings.Cut(name, ".")
	if base == "" || len(base) > 8 || len(ext) > 3 || (dot && ext == "") || strings.Contains(ext, ".") {
		return false
	}
	return !strings.ContainsAny(name, ` +,;=[]`) && strings.IndexFunc(name, func(r rune) bool { return r > 0x7e }) < 0
}

// shortName is the 8.3 alias NTFS would give name in n: the upper-cased
// base (spaces and dots dropped, characters short names exclude made '_')
// cut to 6 characters, ~N with the first N free in n, the extension cut
// to 3.
func (n *node) shortName(name string) string {
	if valid83(name) {
		return ""
	}
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r == ' ' || r == '.':
				return -1
			case strings.ContainsRune("+,;=[]", r) || r > 0x7e:
				return '_'
			}
			return r
		}, Upper(s))
	}
	base, ext := name, ""
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		base, ext = name[:i], name[i+1:]
	}
	base, ext = clean(base), clean(ext)
	if len(base) > 6 {
		base = base[:6]
	}
	if len(ext) > 3 {
		ext = ext[:3]
	}
	if n.next == nil {
		n.next = map[string]int{}
	}
	for i := n.next[base+"."+ext] + 1; ; i++ {
		s := fmt.Sprintf("%s~%d", base, i)
		if ext != "" {
			s += "." + ext
		}
		if n.lookup(s) == nil {
			n.next[base+"."+ext] = i
			return s
		}
	}
}

// path is the node's canonical path: its root and long names.
func (n *node) path() string {
	var parts []string
	x := n
	for ; x.parent != nil; x = x.parent {
		parts = append(parts, x.name)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	if x.name != "" && x.name[0] != '\\' { // a drive
		return x.name + `\` + strings.Join(parts, `\`)
	}
	if len(parts) == 0 {
		return x.name
	}
	return x.name + `\` + strings.Join(parts, `\`)
}

func (n *node) empty() bool { return len(n.kids) == 0 }

// maxLinkHops is how many reparse points one lookup follows before it
// fails, as Windows does (63).
const maxLinkHops = 63

// found is what a lookup found: the entry (nil when the final component
// does not exist), the directory holding it, the final component's name,
// and where the path leads with every link it passed followed.
type found struct {
	node   *node
	parent *node
	last   string
	name   Name
}

// win32 normalises p the way this host's Win32 layer does.
func (h *Host) win32(p string) Name { return Win32(p, ServiceCWD, h.node) }

// find resolves p: every link on the way is followed, and the final
// component's too if follow is set. A missing final component is not an
// error (found.node is nil); a missing directory on the way is, and
// found.name is then still where the path leads: the existing part with
// its links followed, the rest as named.
func (h *Host) find(p string, follow bool) (found, error) {
	if strings.ContainsRune(p, 0) {
		return found{}, errf(codes.InvalidArgument, "%q: invalid argument (NUL in a path)", p)
	}
	n := h.win32(p)
	for hops := 0; ; hops++ {
		if err := validNames(n); err != nil {
			return found{name: n}, errf(codes.InvalidArgument, "%s: %v", p, err)
		}
		if hops > maxLinkHops {
			return found{}, errf(codes.FailedPrecondition, "%s: too many levels of symbolic links", p)
		}
		n = h.volumePath(n)
		root, err := h.root(n)
		if err != nil {
			return found{name: n}, err
		}
		cur, done := root, []string{}
		next := Name{}
		// where the path leads when a component on the way is missing or
		// not a directory: what exists, then the rest as named
		rest := func(i int) found {
			return found{name: Name{Where: n.Where, Root: n.Root, Parts: append(append([]string(nil), done...), n.Parts[i:]...)}}
		}
		for i, part := range n.Parts {
			if !cur.dir {
				return rest(i), errf(codes.FailedPrecondition, "%s: %s is not a directory", p, cur.path())
			}
			c := cur.lookup(part)
			last := i == len(n.Parts)-1
			if c == nil {
				if !last {
					return rest(i), errf(codes.NotFound, "%s: the system cannot find the path specified (%s)", p, cur.path()+`\`+part)
				}
				return found{parent: cur, last: part, name: Name{Where: n.Where, Root: n.Root, Parts: append(done, part)}}, nil
			}
			if c.link != "" && (!last || follow) {
				next = h.linkTarget(cur, c.link, n.Parts[i+1:])
				break
			}
			cur, done = c, append(done, c.name)
		}
		if next.Root == "" {
			var parent *node
			if cur != root {
				parent = cur.parent
			}
			last := ""
			if len(done) > 0 {
				last = done[len(done)-1]
			}
			return found{node: cur, parent: parent, last: last, name: Name{Where: n.Where, Root: n.Root, Parts: done}}, nil
		}
		n = next
	}
}

// invalidInName are the characters Windows refuses in a file name: the
// control characters, and < > " | ? * (wildcards to the Win32 layer).
const invalidInName = "<>\"|?*"

// validNames refuses a name with a component Windows cannot create or open
// ("The filename, directory name, or volume label syntax is incorrect").
func validNames(n Name) error {
	for _, part := range n.Parts {
		if strings.ContainsAny(part, invalidInName) || strings.IndexFunc(part, func(r rune) bool { return r < 0x20 }) >= 0 {
			return fmt.Errorf("the filename, directory name, or volume label syntax is incorrect (%q)", part)
		}
	}
	return nil
}

// linkTarget is where a link in dir leads, with the components after it.
// A relative target is taken from the link's directory.
func (h *Host) linkTarget(dir *node, target string, rest []string) Name {
	t := strings.ReplaceAll(target, "/", `\`)
	abs := strings.HasPrefix(t, `\\`) || (len(t) >= 3 && t[1] == ':' && t[2] == '\\')
	if !abs {
		t = dir.path() + `\` + t
	}
	if len(rest) > 0 {
		t = strings.TrimRight(t, `\`) + `\` + strings.Join(rest, `\`)
	}
	return h.win32(t)
}

// volumePath turns \\?\Volume{...}\x into the path below the volume's
// first mount point; an unmounted volume stays a device.
func (h *Host) volumePath(n Name) Name {
	if n.Where != Device || !strings.HasPrefix(Upper(n.Root), `\\.\VOLUME{`) {
		return n
	}
	v := h.volumes[volumeKey(`\\?\`+n.Root[4:]+`\`)]
	if v == nil || len(v.Mounts) == 0 {
		return n
	}
	m := h.win32(v.Mounts[0])
	return Name{Where: m.Where, Root: m.Root, Parts: append(append([]string(nil), m.Parts...), n.Parts...)}
}

// root is the tree a name lives in: a drive, or a remote share this host
// has a global mapping of (the credentials reach it).
func (h *Host) root(n Name) (*node, error) {
	switch n.Where {
	case Device:
		return nil, errf(codes.FailedPrecondition, "%s is a device, not a file", n)
	case Remote:
		server, share, _ := strings.Cut(strings.TrimPrefix(n.Root, `\\`), `\`)
		if err := h.reach(server, share); err != nil {
			return nil, err
		}
		if h.smb[strings.ToLower(n.Root)] == nil {
			return nil, errf(codes.PermissionDenied, "%s: access is denied (no global mapping)", n.Root)
		}
	}
	r := h.roots[Upper(n.Root)]
	if r == nil {
		return nil, errf(codes.NotFound, "%s: the system cannot find the drive specified", n.Root)
	}
	return r, nil
}

// Entries lists every entry of every tree with what it is, sorted; tests
// and the simulator's dump use it to see side effects.
func (h *Host) Entries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	var walk func(n *node)
	walk = func(n *node) {
		s := n.path()
		switch {
		case n.link != "":
			s += " -> " + n.link
		case n.mount != "":
			s += " [" + n.mount + "]"
		case n.dir:
			s += `\`
		}
		out = append(out, s)
		for _, c := range n.kids {
			walk(c)
		}
	}
	for _, r := range h.roots {
		walk(r)
	}
	sort.Strings(out)
	return out
}
