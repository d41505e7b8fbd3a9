package restrict

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"unicode"
)

// Place is what a run's probes are drawn against: the host's directories,
// links, disks, share, portal, names and addresses.
type Place struct {
	Plugins, Pods string
	// Escape is the name of a symbolic link below both kubelet
	// directories that leads outside them.
	Escape              string
	OSDisk, OSVolume    string
	SMBServer, SMBShare string
	Portal              string
	// NodeNames are this machine's names (short and fully qualified);
	// NodeAddresses its IP addresses.
	NodeNames, NodeAddresses []string
}

// Draw is one run's seeded source of probe values: every placeholder of a
// case's template is drawn from it, so a run is replayed by its seed, and
// no run shares a name, a letter case or a spelling with another by
// design. Not safe for concurrent use.
type Draw struct {
	Place
	rnd    *rand.Rand
	issued map[string]bool
	// class is the class the stratified placeholders of the value being
	// spelled take (modulo their number of classes).
	class int
}

// NewDraw returns the source of a run's probes.
func NewDraw(seed uint64, p Place) *Draw {
	return &Draw{Place: p, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), issued: map[string]bool{}}
}

// Probe is one drawn case: its value (and port), and the fresh name it
// names ({s}).
type Probe struct {
	Case  Case
	Kind  Kind
	Value string
	Port  uint32
	Fresh string
}

// Probe draws a value of case c for a field of kind k, each stratified
// placeholder in a class drawn.
func (d *Draw) Probe(c Case, k Kind) Probe { return d.ProbeAt(c, k, d.rnd.IntN(1<<30)) }

// Classes is how many classes the stratified placeholders of a case's
// template draw from (the most of any; 1 when it has none): probes of the
// case at Classes consecutive class numbers (ProbeAt) take every class of
// each, so a host that checks one spelling, one position or one unit is
// met by the others on every run, not by chance.
func (d *Draw) Classes(c Case) int {
	n := 1
	for _, ph := range placeholder.FindAllString(c.Value, -1) {
		n = max(n, d.classesOf(ph))
	}
	return n
}

// Start is a drawn first class number for a case's consecutive probes.
func (d *Draw) Start() int { return d.rnd.IntN(1 << 20) }

// IntN is a drawn number in [0, n), for the suite's own choices (which
// probes it paces, pairs or sends under load).
func (d *Draw) IntN(n int) int { return d.rnd.IntN(n) }

// ProbeAt draws a value of case c for a field of kind k whose stratified
// placeholders take class number class (modulo their number of classes).
func (d *Draw) ProbeAt(c Case, k Kind, class int) Probe {
	d.class = class
	fresh := d.Name()
	p := Probe{Case: c, Kind: k, Value: d.Spell(c.Value, k, fresh), Port: c.Port, Fresh: fresh}
	if c.Port == PortAbove {
		p.Port = 65536 + d.rnd.Uint32N(^uint32(0)-65536)
	}
	return p
}

// Name is a fresh name no earlier draw of the run handed out: 8 to 15
// letters, digits, '-' and '_', a letter first; never a device name, an
// 8.3 alias or a word the suite repeats.
func (d *Draw) Name() string {
	const first = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const rest = first + "0123456789-_"
	for {
		b := []byte{first[d.rnd.IntN(len(first))]}
		for n := 7 + d.rnd.IntN(8); len(b) < n; {
			b = append(b, rest[d.rnd.IntN(len(rest))])
		}
		if c := b[len(b)-1]; c == '-' || c == '_' {
			continue
		}
		if s := string(b); !d.issued[s] {
			d.issued[s] = true
			return s
		}
	}
}

// letterRanges are letters of many scripts: Latin, Greek, Cyrillic,
// Armenian, Hebrew, CJK, Hangul.
var letterRanges = [][2]rune{{0x00C0, 0x017F}, {0x0391, 0x03C9}, {0x0410, 0x044F}, {0x0531, 0x0556}, {0x05D0, 0x05EA}, {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3}}

// wordName is a fresh name of 6 to 12 letters of many scripts: a value
// that holds nothing another run's values hold. It counts as issued.
func (d *Draw) wordName() string {
	var b strings.Builder
	defer func() { d.issued[b.String()] = true }()
	for n := 6 + d.rnd.IntN(7); n > 0; {
		r := letterRanges[d.rnd.IntN(len(letterRanges))]
		c := r[0] + rune(d.rnd.IntN(int(r[1]-r[0]+1)))
		// a letter a resolver's mapping keeps a letter (not Ŀ: l·)
		if m := lookupKey(string(c)); unicode.IsLetter(c) && m != "" && strings.IndexFunc(m, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
			b.WriteRune(c)
			n--
		}
	}
	return b.String()
}

// label is a fresh DNS label: lower-case letters and digits.
func (d *Draw) label() string {
	return d.from("abcdefghijklmnopqrstuvwxyz", 1) + d.from("abcdefghijklmnopqrstuvwxyz0123456789", 4+d.rnd.IntN(8))
}

// Issued reports whether p names an entry the run's draws named: it holds
// a fresh name this Draw handed out. The suite deletes nothing else.
func (d *Draw) Issued(p string) bool {
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return strings.ContainsRune(`\/:. `, r) }) {
		if d.issued[part] {
			return true
		}
	}
	return false
}

// placeholder is {name} in a template.
var placeholder = regexp.MustCompile(`\{[a-z0-9]+\}`)

// Spell draws a template for a field of kind k, fresh being its {s}.
// Unknown placeholders panic: the table and this file are one.
func (d *Draw) Spell(template string, k Kind, fresh string) string {
	dir, other := d.Pods, d.Plugins
	if k == KindLinkSource {
		dir, other = d.Plugins, d.Pods
	}
	second := ""
	t := func() string {
		if second == "" {
			second = d.Name()
		}
		return second
	}
	out := placeholder.ReplaceAllStringFunc(template, func(ph string) string {
		switch ph {
		case "{pad}":
			return ph // filled last, once the length of the rest is known
		case "{s}":
			return fresh
		case "{t}":
			return t()
		case "{u}":
			return d.wordName()
		}
		return d.spell(ph, dir, other)
	})
	if strings.Contains(out, "{pad}") {
		out = strings.Replace(out, "{pad}", d.pad(utf16Units(strings.Replace(out, "{pad}", "", 1)), d.stratum("{pad}") == 1), 1)
	}
	return out
}

// stratified are the placeholders drawn by class (Classes), and how many
// classes each has.
func (d *Draw) classesOf(ph string) int {
	switch ph {
	case "{local}":
		return len(d.localClasses())
	case "{devprefix}":
		return len(devicePrefixes)
	case "{stream}", "{nearservice}":
		return 4
	case "{below}", "{pad}", "{chaplong}":
		return 2
	}
	return 1
}

// stratum is the class a stratified placeholder takes in the value being
// spelled.
func (d *Draw) stratum(ph string) int { return d.class % d.classesOf(ph) }

// spell draws one placeholder other than {s}, {t} and {pad}.
func (d *Draw) spell(ph, dir, other string) string {
	switch ph {
	case "{dir}":
		return d.caseOf(dir)
	case "{other}":
		return d.caseOf(other)
	case "{kubelet}":
		return d.caseOf(parentOf(d.Plugins, d.Pods))
	case "{dirrel}":
		return d.caseOf(dropDrive(dir))
	case "{dirnodrive}":
		return d.caseOf(dropLetter(dir))
	case "{dirslash}":
		return d.slashes(d.caseOf(dir))
	case "{dirdrive}":
		return d.otherDrive(dir)
	case "{dirdriverel}":
		return d.caseOf(dir[:2] + dropLetter(dir)[1:])
	case "{devprefix}":
		return d.caseOf(devicePrefixes[d.stratum(ph)])
	case "{below}":
		if d.stratum(ph) == 0 {
			return ""
		}
		below := `\` + d.Name()
		if d.rnd.IntN(2) == 0 {
			below += `\` + d.Name()
		}
		return below
	case "{escape}":
		return d.caseOf(dir) + `\` + d.caseOf(d.Escape)
	case "{fold}":
		return d.folded(dir)
	case "{wide}":
		return d.widened(dir)
	case "{outside}":
		return d.outside()
	case "{outsiderel}":
		return dropLetter(d.outside())
	case "{up}":
		return strings.Repeat(`\..`, strings.Count(dir, `\`)+d.rnd.IntN(3))
	case "{beside}":
		return pick(d, "-", ".", "_", "", " ") + d.Name()
	case "{sep}":
		return pick(d, "", `\`)
	case "{dots}":
		return pick(d, `.`, `.\`, `.\.\`, `.\.`)
	case "{blank}":
		return pick(d, ` `, `. `, `  `, ` .`)
	case "{trail}":
		return pick(d, ".", " ", ". ", " .", "  ")
	case "{stream}":
		return d.stream()
	case "{wild}":
		return pick(d, "|", "?", "*")
	case "{angle}":
		return pick(d, "<", ">", `"`)
	case "{ctl}":
		return string(rune(d.rnd.IntN(32)))
	case "{dev}":
		return d.device()
	case "{devlike}":
		return d.caseOf(pick(d, "CONSOLE", "NULL", "AUXILIARY", "COM10", "LPT10", "PRN2", "CONIN", "COM", "CLOCK", "NULL.txt"))
	case "{short}":
		return d.short()
	case "{drive}":
		return string(rune('A' + d.rnd.IntN(26)))
	case "{digit}":
		return fmt.Sprint(1 + d.rnd.IntN(9))
	case "{dirshare}":
		return d.caseOf(dir[:1] + "$")
	case "{admin}":
		return d.caseOf(pick(d, dir[:1]+"$", string(rune('a'+d.rnd.IntN(26)))+"$", "ADMIN$", "IPC$"))
	case "{local}":
		return d.local()
	case "{loopback}":
		return d.inet(loopbackAddr(d))
	case "{ipv4}":
		return fmt.Sprintf("%d.%d.%d.%d", pickInt(d, 192, 198, 203), pickInt(d, 0, 51, 18), pickInt(d, 2, 100, 113, 19), 1+d.rnd.IntN(254))
	case "{ipv6lit}":
		return fmt.Sprintf("2001-db8-%x--%x.ipv6-literal.net", d.rnd.IntN(0xffff), 1+d.rnd.IntN(0xfffe))
	case "{smbserver}":
		return d.caseOf(d.SMBServer)
	case "{smbshare}":
		return d.caseOf(d.SMBShare)
	case "{smbchar}":
		return pick(d, "+", "[", "]", `"`, ";", "|", "<", ">", ",", "?", "*", "=", "$")
	case "{badhost}":
		return d.Name() + pick(d, "_", "!", "~", "#", "%", "&", "'", "(", "@", "^", "`") + d.Name()
	case "{pipe}":
		return d.caseOf(PipeBase(Groups[d.rnd.IntN(len(Groups))], pick(d, "v1", "v1beta1", "v2alpha1", "v1alpha2")))
	case "{portal}":
		return d.Portal
	case "{osdisk}":
		return d.OSDisk
	case "{osvolume}":
		return d.volumeSpelling(d.OSVolume)
	case "{guid}":
		return d.guid()
	case "{iqn}", "{eui}", "{naa}":
		return d.caseOf(ph[1:4] + ".")
	case "{year}":
		return fmt.Sprint(1990 + d.rnd.IntN(40))
	case "{month}":
		return fmt.Sprintf("%02d", 1+d.rnd.IntN(12))
	case "{authority}":
		return pick(d, "com", "org", "io", "net", "de") + "." + d.label()
	case "{hex15}", "{hex16}", "{hex24}", "{hex32}":
		return d.hex(map[string]int{"{hex15}": 15, "{hex16}": 16, "{hex24}": 24, "{hex32}": 32}[ph])
	case "{chapshort}":
		return d.secret(1 + d.rnd.IntN(11))
	case "{chaplong}":
		if d.stratum(ph) == 1 {
			return d.from(wideLetters, 12+d.rnd.IntN(5)) // 12-16 characters, 24 bytes or more
		}
		return d.secret(17 + d.rnd.IntN(24))
	case "{chapok}":
		return d.secret(12 + d.rnd.IntN(5))
	case "{service}":
		return d.caseOf(windowsServices[d.rnd.IntN(len(windowsServices))])
	case "{nearservice}":
		return d.nearService(d.stratum(ph))
	case "{msiscsi}":
		return d.caseOf("MSiSCSI")
	case "{lanman}":
		return d.caseOf("LanmanWorkstation")
	case "{allowed}":
		return d.from(`'$;,=+[]{}#@!&()~`, 1+d.rnd.IntN(6))
	case "{letters}":
		return d.from("éüßçñøåæœšžłđğışəαβγδωжщыюяאבגあかさ世界한글", 1+d.rnd.IntN(6))
	case "{unfolded}":
		return d.from("\u0131\u017f\u00b5\u03c2\u03d0\u01c5\u1e9b\u10d0\U00010428\U000104d8", 1+d.rnd.IntN(4))
	}
	panic("restrict: unknown placeholder " + ph)
}

// pick draws one of its arguments.
func pick(d *Draw, choices ...string) string { return choices[d.rnd.IntN(len(choices))] }

func pickInt(d *Draw, choices ...int) int { return choices[d.rnd.IntN(len(choices))] }

// from draws n characters of a set.
func (d *Draw) from(set string, n int) string {
	rs := []rune(set)
	var b strings.Builder
	for range n {
		b.WriteRune(rs[d.rnd.IntN(len(rs))])
	}
	return b.String()
}

func (d *Draw) hex(n int) string { return d.caseOf(d.from("0123456789abcdef", n)) }

// secret draws n bytes of printable ASCII.
func (d *Draw) secret(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(33 + d.rnd.IntN(94))
	}
	return string(b)
}

func (d *Draw) guid() string {
	return d.caseOf(fmt.Sprintf("%s-%s-%s-%s-%s", d.hex(8), d.hex(4), d.hex(4), d.hex(4), d.hex(12)))
}

// pad is what makes a value of n UTF-16 code units 261 to 300 long:
// components of at most 100 code units, of ASCII letters and digits, or,
// when wide, of letters outside the BMP (two UTF-16 code units, one code
// point, four bytes each), so the value counts fewer than 261 code points.
func (d *Draw) pad(n int, wide bool) string {
	want := MaxPathLength + 1 + d.rnd.IntN(40) - n
	var parts []string
	for want > 0 {
		k := min(want, 1+d.rnd.IntN(100))
		if len(parts) > 0 {
			k = min(want-1, k)
			if k <= 0 {
				parts[len(parts)-1] += "x"
				break
			}
			want--
		}
		parts = append(parts, d.padPart(k, wide))
		want -= k
	}
	return strings.Join(parts, `\`)
}

// padPart is a component of n UTF-16 code units.
func (d *Draw) padPart(n int, wide bool) string {
	const ascii = "abcdefghijklmnopqrstuvwxyz0123456789"
	if !wide {
		return d.from(ascii, n)
	}
	return d.from(astralLetters, n/2) + d.from(ascii, n%2)
}

// astralLetters are letters outside the BMP NTFS keeps as they are
// (Deseret); wideLetters are BMP letters of two and three bytes in UTF-8.
const (
	astralLetters = "\U00010400\U00010401\U00010402\U00010403\U00010428\U00010429\U0001042a\U0001042b\U0001044e\U0001044f"
	wideLetters   = "éüßçñøåæœšžłđğşəαβγδωжщыюяאבגあかさ世界한글"
)

func utf16Units(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Len(r)
	}
	return n
}

// parentOf is the longest common directory of two paths.
func parentOf(a, b string) string {
	pa, pb := strings.Split(a, `\`), strings.Split(b, `\`)
	i := 0
	for i < len(pa) && i < len(pb) && strings.EqualFold(pa[i], pb[i]) {
		i++
	}
	if i == 1 {
		return pa[0] + `\`
	}
	return strings.Join(pa[:i], `\`)
}

func dropDrive(p string) string {
	if isDriveAbs(p) {
		return p[3:]
	}
	return p
}

func dropLetter(p string) string {
	if isDriveAbs(p) {
		return p[2:]
	}
	return p
}

// Pick draws one of the choices.
func (d *Draw) Pick(choices ...string) string { return pick(d, choices...) }

// Case spells s with each ASCII letter's case drawn, at least one changed.
func (d *Draw) Case(s string) string { return d.caseOf(s) }
