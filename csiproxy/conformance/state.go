package conformance

import (
	"context"
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// linkState is one host-state refusal of LinkPath: prepare makes the host
// state, then the link source -> target must be refused and the source
// must be as prepare left it.
type linkState struct {
	rule    string
	prepare func(ctx context.Context, fs fsAPI, src, tgt string) (target string, srcExisted bool, err error)
}

func (s *state) linkStates() []linkState {
	return []linkState{
		{"LINK-003", func(ctx context.Context, fs fsAPI, src, tgt string) (string, bool, error) {
			if err := fs.Mkdir(ctx, src); err != nil {
				return "", false, err
			}
			return tgt, true, fs.Mkdir(ctx, tgt)
		}},
		{"LINK-004", func(ctx context.Context, fs fsAPI, src, tgt string) (string, bool, error) {
			return tgt, false, nil
		}},
		{"LINK-005", func(ctx context.Context, fs fsAPI, src, tgt string) (string, bool, error) {
			return tgt, false, fs.Mkdir(ctx, tgt+`\data`)
		}},
		{"LINK-006", func(ctx context.Context, fs fsAPI, src, tgt string) (string, bool, error) {
			return s.cfg.SymlinkInPods, false, nil
		}},
	}
}

// stateSpecs registers LINK-003..006 and NOEFF-001.
func stateSpecs(s *state) {
	for _, ls := range s.linkStates() {
		ls := ls
		s.it(ls.rule, func(ctx context.Context) {
			if len(s.fs) == 0 {
				rulebook.Skip("no filesystem version the suite knows is served")
			}
			if ls.rule == "LINK-006" && s.cfg.SymlinkInPods == "" {
				rulebook.Skip("no --symlink-in-pods given: no known symbolic link below the pod path")
			}
			var f failures
			for _, fs := range s.fs {
				s.linkStateCase(ctx, fs, ls, &f, false)
			}
			f.check()
		})
	}
	s.it("NOEFF-001", func(ctx context.Context) {
		var f failures
		for _, fs := range s.fs {
			for _, ls := range s.linkStates()[1:3] {
				s.linkStateCase(ctx, fs, ls, &f, true)
			}
		}
		for _, m := range s.smb {
			if len(s.fs) == 0 {
				break
			}
			cctx, cancel := s.call(ctx)
			share := `\\fileserver.example.com\fp-` + s.name()
			taken := s.expand(`{plugins}\{s}`, s.name(), "")
			if err := s.fs[0].Mkdir(cctx, taken); err != nil {
				f.add("setup Mkdir %q: %v", taken, err)
			} else if err := m.Map(cctx, share, taken, "fenceproof", "not-a-real-password"); err == nil {
				cancel()
				continue // a link over an existing directory: not this rule's case
			}
			_ = s.fs[0].Rmdir(cctx, taken, true)
			if err := m.Unmap(cctx, share); err == nil {
				f.add("smb %s: a mapping of %s remained after its request was refused", m.Version(), share)
			}
			cancel()
		}
		if len(s.fs)+len(s.smb) == 0 {
			rulebook.Skip("no filesystem or smb version the suite knows is served")
		}
		f.check()
	})
}

// linkStateCase runs one state case on one version. With effects it checks
// only that the refused request left no source behind (NOEFF-001);
// otherwise only that it was refused.
func (s *state) linkStateCase(ctx context.Context, fs fsAPI, ls linkState, f *failures, effects bool) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	srcName, tgtName := s.name(), s.name()
	src := s.expand(restrict.LinkSource, srcName, tgtName)
	tgt := s.expand(restrict.LinkTarget, srcName, tgtName)
	target, srcExisted, err := ls.prepare(cctx, fs, src, tgt)
	defer func() {
		_ = fs.Rmdir(cctx, src, true)
		_ = fs.Rmdir(cctx, tgt, true)
	}()
	if err != nil {
		f.add("filesystem %s %s: setup: %v", fs.Version(), ls.rule, err)
		return
	}
	err = fs.Link(cctx, src, target)
	if !effects {
		if err == nil {
			f.add("filesystem %s: link %q -> %q accepted", fs.Version(), src, target)
		} else {
			refused(ls.rule, err)
		}
		return
	}
	if err == nil {
		return // LINK-00x reports the acceptance
	}
	exists, xerr := fs.Exists(cctx, src)
	switch {
	case xerr != nil:
		f.add("filesystem %s %s: PathExists(%q): %v", fs.Version(), ls.rule, src, xerr)
	case exists && !srcExisted:
		f.add("filesystem %s %s: refused link left %q behind", fs.Version(), ls.rule, src)
	}
}

// versionSpecs registers PIPE-001 and VER-001..003.
func versionSpecs(s *state) {
	s.it("PIPE-001", func(ctx context.Context) {
		var f failures
		v := restrict.New()
		for _, name := range s.served {
			if _, _, err := v.ParsePipe(name); err != nil {
				f.add("%s", err)
			}
		}
		f.check()
	})
	s.it("VER-001", func(ctx context.Context) {
		var f failures
		for _, g := range restrict.Groups {
			if !slices.ContainsFunc(s.served, func(n string) bool { return strings.HasPrefix(n, "csi-proxy-"+g+"-") }) {
				f.add("no version of %s is served", g)
			}
		}
		for _, g := range []string{"disk", "filesystem", "smb", "volume"} {
			if !slices.Contains(s.served, restrict.PipeBase(g, "v1")) {
				f.add("%s v1 (stable) is not served", g)
			}
		}
		f.check()
	})
	s.it("VER-002", func(ctx context.Context) {
		var f failures
		for _, name := range s.served {
			cctx, cancel := s.call(ctx)
			err := s.conns[name].Invoke(cctx, "/fenceproof.Probe/Ping", &emptyMsg{}, &emptyMsg{})
			cancel()
			if status.Code(err) != codes.Unimplemented {
				f.add("%s does not answer gRPC: %v", name, err)
			}
		}
		f.check()
	})
	s.it("VER-003", func(ctx context.Context) {
		rulebook.Note("served: %s", strings.Join(s.served, " "))
	})
}
