package conformance

import (
	"context"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/rulebook"
)

// noEffectSpecs registers NOEFF-001: a CreateSymlink refused because the
// directory it links to is missing leaves no link, and a
// NewSmbGlobalMapping refused for its local path (outside the kubelet
// directories, or already taken) leaves no mapping (a host that maps
// first and checks the local path after keeps one).
func noEffectSpecs(s *state) {
	s.it("NOEFF-001", func(ctx context.Context) {
		var f failures
		sent := 0
		for _, gv := range s.of("filesystem", "CreateSymlink") {
			cctx, cancel := s.call(ctx)
			c := api.NewFilesystemClient(s.conns[gv.PipeBase()], gv.Version)
			src, tgt := s.cfg.PluginsPath+`\`+s.name(), s.cfg.PodPath+`\`+s.name()
			sent++
			if link(cctx, c, src, tgt) != nil {
				if ok, err := pathExists(cctx, c, tgt); err != nil || ok {
					f.add("filesystem %s: CreateSymlink to the missing %q was refused but left %q (%v)", gv.Version, src, tgt, err)
				}
			}
			_ = rmdir(cctx, c, tgt, false)
			cancel()
		}
		if s.cfg.SMBShare != "" {
			for _, gv := range s.of("smb", "") {
				cctx, cancel := s.call(ctx)
				m := api.NewSmbClient(s.conns[gv.PipeBase()], gv.Version)
				unmap := func() error {
					_, err := m.RemoveSmbGlobalMapping(cctx, &api.SmbRemoveSmbGlobalMappingRequest{RemotePath: s.cfg.SMBShare})
					return err
				}
				_ = unmap()
				bad := `C:\Windows\Temp\` + s.name()
				sent++
				_, err := m.NewSmbGlobalMapping(cctx, &api.SmbNewSmbGlobalMappingRequest{RemotePath: s.cfg.SMBShare, LocalPath: bad, Username: s.cfg.SMBUser, Password: s.cfg.SMBPassword})
				if err != nil && unmap() == nil {
					f.add("smb %s: NewSmbGlobalMapping with local_path %q was refused but left the mapping of %s", gv.Version, bad, s.cfg.SMBShare)
				}
				_ = unmap()
				s.rmdir(cctx, bad)
				taken := s.cfg.PluginsPath + `\` + s.name()
				if err := s.mkdir(cctx, taken); err != nil {
					f.add("smb %s: setup Mkdir %q: %v", gv.Version, taken, err)
				} else if _, err := m.NewSmbGlobalMapping(cctx, &api.SmbNewSmbGlobalMappingRequest{RemotePath: s.cfg.SMBShare, LocalPath: taken, Username: s.cfg.SMBUser, Password: s.cfg.SMBPassword}); err != nil && unmap() == nil {
					f.add("smb %s: NewSmbGlobalMapping with the existing local_path %q failed but left the mapping of %s", gv.Version, taken, s.cfg.SMBShare)
				}
				_ = unmap()
				s.rmdir(cctx, taken)
				cancel()
			}
		}
		if sent == 0 {
			rulebook.NotSupported("no filesystem version with CreateSymlink and no smb version with a configured share")
		}
		f.check()
	})
}
