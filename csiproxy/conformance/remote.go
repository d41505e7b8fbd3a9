package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

// remoteSpecs registers SMBAPI-001, ISCSIAPI-001/002 and SYS-001/002.
func remoteSpecs(s *state) {
	s.it("SMBAPI-001", func(ctx context.Context) {
		vs := s.of("smb", "")
		if len(vs) == 0 {
			rulebook.NotSupported("no smb version is served")
		}
		if s.cfg.SMBShare == "" {
			rulebook.Skip("no --smb-share given")
		}
		fs := s.fs()
		if fs == nil {
			rulebook.NotSupported("no filesystem version is served")
		}
		var f failures
		for _, gv := range vs {
			cctx, cancel := s.call(ctx)
			m := api.NewSmbClient(s.conns[gv.PipeBase()], gv.Version)
			local := s.cfg.PluginsPath + `\` + s.name()
			mapping := func(remote, local string) error {
				_, err := m.NewSmbGlobalMapping(cctx, &api.SmbNewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: s.cfg.SMBUser, Password: s.cfg.SMBPassword})
				return err
			}
			unmap := func() error {
				_, err := m.RemoveSmbGlobalMapping(cctx, &api.SmbRemoveSmbGlobalMappingRequest{RemotePath: s.cfg.SMBShare})
				return err
			}
			steps(&f, "smb "+gv.Version,
				step{"map with a local path", func() error { return mapping(s.cfg.SMBShare, local) }},
				step{"the local path is a link to the share", func() error { ok, err := isLink(cctx, fs, local); return expectBool(ok, err, true) }},
				step{"map a subdirectory of the mapped share", func() error { return mapping(s.cfg.SMBShare+`\sub`, "") }},
				step{"unmap", unmap},
				step{"a second unmap is refused", func() error {
					if unmap() == nil {
						return fmt.Errorf("a mapping of %s remained after RemoveSmbGlobalMapping", s.cfg.SMBShare)
					}
					return nil
				}},
			)
			_ = unmap()
			_ = rmdir(cctx, fs, local, false)
			cancel()
		}
		f.check()
	})
	s.it("ISCSIAPI-001", func(ctx context.Context) {
		cl := s.iscsi()
		cctx, cancel := s.call(ctx)
		defer cancel()
		p := s.portal()
		_, err := cl.AddTargetPortal(cctx, &api.IscsiAddTargetPortalRequest{TargetPortal: p})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_, _ = cl.RemoveTargetPortal(ctx, &api.IscsiRemoveTargetPortalRequest{TargetPortal: p})
		})
		disc, err := cl.DiscoverTargetPortal(cctx, &api.IscsiDiscoverTargetPortalRequest{TargetPortal: p})
		Expect(err).NotTo(HaveOccurred())
		Expect(disc.Iqns).NotTo(BeEmpty())
		for _, iqn := range disc.Iqns {
			Expect(restrict.New().IQN("iqn", iqn)).To(Succeed(), "discovered IQN")
		}
		iqn := disc.Iqns[0]
		_, err = cl.ConnectTarget(cctx, &api.IscsiConnectTargetRequest{TargetPortal: p, Iqn: iqn})
		Expect(err).NotTo(HaveOccurred())
		td, err := cl.GetTargetDisks(cctx, &api.IscsiGetTargetDisksRequest{TargetPortal: p, Iqn: iqn})
		Expect(err).NotTo(HaveOccurred())
		Expect(td.DiskIDs).NotTo(BeEmpty())
		if vs := s.of("disk", "ListDiskIDs"); len(vs) > 0 {
			ids, err := api.NewDiskClient(s.conns[vs[0].PipeBase()], vs[0].Version).ListDiskIDs(cctx, &api.DiskListDiskIDsRequest{})
			Expect(err).NotTo(HaveOccurred())
			for _, id := range td.DiskIDs {
				var n uint32
				_, _ = fmt.Sscan(id, &n)
				Expect(ids.DiskIDs).To(HaveKey(n), "disk %s of the target is not listed", id)
			}
		}
		_, err = cl.DisconnectTarget(cctx, &api.IscsiDisconnectTargetRequest{TargetPortal: p, Iqn: iqn})
		Expect(err).NotTo(HaveOccurred())
		_, err = cl.GetTargetDisks(cctx, &api.IscsiGetTargetDisksRequest{TargetPortal: p, Iqn: iqn})
		Expect(err).To(HaveOccurred(), "disks of a disconnected target")
		_, err = cl.RemoveTargetPortal(cctx, &api.IscsiRemoveTargetPortalRequest{TargetPortal: p})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.listed(cctx, cl, p.TargetAddress)).NotTo(ContainElement(p.TargetPort), "portal still listed after RemoveTargetPortal")
	})
	s.it("ISCSIAPI-002", func(ctx context.Context) {
		cl := s.iscsi()
		cctx, cancel := s.call(ctx)
		defer cancel()
		p := &api.IscsiTargetPortal{TargetAddress: s.cfg.ISCSIPortal}
		_, err := cl.AddTargetPortal(cctx, &api.IscsiAddTargetPortalRequest{TargetPortal: p})
		Expect(err).NotTo(HaveOccurred(), "AddTargetPortal with port 0")
		DeferCleanup(func(ctx SpecContext) {
			for _, port := range []uint32{0, restrict.DefaultISCSIPort} {
				_, _ = cl.RemoveTargetPortal(ctx, &api.IscsiRemoveTargetPortalRequest{TargetPortal: &api.IscsiTargetPortal{TargetAddress: s.cfg.ISCSIPortal, TargetPort: port}})
			}
		})
		Expect(s.listed(cctx, cl, s.cfg.ISCSIPortal)).To(ContainElement(uint32(restrict.DefaultISCSIPort)), "ports of the portal added with port 0")
	})
	s.it("SYS-001", func(ctx context.Context) {
		vs := s.of("system", "GetBIOSSerialNumber")
		if len(vs) == 0 {
			rulebook.NotSupported("no system version is served")
		}
		var f failures
		for _, gv := range vs {
			cctx, cancel := s.call(ctx)
			r, err := api.NewSystemClient(s.conns[gv.PipeBase()], gv.Version).GetBIOSSerialNumber(cctx, &api.SystemGetBIOSSerialNumberRequest{})
			if err != nil {
				f.add("system %s: %v", gv.Version, err)
			} else if strings.TrimSpace(r.SerialNumber) == "" {
				f.add("system %s: empty serial number", gv.Version)
			}
			cancel()
		}
		f.check()
	})
	s.it("SYS-002", func(ctx context.Context) {
		vs := s.of("system", "GetService")
		if len(vs) == 0 {
			rulebook.NotSupported("no system version has GetService")
		}
		var f failures
		const running = 4 // the service status Windows and csi-proxy number 4
		for _, gv := range vs {
			cctx, cancel := s.call(ctx)
			c := api.NewSystemClient(s.conns[gv.PipeBase()], gv.Version)
			name := restrict.DefaultServices[0]
			steps(&f, "system "+gv.Version,
				step{"StartService " + name, func() error {
					_, err := c.StartService(cctx, &api.SystemStartServiceRequest{Name: name})
					return err
				}},
				step{"GetService " + name + " reports it running", func() error {
					r, err := c.GetService(cctx, &api.SystemGetServiceRequest{Name: name})
					if err != nil {
						return err
					}
					if r.Status != running || r.DisplayName == "" {
						return fmt.Errorf("status %d, display name %q; want %d and a name", r.Status, r.DisplayName, running)
					}
					return nil
				}},
			)
			cancel()
		}
		f.check()
	})
}

// iscsi is the newest served iSCSI client; the rule is not supported
// without one and skipped without a configured portal.
func (s *state) iscsi() api.IscsiClient {
	vs := s.of("iscsi", "")
	if len(vs) == 0 {
		rulebook.NotSupported("no iscsi version is served")
	}
	if s.cfg.ISCSIPortal == "" {
		rulebook.Skip("no --iscsi-portal given")
	}
	return api.NewIscsiClient(s.conns[vs[0].PipeBase()], vs[0].Version)
}

// listed is the ports a portal address is registered with.
func (s *state) listed(ctx context.Context, cl api.IscsiClient, addr string) []uint32 {
	list, err := cl.ListTargetPortals(ctx, &api.IscsiListTargetPortalsRequest{})
	Expect(err).NotTo(HaveOccurred())
	var out []uint32
	for _, tp := range list.TargetPortals {
		if tp.TargetAddress == addr {
			out = append(out, tp.TargetPort)
		}
	}
	slices.Sort(out)
	return out
}
