package conformance

import (
	"context"
	"fmt"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

func (s *state) needFS() []api.GroupVersion {
	vs := s.of("filesystem", "")
	if len(vs) == 0 {
		rulebook.NotSupported("no filesystem version is served")
	}
	return vs
}

// step is one step of a scenario: what it checks and the check.
type step struct {
	what string
	do   func() error
}

// steps runs a scenario's steps until one fails.
func steps(f *failures, prefix string, ss ...step) {
	for _, st := range ss {
		if err := st.do(); err != nil {
			f.add("%s: %s: %v", prefix, st.what, err)
			return
		}
	}
}

func expectBool(got bool, err error, want bool) error {
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("got %v, want %v", got, want)
	}
	return nil
}

func isLink(ctx context.Context, c api.FilesystemClient, p string) (bool, error) {
	r, err := c.IsSymlink(ctx, &api.FilesystemIsSymlinkRequest{Path: p})
	if err != nil {
		return false, err
	}
	return r.IsSymlink, nil
}

func pathExists(ctx context.Context, c api.FilesystemClient, p string) (bool, error) {
	r, err := c.PathExists(ctx, &api.FilesystemPathExistsRequest{Path: p})
	if err != nil {
		return false, err
	}
	return r.Exists, nil
}

func mkdir(ctx context.Context, c api.FilesystemClient, p string) error {
	_, err := c.Mkdir(ctx, &api.FilesystemMkdirRequest{Path: p})
	return err
}

func rmdir(ctx context.Context, c api.FilesystemClient, p string, force bool) error {
	_, err := c.Rmdir(ctx, &api.FilesystemRmdirRequest{Path: p, Force: force})
	return err
}

func link(ctx context.Context, c api.FilesystemClient, source, target string) error {
	_, err := c.CreateSymlink(ctx, &api.FilesystemCreateSymlinkRequest{SourcePath: source, TargetPath: target})
	return err
}

// fsSpecs registers FS-001..003.
func fsSpecs(s *state) {
	s.it("FS-001", func(ctx context.Context) {
		var f failures
		for _, gv := range s.needFS() {
			cctx, cancel := s.call(ctx)
			c := api.NewFilesystemClient(s.conns[gv.PipeBase()], gv.Version)
			src := s.cfg.PluginsPath + `\` + s.name()
			tgt := s.cfg.PodPath + `\` + s.name()
			steps(&f, "filesystem "+gv.Version,
				step{"Mkdir the staging directory (source) and a file-holding directory in it", func() error { return mkdir(cctx, c, src+`\data`) }},
				step{"CreateSymlink(source, target)", func() error { return link(cctx, c, src, tgt) }},
				step{"the target is a link", func() error { ok, err := isLink(cctx, c, tgt); return expectBool(ok, err, true) }},
				step{"the source is not a link", func() error { ok, err := isLink(cctx, c, src); return expectBool(ok, err, false) }},
				step{"the staging content is seen through the target", func() error { ok, err := pathExists(cctx, c, tgt+`\data`); return expectBool(ok, err, true) }},
				step{"Rmdir the target (the link)", func() error { return rmdir(cctx, c, tgt, false) }},
				step{"the target is gone", func() error { ok, err := pathExists(cctx, c, tgt); return expectBool(ok, err, false) }},
				step{"the staging content is kept", func() error { ok, err := pathExists(cctx, c, src+`\data`); return expectBool(ok, err, true) }},
			)
			_ = rmdir(cctx, c, tgt, false)
			_ = rmdir(cctx, c, src, true)
			cancel()
		}
		f.check()
	})
	s.it("FS-002", func(ctx context.Context) {
		var f failures
		for _, gv := range s.needFS() {
			cctx, cancel := s.call(ctx)
			c := api.NewFilesystemClient(s.conns[gv.PipeBase()], gv.Version)
			top := s.cfg.PodPath + `\` + s.name()
			deep := top + `\a\b`
			steps(&f, "filesystem "+gv.Version,
				step{"Mkdir with parents", func() error { return mkdir(cctx, c, deep) }},
				step{"it exists", func() error { ok, err := pathExists(cctx, c, deep); return expectBool(ok, err, true) }},
				step{"Mkdir of the existing directory succeeds", func() error { return mkdir(cctx, c, deep) }},
				step{"Rmdir of a non-empty directory without force is refused", func() error {
					if rmdir(cctx, c, top, false) == nil {
						return fmt.Errorf("Rmdir of non-empty %q without force succeeded", top)
					}
					return nil
				}},
				step{"still there", func() error { ok, err := pathExists(cctx, c, deep); return expectBool(ok, err, true) }},
				step{"Rmdir forced", func() error { return rmdir(cctx, c, top, true) }},
				step{"gone", func() error { ok, err := pathExists(cctx, c, top); return expectBool(ok, err, false) }},
				step{"Rmdir forced of the missing directory succeeds", func() error { return rmdir(cctx, c, top, true) }},
			)
			_ = rmdir(cctx, c, top, true)
			cancel()
		}
		f.check()
	})
	s.it("FS-003", func(ctx context.Context) {
		var f failures
		for _, gv := range s.needFS() {
			c := api.NewFilesystemClient(s.conns[gv.PipeBase()], gv.Version)
			for _, v := range restrict.Valid {
				if v.Kind.IsPath() {
					s.sendValid(ctx, gv, c, v, &f)
				}
			}
			if s.cfg.InsideLink != "" {
				s.sendValid(ctx, gv, c, restrict.Case{Name: "through a link that stays inside the pod path", Kind: restrict.KindPath,
					Value: `{dir}\` + s.cfg.InsideLink + `\{s}`}, &f)
			}
		}
		f.check()
	})
}

// sendValid sends one valid path value, drawn, and expects success.
func (s *state) sendValid(ctx context.Context, gv api.GroupVersion, c api.FilesystemClient, v restrict.Case, f *failures) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	p := s.draw.Probe(v, v.Kind)
	val := p.Value
	top := func(k restrict.Kind) string {
		if k == restrict.KindLinkSource {
			return s.cfg.PluginsPath + `\` + p.Fresh
		}
		return s.cfg.PodPath + `\` + p.Fresh
	}
	switch v.Kind {
	case restrict.KindPath:
		if err := mkdir(cctx, c, val); err != nil {
			f.add("filesystem %s %s: Mkdir %q: %v", gv.Version, v.Name, val, err)
		} else if ok, err := pathExists(cctx, c, val); err != nil || !ok {
			f.add("filesystem %s %s: PathExists %q after Mkdir: %v %v", gv.Version, v.Name, val, ok, err)
		}
		_ = rmdir(cctx, c, top(v.Kind), true)
	case restrict.KindLinkSource, restrict.KindLinkTarget:
		src := top(restrict.KindLinkSource) + "-src"
		tgt := top(restrict.KindLinkTarget)
		if v.Kind == restrict.KindLinkSource {
			src = val
		} else {
			tgt = val
		}
		if err := mkdir(cctx, c, src); err != nil {
			f.add("filesystem %s %s: Mkdir %q: %v", gv.Version, v.Name, src, err)
		} else if err := link(cctx, c, src, tgt); err != nil {
			f.add("filesystem %s %s: CreateSymlink %q -> %q: %v", gv.Version, v.Name, tgt, src, err)
		}
		_ = rmdir(cctx, c, tgt, false)
		_ = rmdir(cctx, c, src, true)
	}
}
