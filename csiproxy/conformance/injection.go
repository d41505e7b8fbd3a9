package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// payload is one injection payload shape: how it breaks out of the
// context a field may be spliced into, and whether it is also a valid
// path component (so it reaches a host that checks paths).
type payload struct {
	name string
	// text: {w} is a fresh word, {mkdir} a command that makes a directory
	// (drawn: New-Item or ni with -ItemType or -Type, md, mkdir, in any
	// case), {dir} the canary directory, rooted on the drive (no ':').
	text     string
	pathSafe bool
}

// payloads cover the PowerShell contexts a field lands in when a host
// formats it into a script (unquoted, "...", '...', $(...), typographic
// quotes, a new statement line) and a shell pipe.
var payloads = []payload{
	{"unquoted statement", `{w}; {mkdir} '{dir}';#`, true},
	{"out of double quotes", `{w}"; {mkdir} '{dir}';"`, false},
	{"out of single quotes", `{w}'; {mkdir} '{dir}';'`, true},
	{"subexpression", `$({mkdir} '{dir}')`, true},
	{"out of typographic quotes", "{w}\u2019; {mkdir} '{dir}';\u2019", true},
	{"new line", "{w}\n{mkdir} '{dir}'", false},
	{"shell pipe", `{w} | md {dir}`, false},
}

// mkdirCommands are the commands a payload makes its directory with.
var mkdirCommands = []string{"New-Item -ItemType Directory", "New-Item -Type Directory -Path", "ni -ItemType Directory",
	"ni -it directory -p", "md", "mkdir"}

// spell draws a payload's text for the canary directory dir.
func (s *state) spell(pl payload, dir string) string {
	cmd := s.draw.Case(s.draw.Pick(mkdirCommands...))
	return strings.NewReplacer("{w}", s.name(), "{mkdir}", cmd, "{dir}", rootedOnDrive(dir)).Replace(pl.text)
}

// canary is one payload sent, and the directory it makes if it runs.
type canary struct {
	dir, what string
}

// injectionSpecs registers INJ-001: every string field of every RPC of
// restrict.RPCs gets every payload on every served version; then no
// canary directory may exist.
func injectionSpecs(s *state) {
	s.it("INJ-001", func(ctx context.Context) {
		if s.fs() == nil {
			rulebook.NotSupported("no filesystem version is served to look for canaries")
		}
		var canaries []canary
		skipped := map[string]bool{}
		for _, r := range restrict.RPCs {
			if why := s.needs(r); why != "" {
				skipped[r.Group+" "+r.Method+": "+why] = true
				continue
			}
			for _, gv := range s.of(r.Group, r.Method) {
				for _, fl := range r.Fields {
					switch fl.Kind {
					case restrict.KindDisk, restrict.KindPortal:
						continue
					case restrict.KindMutualCHAP:
						skipped["MutualChapSecret: 16 bytes cannot name a canary directory"] = true
						continue
					}
					for _, pl := range payloads {
						if c, ok := s.inject(ctx, gv, r, fl, pl); ok {
							canaries = append(canaries, c)
						}
					}
				}
			}
		}
		var f failures
		for _, c := range canaries {
			cctx, cancel := s.call(ctx)
			ok, err := s.exists(cctx, c.dir)
			switch {
			case err != nil:
				f.add("PathExists(%s): %v", c.dir, err)
			case ok:
				f.add("%s: the payload ran (%s exists)", c.what, c.dir)
				s.rmdir(cctx, c.dir)
			}
			cancel()
		}
		var notes []string
		for n := range skipped {
			notes = append(notes, n)
		}
		rulebook.Note("%d payloads sent; not sent: %s", len(canaries), strings.Join(notes, "; "))
		f.check()
	})
}

// inject sends one payload in one field, the other fields valid.
func (s *state) inject(ctx context.Context, gv api.GroupVersion, r restrict.RPC, fl restrict.Field, pl payload) (canary, bool) {
	isPath := fl.Kind == restrict.KindPath || fl.Kind == restrict.KindLinkSource || fl.Kind == restrict.KindLinkTarget
	if isPath && !pl.pathSafe {
		return canary{}, false
	}
	cctx, cancel := s.call(ctx)
	defer cancel()
	fresh := s.name()
	b := s.base(cctx, gv, r, restrict.Case{Value: "{s}"}, fl.Name, fresh)
	defer b.done(cctx)
	dir := s.cfg.PodPath + `\` + s.name()
	value := s.spell(pl, dir)
	if isPath {
		value = s.draw.Spell(`{dir}\{s}`, fl.Kind, fresh) + value
	}
	if err := setField(b.req, fl.Name, value, 0); err != nil {
		return canary{}, false
	}
	if invoke(cctx, s.client(gv), r.Method, b.req) == nil {
		b.undo(cctx, b.req)
	}
	return canary{dir: dir, what: fmt.Sprintf("%s %s %s %s (%s)", gv.Group, gv.Version, r.Method, fl.Name, pl.name)}, true
}

// rootedOnDrive drops a path's drive letter: \var\lib\... (a payload must
// not carry ':', which paths refuse; PowerShell takes it on its current
// drive, the service's).
func rootedOnDrive(p string) string {
	if len(p) >= 2 && p[1] == ':' {
		return p[2:]
	}
	return p
}
