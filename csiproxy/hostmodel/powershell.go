package hostmodel

import (
	"strings"
	"unicode/utf8"
)

// Command is one Windows call the host was asked to make: a PowerShell
// -Command script and the environment variables it was given (NAME=value),
// or another call (os.MkdirAll, wmic) and its arguments.
type Command struct {
	// Op is "powershell" or the call's name.
	Op     string
	Script string   `json:",omitempty"`
	Env    []string `json:",omitempty"`
	Args   []string `json:",omitempty"`
}

// Redacted is the command with the values of secret-bearing variables
// (names containing "password" or "secret") blanked.
func (c Command) Redacted() Command {
	out := c
	out.Env = nil
	for _, e := range c.Env {
		name, _, _ := strings.Cut(e, "=")
		if l := strings.ToLower(name); strings.Contains(l, "password") || strings.Contains(l, "secret") {
			e = name + "=(redacted)"
		}
		out.Env = append(out.Env, e)
	}
	return out
}

// Call records a Windows call that is not a PowerShell script (os.Remove,
// os.Symlink, wmic, a storage ioctl) with its arguments.
func (h *Host) Call(op string, args ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.commands = append(h.commands, Command{Op: op, Args: append([]string(nil), args...)})
}

// CommandCount is how many calls have been recorded.
func (h *Host) CommandCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.commands)
}

// PowerShell records a command line and runs the statements of its script
// that make a directory or a file: every statement whose command is
// New-Item, ni, mkdir or md and whose path is written in the script (not
// read from a variable such as $Env:x) makes that entry. csi-proxy's own
// scripts never do (its one New-Item takes its path from $Env:), so an
// entry made here is an injected statement that ran: the injection
// canaries are any fresh name, recognisable by nothing. Nothing else in
// the script runs: what a command does to the host is the caller's to
// perform. Environment values never run (PowerShell reads $Env:x as
// data). It returns the entries made.
func (h *Host) PowerShell(script string, env ...string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.commands = append(h.commands, Command{Op: "powershell", Script: script, Env: append([]string(nil), env...)})
	var made []string
	for _, st := range Statements(script) {
		if p, dir, ok := newItem(st); ok {
			var err error
			if dir {
				err = h.mkdirAll(p)
			} else {
				err = h.createFile(p)
			}
			if err == nil {
				made = append(made, p)
				h.canaries = append(h.canaries, p)
			}
		}
	}
	return made
}

// Commands returns every call recorded since the n-th.
func (h *Host) Commands(n ...int) []Command {
	h.mu.Lock()
	defer h.mu.Unlock()
	from := 0
	if len(n) > 0 && n[0] > 0 {
		from = min(n[0], len(h.commands))
	}
	return append([]Command(nil), h.commands[from:]...)
}

// Canaries returns every canary directory a payload made.
func (h *Host) Canaries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.canaries...)
}

// newItem reads a statement that makes an entry: New-Item (alias ni) with
// its path given by -Path or -LiteralPath (or a prefix of either) or as
// the first positional argument, a directory when -ItemType (-Type) says
// Directory, a file when it says File or nothing; mkdir and md make a
// directory. A link (-ItemType SymbolicLink, Junction, HardLink) or a path
// read from a variable is not one.
func newItem(st []string) (path string, dir, ok bool) {
	if len(st) < 2 {
		return "", false, false
	}
	cmd := strings.ToLower(st[0])
	switch cmd {
	case "new-item", "ni":
	case "mkdir", "md":
		dir = true
	default:
		return "", false, false
	}
	itemType := ""
	for i := 1; i < len(st); i++ {
		a := st[i]
		name, isParam := paramName(a)
		switch {
		case !isParam:
			if path == "" {
				path = a
			}
		case prefixOf(name, "itemtype", 1) || name == "type":
			if i+1 < len(st) {
				itemType, i = strings.ToLower(st[i+1]), i+1
			}
		case prefixOf(name, "path", 1) || prefixOf(name, "literalpath", 1):
			if i+1 < len(st) {
				path, i = st[i+1], i+1
			}
		case prefixOf(name, "value", 1) || prefixOf(name, "name", 1) || prefixOf(name, "target", 2) || prefixOf(name, "credential", 1):
			i++ // a parameter with a value
		}
	}
	switch {
	case path == "" || strings.HasPrefix(path, "$"):
		return "", false, false
	case itemType == "" || strings.HasPrefix("file", itemType):
	case strings.HasPrefix("directory", itemType):
		dir = true
	default:
		return "", false, false
	}
	return path, dir, true
}

// paramName is a -Parameter's name in lower case.
func paramName(a string) (string, bool) {
	if len(a) < 2 || a[0] != '-' {
		return "", false
	}
	name, _, _ := strings.Cut(strings.ToLower(a[1:]), ":")
	return name, true
}

// prefixOf reports whether name abbreviates full (PowerShell takes any
// unambiguous prefix of a parameter's name), at least min characters.
func prefixOf(name, full string, min int) bool {
	return len(name) >= min && strings.HasPrefix(full, name)
}

// Quote characters PowerShell accepts besides the ASCII ones.
const (
	singleQuotes = "'\u2018\u2019\u201a\u201b"
	doubleQuotes = "\"\u201c\u201d\u201e"
)

// Statements splits a script the way Windows PowerShell 5.1 (what
// csi-proxy runs) would parse it into the statements that would run, each
// as its words (a quoted word unquoted): statements are separated by ;
// newlines and |, begin after the call operator &, and are found inside
// ( ), $( ), @( ), { } and the $( ) subexpressions of double-quoted
// strings; a parenthesised argument written against its command
// (md('x')) is an argument. Single-quoted strings, the literal text of
// double-quoted ones, comments and backtick-escaped characters are data;
// PowerShell's typographic quotes count as quotes. A script 5.1 cannot
// parse (an unterminated string, an unbalanced bracket, & inside a
// statement, && or ||, an empty pipe element) runs nothing: nil.
func Statements(script string) [][]string {
	p := &psParser{s: script}
	p.code(0)
	p.flush()
	if p.bad {
		return nil
	}
	return p.out
}

type psParser struct {
	s    string
	i    int
	out  [][]string
	cur  []string
	word strings.Builder
	in   bool // a word is being read
	bad  bool // the script does not parse
}

func (p *psParser) next() (rune, bool) {
	if p.i >= len(p.s) {
		return 0, false
	}
	r, n := utf8.DecodeRuneInString(p.s[p.i:])
	p.i += n
	return r, true
}

func (p *psParser) peek() rune {
	if p.i >= len(p.s) {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(p.s[p.i:])
	return r
}

func (p *psParser) endWord() {
	if p.in {
		p.cur = append(p.cur, p.word.String())
		p.word.Reset()
		p.in = false
	}
}

func (p *psParser) flush() {
	p.endWord()
	if len(p.cur) > 0 {
		p.out = append(p.out, p.cur)
	}
	p.cur = nil
}

// code reads statements until the closing bracket of depth (0: the end).
func (p *psParser) code(closer rune) {
	for {
		r, ok := p.next()
		if !ok {
			return
		}
		switch {
		case r == closer:
			p.flush()
			return
		case r == ')' || r == '}':
			p.bad = true
		case r == '`':
			if c, ok := p.next(); ok {
				p.word.WriteRune(c)
				p.in = true
			}
		case r == '#' && !p.in:
			if p.peek() == '>' {
				continue
			}
			for c, ok := p.next(); ok && c != '\n'; c, ok = p.next() {
			}
			p.flush()
		case r == '<' && p.peek() == '#':
			for c, ok := p.next(); ok; c, ok = p.next() {
				if c == '#' && p.peek() == '>' {
					p.i++
					break
				}
			}
		case strings.ContainsRune(singleQuotes, r):
			p.single()
		case strings.ContainsRune(doubleQuotes, r):
			p.double()
		case r == '|':
			p.endWord()
			if len(p.cur) == 0 {
				p.bad = true // an empty pipe element (also ||)
			}
			p.flush()
		case r == ';' || r == '\n' || r == '\r':
			p.flush()
		case r == '&':
			if p.in || len(p.cur) > 0 {
				p.bad = true // & is the call operator only, at a statement's start
			}
		case r == '(' || r == '{' || ((r == '$' || r == '@') && p.peek() == '('):
			if r == '$' || r == '@' {
				p.i++
			}
			closing := ')'
			if r == '{' {
				closing = '}'
			}
			call := r == '(' && p.in && len(p.cur) == 0 // md('x'): the argument of md
			p.endWord()
			saved := p.cur
			p.cur = nil
			before := len(p.out)
			p.code(closing)
			if call && len(p.out) == before+1 && len(p.out[before]) == 1 {
				saved = append(saved, p.out[before][0])
				p.out = p.out[:before]
			}
			p.cur = saved
		case r == ' ' || r == '\t':
			p.endWord()
		default:
			p.word.WriteRune(r)
			p.in = true
		}
	}
}

// single reads a single-quoted string (” is a quote) into the word.
func (p *psParser) single() {
	p.in = true
	for {
		r, ok := p.next()
		if !ok {
			p.bad = true
			return
		}
		if strings.ContainsRune(singleQuotes, r) {
			if strings.ContainsRune(singleQuotes, p.peek()) {
				p.next()
				p.word.WriteRune(r)
				continue
			}
			return
		}
		p.word.WriteRune(r)
	}
}

// double reads a double-quoted string ("" and `" are quotes); its $( )
// subexpressions are code.
func (p *psParser) double() {
	p.in = true
	for {
		r, ok := p.next()
		if !ok {
			p.bad = true
			return
		}
		switch {
		case r == '`':
			if c, ok := p.next(); ok {
				p.word.WriteRune(c)
			}
		case strings.ContainsRune(doubleQuotes, r):
			if strings.ContainsRune(doubleQuotes, p.peek()) {
				p.next()
				p.word.WriteRune(r)
				continue
			}
			return
		case r == '$' && p.peek() == '(':
			p.i++
			saved, word := p.cur, p.word.String()
			p.word.Reset()
			p.cur = nil
			p.in = false
			p.code(')')
			p.cur = saved
			p.word.WriteString(word)
			p.in = true
		default:
			p.word.WriteRune(r)
		}
	}
}
