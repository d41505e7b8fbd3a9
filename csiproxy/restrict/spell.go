package restrict

import (
	"fmt"
	"net/netip"
	"strings"
	"unicode"
)

// The spellings a Draw draws from: every way Windows takes one name or
// address, so that a host that checks one spelling, or the suite's last
// run's, is caught by another.

// caseOf spells s with each letter's case drawn (NTFS-equal to s), at
// least one letter changed when s has one.
func (d *Draw) caseOf(s string) string {
	rs := []rune(s)
	var letters []int
	for i, r := range rs {
		if unicode.ToUpper(r) != unicode.ToLower(r) && r < 0x80 {
			letters = append(letters, i)
			if d.rnd.IntN(2) == 0 {
				rs[i] = flipCase(r)
			}
		}
	}
	if len(letters) > 0 && string(rs) == s {
		i := letters[d.rnd.IntN(len(letters))]
		rs[i] = flipCase(rs[i])
	}
	return string(rs)
}

func flipCase(r rune) rune {
	if unicode.IsUpper(r) {
		return unicode.ToLower(r)
	}
	return unicode.ToUpper(r)
}

// slashes replaces one or more separators of p after its drive with '/'.
func (d *Draw) slashes(p string) string {
	b := []byte(p)
	changed := false
	for i := 3; i < len(b); i++ {
		if b[i] == '\\' && d.rnd.IntN(2) == 0 {
			b[i], changed = '/', true
		}
	}
	if !changed && len(b) > 2 && b[2] == '\\' {
		b[2] = '/'
	}
	return string(b)
}

// foldTwins are, for the ASCII letters that have them, the characters
// Unicode's case mappings equate with the letter and NTFS does not: a
// directory spelled with one is another directory on NTFS.
var foldTwins = func() map[rune][]rune {
	m := map[rune][]rune{}
	for r := rune(0x80); r <= 0xFFFF; r++ {
		for _, c := range []rune{unicode.ToLower(unicode.ToUpper(r)), unicode.ToLower(r)} {
			if c < 0x80 && unicode.IsLetter(c) && UpperNTFS(r) != UpperNTFS(c) {
				m[c] = append(m[c], r)
				break
			}
		}
	}
	return m
}()

// folded spells p with one letter of a component below the drive replaced
// by a fold twin (C:\var\lıb\kubelet\pods); p itself when it has no letter
// with a twin.
func (d *Draw) folded(p string) string {
	rs := []rune(p)
	var at []int
	for i := 3; i < len(rs); i++ {
		if len(foldTwins[unicode.ToLower(rs[i])]) > 0 {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return p
	}
	i := at[d.rnd.IntN(len(at))]
	twins := foldTwins[unicode.ToLower(rs[i])]
	rs[i] = twins[d.rnd.IntN(len(twins))]
	return string(rs)
}

// widened spells p with one ASCII letter below the drive in its full-width
// form, which NTFS holds to be another character.
func (d *Draw) widened(p string) string {
	rs := []rune(p)
	var at []int
	for i := 3; i < len(rs); i++ {
		if rs[i] < 0x80 && unicode.IsLetter(rs[i]) {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return p
	}
	i := at[d.rnd.IntN(len(at))]
	rs[i] += 0xFF21 - 'A'
	return string(rs)
}

// windowsDirs are directories of every Windows node, outside the kubelet
// directories.
var windowsDirs = []string{
	`C:\Windows`, `C:\Windows\System32`, `C:\Windows\Temp`, `C:\Windows\System32\config`,
	`C:\Windows\System32\drivers\etc`, `C:\Windows\SysWOW64`, `C:\Program Files`, `C:\ProgramData`,
	`C:\Users\Public`, `C:\Users\Default`, `C:\etc\kubernetes`, `C:\var\log`, `C:\var\lib`,
}

// outside draws a directory outside the kubelet directories: one every
// Windows node has, or a fresh one on any drive.
func (d *Draw) outside() string {
	if d.rnd.IntN(4) == 0 {
		return fmt.Sprintf(`%c:\%s`, 'A'+d.rnd.IntN(26), d.Name())
	}
	return d.caseOf(windowsDirs[d.rnd.IntN(len(windowsDirs))])
}

// stream draws an alternate data stream suffix, of each form by class.
func (d *Draw) stream() string {
	switch d.stratum("{stream}") {
	case 0:
		return ":" + d.Name()
	case 1:
		return d.caseOf("::$DATA")
	case 2:
		return d.caseOf("::$INDEX_ALLOCATION")
	}
	return ":" + d.Name() + d.caseOf(":$DATA")
}

// devices are the legacy device names Win32 maps a final component to.
var devices = []string{"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
	"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9", "COM¹", "COM²", "COM³",
	"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "LPT¹", "LPT²", "LPT³"}

// device draws a device name in any case, with or without an extension
// (and spaces before it), as Win32 reads them.
func (d *Draw) device() string {
	n := d.caseOf(devices[d.rnd.IntN(len(devices))])
	if d.rnd.IntN(2) == 0 {
		n += strings.Repeat(" ", d.rnd.IntN(3)) + "." + d.from("abcdefghijklmnopqrstuvwxyz", 1+d.rnd.IntN(3))
	}
	return n
}

// short draws a component with the shape of an 8.3 alias: of a fresh
// name, of the escape link, of a kubelet directory's component.
func (d *Draw) short() string {
	base := strings.ToUpper(d.Name())
	switch d.rnd.IntN(3) {
	case 0:
		if d.Escape != "" {
			base = strings.ToUpper(d.Escape)
		}
	case 1:
		parts := strings.Split(d.Plugins, `\`)
		base = strings.ToUpper(parts[1+d.rnd.IntN(len(parts)-1)])
	}
	base = strings.Map(func(r rune) rune {
		if r == '.' || r == ' ' || r == '-' || r == '_' {
			return -1
		}
		return r
	}, base)
	if len(base) > 6 {
		base = base[:6]
	}
	s := fmt.Sprintf("%s~%d", base, 1+d.rnd.IntN(12))
	if d.rnd.IntN(2) == 0 {
		s += "." + strings.ToUpper(d.from("abcdefghijklmnopqrstuvwxyz", 1+d.rnd.IntN(3)))
	}
	return d.caseOf(s)
}

// volumeSpelling draws another spelling of a volume GUID path: either
// prefix, with or without the final separator, hex digits in any case.
func (d *Draw) volumeSpelling(id string) string {
	m := volumeIDRE.FindStringSubmatch(id)
	if m == nil {
		return id
	}
	return `\\` + pick(d, "?", ".") + `\Volume{` + d.caseOf(m[1]) + `}` + pick(d, `\`, "")
}

// local draws a spelling of this machine, of each class by class:
// localhost or a name below it, a loopback or unspecified IPv4 address, an
// IPv6 one, each of its names (and the first label of each), each of its
// addresses; in any case, full-width, with a final dot, addresses in any
// form inet_addr reads or as ipv6-literal.net names.
func (d *Draw) local() string { return d.localClasses()[d.stratum("{local}")]() }

// localClasses are the classes of spellings of this machine a host may
// know some of: one per name and per address it has.
func (d *Draw) localClasses() []func() string {
	out := []func() string{
		func() string { return d.nameSpelling(pick(d, "localhost", d.label()+".localhost")) },
		func() string { return d.inet(loopbackAddr(d)) },
		func() string { return d.address(pick6(d)) },
	}
	seen := map[string]bool{}
	for _, n := range d.NodeNames {
		short, _, _ := strings.Cut(n, ".")
		for _, name := range []string{n, short} {
			if k := strings.ToLower(name); !seen[k] {
				seen[k] = true
				out = append(out, func() string { return d.nameSpelling(name) })
			}
		}
	}
	for _, s := range d.NodeAddresses {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, func() string { return d.address(a) })
		}
	}
	return out
}

// otherDrive spells dir on a drive drawn other than its own.
func (d *Draw) otherDrive(dir string) string {
	for {
		c := byte('A' + d.rnd.IntN(26))
		if c != dir[0]&^0x20 {
			return d.caseOf(string(c) + dir[1:])
		}
	}
}

// devicePrefixes are the spellings of the Win32 device namespaces: the
// two the KEP names, the NT object manager's \??\ (which Win32 passes
// through untouched), and the object root's way to the same drives.
var devicePrefixes = []string{`\\?\`, `\\.\`, `\??\`, `\\?\GLOBALROOT\??\`, `\\.\GLOBALROOT\??\`}

// nearServices are, for each service of the default allow-list, the
// Windows services that share the longest start with it (LanmanServer
// for LanmanWorkstation).
var nearServices = func() map[string][]string {
	m := map[string][]string{}
	for _, a := range DefaultServices {
		best := 0
		for _, s := range windowsServices {
			n := commonPrefix(strings.ToLower(a), strings.ToLower(s))
			switch {
			case n > best:
				best, m[a] = n, []string{s}
			case n == best && n > 0:
				m[a] = append(m[a], s)
			}
		}
	}
	return m
}()

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// nearService draws a name near a service of the allow-list, of each
// class by class: a proper start of it, it with more after it, a Windows
// service that shares its longest start, it with one letter changed.
func (d *Draw) nearService(class int) string {
	a := DefaultServices[d.rnd.IntN(len(DefaultServices))]
	switch class {
	case 0:
		return d.caseOf(a[:3+d.rnd.IntN(len(a)-3)])
	case 1:
		return d.caseOf(a + d.from("abcdefghijklmnopqrstuvwxyz0123456789", 1+d.rnd.IntN(4)))
	case 2:
		near := nearServices[a]
		return d.caseOf(near[d.rnd.IntN(len(near))])
	}
	b := []byte(a)
	i := d.rnd.IntN(len(b))
	for c := b[i] | 0x20; c == b[i]|0x20; {
		b[i] = byte('a' + d.rnd.IntN(26))
	}
	return d.caseOf(string(b))
}

// nameSpelling draws a spelling a resolver takes to the same name: letters
// in any case, some full-width, a final dot.
func (d *Draw) nameSpelling(n string) string {
	rs := []rune(d.caseOf(n))
	wide := d.rnd.IntN(3) == 0
	for i, r := range rs {
		if wide && r < 0x7f && r > ' ' && d.rnd.IntN(2) == 0 {
			rs[i] = r + 0xFF01 - '!'
		}
	}
	s := string(rs)
	if d.rnd.IntN(4) == 0 {
		s += "."
	}
	return s
}

// loopbackAddr draws 127.0.0.1, another address of 127.0.0.0/8, or the
// unspecified address.
func loopbackAddr(d *Draw) netip.Addr {
	switch d.rnd.IntN(4) {
	case 0, 1:
		return netip.AddrFrom4([4]byte{127, 0, 0, 1})
	case 2:
		return netip.AddrFrom4([4]byte{127, byte(d.rnd.IntN(256)), byte(d.rnd.IntN(256)), byte(1 + d.rnd.IntN(254))})
	}
	return netip.AddrFrom4([4]byte{})
}

// pick6 draws ::1, :: or ::ffff:127.0.0.1.
func pick6(d *Draw) netip.Addr {
	return netip.MustParseAddr(pick(d, "::1", "::1", "::", "::ffff:127.0.0.1", "::ffff:7f00:1"))
}

// address spells an address the way a UNC server name can: IPv4 in an
// inet_addr form, IPv6 as an ipv6-literal.net name.
func (d *Draw) address(a netip.Addr) string {
	if a.Is4() {
		return d.inet(a)
	}
	s := strings.ReplaceAll(a.StringExpanded(), ":", "-")
	if d.rnd.IntN(2) == 0 {
		s = strings.ReplaceAll(a.String(), ":", "-")
	}
	return d.caseOf(s + ".ipv6-literal.net")
}

// inet spells an IPv4 address in one of the forms inet_addr reads:
// dotted decimal, octal or hex parts, three, two or one part, a decimal,
// octal or hex number.
func (d *Draw) inet(a netip.Addr) string {
	b := a.As4()
	n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	part := func(v uint32) string {
		switch d.rnd.IntN(3) {
		case 0:
			return fmt.Sprint(v)
		case 1:
			return fmt.Sprintf("0%o", v)
		}
		return d.caseOf(fmt.Sprintf("0x%x", v))
	}
	switch d.rnd.IntN(5) {
	case 0:
		return fmt.Sprintf("%d.%d.%d.%d", b[0], b[1], b[2], b[3])
	case 1:
		return part(uint32(b[0])) + "." + part(uint32(b[1])) + "." + part(uint32(b[2])) + "." + part(uint32(b[3]))
	case 2:
		return part(uint32(b[0])) + "." + part(uint32(b[1])) + "." + part(n&0xFFFF)
	case 3:
		return part(uint32(b[0])) + "." + part(n&0xFFFFFF)
	}
	return part(n)
}
