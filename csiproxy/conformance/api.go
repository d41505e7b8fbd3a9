package conformance

import (
	"context"
	"fmt"
	"slices"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	iscsiv1alpha2 "github.com/kubernetes-csi/csi-proxy/client/api/iscsi/v1alpha2"
	sysv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/system/v1alpha1"
	volv1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/csiproxy/restrict"
	"github.com/fenceproof/fenceproof/rulebook"
)

func (s *state) needFS() {
	if len(s.fs) == 0 {
		rulebook.Skip("no filesystem version the suite knows (v1beta1, v1) is served")
	}
}

// fsSpecs registers FS-001..003.
func fsSpecs(s *state) {
	s.it("FS-001", func(ctx context.Context) {
		s.needFS()
		var f failures
		for _, fs := range s.fs {
			cctx, cancel := s.call(ctx)
			src := s.expand(restrict.LinkSource, s.name(), "")
			tgt := s.expand(restrict.LinkTarget, "", s.name())
			steps := []struct {
				what string
				do   func() error
			}{
				{"Mkdir target", func() error { return fs.Mkdir(cctx, tgt) }},
				{"Link", func() error { return fs.Link(cctx, src, tgt) }},
				{"source is a link", func() error { return expectBool(fs.IsLink(cctx, src))(true) }},
				{"source exists", func() error { return expectBool(fs.Exists(cctx, src))(true) }},
				{"Rmdir source", func() error { return fs.Rmdir(cctx, src, false) }},
				{"source gone", func() error { return expectBool(fs.Exists(cctx, src))(false) }},
				{"target kept", func() error { return expectBool(fs.Exists(cctx, tgt))(true) }},
			}
			for _, st := range steps {
				if err := st.do(); err != nil {
					f.add("filesystem %s: %s: %v", fs.Version(), st.what, err)
					break
				}
			}
			_ = fs.Rmdir(cctx, src, false)
			_ = fs.Rmdir(cctx, tgt, true)
			cancel()
		}
		f.check()
	})
	s.it("FS-002", func(ctx context.Context) {
		s.needFS()
		var f failures
		for _, fs := range s.fs {
			cctx, cancel := s.call(ctx)
			top := s.expand(`{pods}\{s}`, s.name(), "")
			deep := top + `\a\b`
			steps := []struct {
				what string
				do   func() error
			}{
				{"Mkdir with parents", func() error { return fs.Mkdir(cctx, deep) }},
				{"it exists", func() error { return expectBool(fs.Exists(cctx, deep))(true) }},
				{"Rmdir non-empty refused", func() error {
					if fs.Rmdir(cctx, top, false) == nil {
						return fmt.Errorf("Rmdir of non-empty %q without force succeeded", top)
					}
					return nil
				}},
				{"still there", func() error { return expectBool(fs.Exists(cctx, deep))(true) }},
				{"Rmdir forced", func() error { return fs.Rmdir(cctx, top, true) }},
				{"gone", func() error { return expectBool(fs.Exists(cctx, top))(false) }},
			}
			for _, st := range steps {
				if err := st.do(); err != nil {
					f.add("filesystem %s: %s: %v", fs.Version(), st.what, err)
					break
				}
			}
			_ = fs.Rmdir(cctx, top, true)
			cancel()
		}
		f.check()
	})
	s.it("FS-003", func(ctx context.Context) {
		s.needFS()
		var f failures
		for _, c := range restrict.ValidCases {
			s.sendValid(ctx, c, &f)
		}
		f.check()
	})
}

func expectBool(got bool, err error) func(bool) error {
	return func(want bool) error {
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("got %v, want %v", got, want)
		}
		return nil
	}
}

// sendValid sends one valid case where its resource is available and
// expects success.
func (s *state) sendValid(ctx context.Context, c restrict.Case, f *failures) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	switch c.Kind {
	case restrict.KindLink:
		for _, fs := range s.fs {
			src, tgt := s.name(), s.name()
			tdir := s.expand(restrict.LinkTarget, src, tgt)
			a, b := s.expand(c.A, src, tgt), s.expand(c.B, src, tgt)
			if err := fs.Mkdir(cctx, tdir); err != nil {
				f.add("filesystem %s %s: Mkdir %q: %v", fs.Version(), c.Name, tdir, err)
			} else if err := fs.Link(cctx, a, b); err != nil {
				f.add("filesystem %s %s: link %q -> %q: %v", fs.Version(), c.Name, a, b, err)
			}
			_ = fs.Rmdir(cctx, a, false)
			_ = fs.Rmdir(cctx, tdir, true)
		}
	case restrict.KindDir:
		for _, fs := range s.fs {
			a := s.expand(c.A, s.name(), "")
			if err := fs.Mkdir(cctx, a); err != nil {
				f.add("filesystem %s %s: Mkdir %q: %v", fs.Version(), c.Name, a, err)
			}
			_ = fs.Rmdir(cctx, a, true)
		}
	case restrict.KindSMB:
		if s.cfg.SMBShare == "" {
			return
		}
		for _, m := range s.smb {
			if err := m.Map(cctx, c.A, "", s.cfg.SMBUser, s.cfg.SMBPassword); err != nil {
				f.add("smb %s %s: %q: %v", m.Version(), c.Name, c.A, err)
			}
			_ = m.Unmap(cctx, c.A)
		}
	case restrict.KindIQN, restrict.KindPortal, restrict.KindCHAP:
		cl := s.iscsi()
		if cl == nil || s.cfg.ISCSIPortal == "" {
			return
		}
		var err error
		switch c.Kind {
		case restrict.KindIQN:
			p := &iscsiv1alpha2.TargetPortal{TargetAddress: s.cfg.ISCSIPortal, TargetPort: 3260}
			if _, err = cl.AddTargetPortal(cctx, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: p}); err == nil {
				_, err = cl.ConnectTarget(cctx, &iscsiv1alpha2.ConnectTargetRequest{TargetPortal: p, Iqn: c.A})
				_, _ = cl.DisconnectTarget(cctx, &iscsiv1alpha2.DisconnectTargetRequest{TargetPortal: p, Iqn: c.A})
			}
			_, _ = cl.RemoveTargetPortal(cctx, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: p})
		case restrict.KindPortal:
			p := &iscsiv1alpha2.TargetPortal{TargetAddress: c.A, TargetPort: c.Port}
			_, err = cl.AddTargetPortal(cctx, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: p})
			if c.Port == 0 {
				p.TargetPort = restrict.DefaultISCSIPort
			}
			_, _ = cl.RemoveTargetPortal(cctx, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: p})
		case restrict.KindCHAP:
			_, err = cl.SetMutualChapSecret(cctx, &iscsiv1alpha2.SetMutualChapSecretRequest{MutualChapSecret: c.A})
		}
		if err != nil {
			f.add("iscsi %s: %v", c.Name, err)
		}
	}
}

// storageSpecs registers DISK-001, DISK-002 and VOL-001.
func storageSpecs(s *state) {
	disk := func() diskv1.DiskClient {
		c := s.conn("disk", "v1")
		if c == nil {
			rulebook.Skip("disk v1 is not served")
		}
		return diskv1.NewDiskClient(c)
	}
	s.it("DISK-001", func(ctx context.Context) {
		d := disk()
		cctx, cancel := s.call(ctx)
		defer cancel()
		locs, err := d.ListDiskLocations(cctx, &diskv1.ListDiskLocationsRequest{})
		Expect(err).NotTo(HaveOccurred())
		ids, err := d.ListDiskIDs(cctx, &diskv1.ListDiskIDsRequest{})
		Expect(err).NotTo(HaveOccurred())
		Expect(locs.DiskLocations).NotTo(BeEmpty(), "a Windows host has at least its OS disk")
		for n := range locs.DiskLocations {
			Expect(ids.DiskIDs).To(HaveKey(n), "disk %d has a location but no IDs", n)
			st, err := d.GetDiskStats(cctx, &diskv1.GetDiskStatsRequest{DiskNumber: n})
			Expect(err).NotTo(HaveOccurred())
			Expect(st.TotalBytes).To(BeNumerically(">", 0), "disk %d size", n)
		}
		Expect(ids.DiskIDs).To(HaveLen(len(locs.DiskLocations)))
	})
	s.it("DISK-002", func(ctx context.Context) {
		d := disk()
		if s.cfg.ScratchDisk < 0 {
			rulebook.Skip("no --scratch-disk given")
		}
		cctx, cancel := s.call(ctx)
		defer cancel()
		n := uint32(s.cfg.ScratchDisk)
		for _, online := range []bool{false, true} {
			_, err := d.SetDiskState(cctx, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: online})
			Expect(err).NotTo(HaveOccurred())
			st, err := d.GetDiskState(cctx, &diskv1.GetDiskStateRequest{DiskNumber: n})
			Expect(err).NotTo(HaveOccurred())
			Expect(st.IsOnline).To(Equal(online), "disk %d state after SetDiskState(%v)", n, online)
		}
		var before []string
		for i := 0; i < 2; i++ {
			_, err := d.PartitionDisk(cctx, &diskv1.PartitionDiskRequest{DiskNumber: n})
			Expect(err).NotTo(HaveOccurred(), "PartitionDisk #%d", i+1)
			vols := s.volumes(cctx, n)
			Expect(vols).NotTo(BeEmpty(), "volumes of disk %d after PartitionDisk", n)
			if i == 1 {
				Expect(vols).To(Equal(before), "a second PartitionDisk changed the volumes")
			}
			before = vols
		}
	})
	s.it("VOL-001", func(ctx context.Context) {
		if s.cfg.ScratchDisk < 0 {
			rulebook.Skip("no --scratch-disk given")
		}
		c := s.conn("volume", "v1")
		if c == nil {
			rulebook.Skip("volume v1 is not served")
		}
		s.needFS()
		v := volv1.NewVolumeClient(c)
		cctx, cancel := s.call(ctx)
		defer cancel()
		n := uint32(s.cfg.ScratchDisk)
		_, err := disk().PartitionDisk(cctx, &diskv1.PartitionDiskRequest{DiskNumber: n})
		Expect(err).NotTo(HaveOccurred())
		vols := s.volumes(cctx, n)
		Expect(vols).NotTo(BeEmpty())
		id := vols[0]
		_, err = v.FormatVolume(cctx, &volv1.FormatVolumeRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		fm, err := v.IsVolumeFormatted(cctx, &volv1.IsVolumeFormattedRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(fm.Formatted).To(BeTrue(), "IsVolumeFormatted after FormatVolume")
		dir := s.expand(`{pods}\{s}`, s.name(), "")
		Expect(s.fs[0].Mkdir(cctx, dir)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { _ = s.fs[0].Rmdir(ctx, dir, true) })
		_, err = v.MountVolume(cctx, &volv1.MountVolumeRequest{VolumeId: id, TargetPath: dir})
		Expect(err).NotTo(HaveOccurred())
		at, err := v.GetVolumeIDFromTargetPath(cctx, &volv1.GetVolumeIDFromTargetPathRequest{TargetPath: dir})
		Expect(err).NotTo(HaveOccurred())
		Expect(at.VolumeId).To(Equal(id))
		dn, err := v.GetDiskNumberFromVolumeID(cctx, &volv1.GetDiskNumberFromVolumeIDRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(dn.DiskNumber).To(Equal(n))
		st, err := v.GetVolumeStats(cctx, &volv1.GetVolumeStatsRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(st.TotalBytes).To(BeNumerically(">", 0))
		Expect(st.UsedBytes).To(BeNumerically("<=", st.TotalBytes))
		half := st.TotalBytes / 2
		_, err = v.ResizeVolume(cctx, &volv1.ResizeVolumeRequest{VolumeId: id, SizeBytes: half})
		Expect(err).NotTo(HaveOccurred())
		st, err = v.GetVolumeStats(cctx, &volv1.GetVolumeStatsRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(st.TotalBytes).To(Equal(half), "size after ResizeVolume")
		_, err = v.WriteVolumeCache(cctx, &volv1.WriteVolumeCacheRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		_, err = v.UnmountVolume(cctx, &volv1.UnmountVolumeRequest{VolumeId: id, TargetPath: dir})
		Expect(err).NotTo(HaveOccurred())
		_, err = v.GetVolumeIDFromTargetPath(cctx, &volv1.GetVolumeIDFromTargetPathRequest{TargetPath: dir})
		Expect(err).To(HaveOccurred(), "a volume is still found at %q after UnmountVolume", dir)
	})
}

func (s *state) volumes(ctx context.Context, n uint32) []string {
	c := s.conn("volume", "v1")
	if c == nil {
		return nil
	}
	r, err := volv1.NewVolumeClient(c).ListVolumesOnDisk(ctx, &volv1.ListVolumesOnDiskRequest{DiskNumber: n})
	Expect(err).NotTo(HaveOccurred())
	return r.VolumeIds
}

// remoteSpecs registers SMBAPI-001, ISCSIAPI-001 and SYS-001.
func remoteSpecs(s *state) {
	s.it("SMBAPI-001", func(ctx context.Context) {
		if s.cfg.SMBShare == "" {
			rulebook.Skip("no --smb-share given")
		}
		s.needFS()
		var f failures
		for _, m := range s.smb {
			cctx, cancel := s.call(ctx)
			local := s.expand(`{plugins}\{s}`, s.name(), "")
			steps := []struct {
				what string
				do   func() error
			}{
				{"map", func() error { return m.Map(cctx, s.cfg.SMBShare, local, s.cfg.SMBUser, s.cfg.SMBPassword) }},
				{"local path is a link", func() error { return expectBool(s.fs[0].IsLink(cctx, local))(true) }},
				{"unmap", func() error { return m.Unmap(cctx, s.cfg.SMBShare) }},
				{"second unmap refused", func() error {
					if m.Unmap(cctx, s.cfg.SMBShare) == nil {
						return fmt.Errorf("a mapping of %s remained after RemoveSmbGlobalMapping", s.cfg.SMBShare)
					}
					return nil
				}},
			}
			for _, st := range steps {
				if err := st.do(); err != nil {
					f.add("smb %s: %s: %v", m.Version(), st.what, err)
					break
				}
			}
			_ = m.Unmap(cctx, s.cfg.SMBShare)
			_ = s.fs[0].Rmdir(cctx, local, false)
			cancel()
		}
		f.check()
	})
	s.it("ISCSIAPI-001", func(ctx context.Context) {
		cl := s.iscsi()
		if cl == nil {
			rulebook.NotSupported("iscsi v1alpha2 is not served")
		}
		if s.cfg.ISCSIPortal == "" {
			rulebook.Skip("no --iscsi-portal given")
		}
		cctx, cancel := s.call(ctx)
		defer cancel()
		p := &iscsiv1alpha2.TargetPortal{TargetAddress: s.cfg.ISCSIPortal, TargetPort: 3260}
		_, err := cl.AddTargetPortal(cctx, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: p})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx SpecContext) {
			_, _ = cl.RemoveTargetPortal(ctx, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: p})
		})
		disc, err := cl.DiscoverTargetPortal(cctx, &iscsiv1alpha2.DiscoverTargetPortalRequest{TargetPortal: p})
		Expect(err).NotTo(HaveOccurred())
		Expect(disc.Iqns).NotTo(BeEmpty())
		for _, iqn := range disc.Iqns {
			Expect(restrict.New().IQN("iqn", iqn)).To(Succeed(), "discovered IQN")
		}
		iqn := disc.Iqns[0]
		_, err = cl.ConnectTarget(cctx, &iscsiv1alpha2.ConnectTargetRequest{TargetPortal: p, Iqn: iqn})
		Expect(err).NotTo(HaveOccurred())
		td, err := cl.GetTargetDisks(cctx, &iscsiv1alpha2.GetTargetDisksRequest{TargetPortal: p, Iqn: iqn})
		Expect(err).NotTo(HaveOccurred())
		Expect(td.DiskIDs).NotTo(BeEmpty())
		if c := s.conn("disk", "v1"); c != nil {
			ids, err := diskv1.NewDiskClient(c).ListDiskIDs(cctx, &diskv1.ListDiskIDsRequest{})
			Expect(err).NotTo(HaveOccurred())
			for _, id := range td.DiskIDs {
				var n uint32
				_, _ = fmt.Sscan(id, &n)
				Expect(ids.DiskIDs).To(HaveKey(n), "disk %s of the target is not listed", id)
			}
		}
		_, err = cl.DisconnectTarget(cctx, &iscsiv1alpha2.DisconnectTargetRequest{TargetPortal: p, Iqn: iqn})
		Expect(err).NotTo(HaveOccurred())
		_, err = cl.GetTargetDisks(cctx, &iscsiv1alpha2.GetTargetDisksRequest{TargetPortal: p, Iqn: iqn})
		Expect(err).To(HaveOccurred(), "disks of a disconnected target")
		_, err = cl.RemoveTargetPortal(cctx, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: p})
		Expect(err).NotTo(HaveOccurred())
		list, err := cl.ListTargetPortals(cctx, &iscsiv1alpha2.ListTargetPortalsRequest{})
		Expect(err).NotTo(HaveOccurred())
		Expect(slices.ContainsFunc(list.TargetPortals, func(tp *iscsiv1alpha2.TargetPortal) bool {
			return tp.TargetAddress == p.TargetAddress && tp.TargetPort == p.TargetPort
		})).To(BeFalse(), "portal still listed after RemoveTargetPortal")
	})
	s.it("SYS-001", func(ctx context.Context) {
		c := s.conn("system", "v1alpha1")
		if c == nil {
			rulebook.NotSupported("system v1alpha1 is not served")
		}
		cctx, cancel := s.call(ctx)
		defer cancel()
		r, err := sysv1alpha1.NewSystemClient(c).GetBIOSSerialNumber(cctx, &sysv1alpha1.GetBIOSSerialNumberRequest{})
		Expect(err).NotTo(HaveOccurred())
		Expect(r.SerialNumber).NotTo(BeEmpty())
	})
}
