package conformance

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fenceproof/fenceproof/csiproxy/api"
	"github.com/fenceproof/fenceproof/rulebook"
)

func (s *state) diskClient(method string) (api.DiskClient, api.GroupVersion) {
	vs := s.of("disk", method)
	if len(vs) == 0 {
		rulebook.NotSupported("no served disk version has %s", method)
	}
	return api.NewDiskClient(s.conns[vs[0].PipeBase()], vs[0].Version), vs[0]
}

func (s *state) volumeClient(method string) api.VolumeClient {
	vs := s.of("volume", method)
	if len(vs) == 0 {
		rulebook.NotSupported("no served volume version has %s", method)
	}
	return api.NewVolumeClient(s.conns[vs[0].PipeBase()], vs[0].Version)
}

func (s *state) needScratch() uint32 {
	if s.cfg.ScratchDisk < 0 {
		rulebook.Skip("no --scratch-disk given")
	}
	return uint32(s.cfg.ScratchDisk)
}

// storageSpecs registers DISK-001..003 and VOL-001.
func storageSpecs(s *state) {
	s.it("DISK-001", func(ctx context.Context) {
		d, _ := s.diskClient("ListDiskIDs")
		cctx, cancel := s.call(ctx)
		defer cancel()
		locs, err := d.ListDiskLocations(cctx, &api.DiskListDiskLocationsRequest{})
		Expect(err).NotTo(HaveOccurred())
		ids, err := d.ListDiskIDs(cctx, &api.DiskListDiskIDsRequest{})
		Expect(err).NotTo(HaveOccurred())
		Expect(locs.DiskLocations).NotTo(BeEmpty(), "a Windows host has at least its OS disk")
		for n := range locs.DiskLocations {
			Expect(ids.DiskIDs).To(HaveKey(n), "disk %d has a location but no IDs", n)
			st, err := d.GetDiskStats(cctx, &api.DiskGetDiskStatsRequest{DiskNumber: n})
			Expect(err).NotTo(HaveOccurred())
			Expect(st.TotalBytes).To(BeNumerically(">", 0), "disk %d size", n)
		}
		Expect(ids.DiskIDs).To(HaveLen(len(locs.DiskLocations)))
	})
	s.it("DISK-002", func(ctx context.Context) {
		d, _ := s.diskClient("SetDiskState")
		n := s.needScratch()
		cctx, cancel := s.call(ctx)
		defer cancel()
		for _, online := range []bool{false, true} {
			_, err := d.SetDiskState(cctx, &api.DiskSetDiskStateRequest{DiskNumber: n, IsOnline: online})
			Expect(err).NotTo(HaveOccurred())
			st, err := d.GetDiskState(cctx, &api.DiskGetDiskStateRequest{DiskNumber: n})
			Expect(err).NotTo(HaveOccurred())
			Expect(st.IsOnline).To(Equal(online), "disk %d state after SetDiskState(%v)", n, online)
		}
		var before []string
		for i := 0; i < 2; i++ {
			_, err := d.PartitionDisk(cctx, &api.DiskPartitionDiskRequest{DiskNumber: n})
			Expect(err).NotTo(HaveOccurred(), "PartitionDisk #%d", i+1)
			vols := s.volumes(cctx, n)
			Expect(vols).NotTo(BeEmpty(), "volumes of disk %d after PartitionDisk", n)
			if i == 1 {
				Expect(vols).To(Equal(before), "a second PartitionDisk changed the volumes")
			}
			before = vols
		}
	})
	s.it("DISK-003", func(ctx context.Context) {
		vs := s.of("disk", "Rescan")
		if len(vs) == 0 {
			rulebook.NotSupported("no served disk version has Rescan")
		}
		var f failures
		for _, gv := range vs {
			cctx, cancel := s.call(ctx)
			if _, err := api.NewDiskClient(s.conns[gv.PipeBase()], gv.Version).Rescan(cctx, &api.DiskRescanRequest{}); err != nil {
				f.add("disk %s Rescan: %v", gv.Version, err)
			}
			cancel()
		}
		f.check()
	})
	s.it("VOL-001", func(ctx context.Context) {
		n := s.needScratch()
		v := s.volumeClient("GetVolumeIDFromTargetPath")
		d, _ := s.diskClient("PartitionDisk")
		if s.fs() == nil {
			rulebook.NotSupported("no filesystem version is served")
		}
		cctx, cancel := s.call(ctx)
		defer cancel()
		_, err := d.PartitionDisk(cctx, &api.DiskPartitionDiskRequest{DiskNumber: n})
		Expect(err).NotTo(HaveOccurred())
		vols := s.volumes(cctx, n)
		Expect(vols).NotTo(BeEmpty())
		id := vols[0]
		_, err = v.FormatVolume(cctx, &api.VolumeFormatVolumeRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		fm, err := v.IsVolumeFormatted(cctx, &api.VolumeIsVolumeFormattedRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(fm.Formatted).To(BeTrue(), "IsVolumeFormatted after FormatVolume")
		dir := s.cfg.PodPath + `\` + s.name()
		Expect(s.mkdir(cctx, dir)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { s.rmdir(ctx, dir) })
		_, err = v.MountVolume(cctx, &api.VolumeMountVolumeRequest{VolumeId: id, TargetPath: dir})
		Expect(err).NotTo(HaveOccurred())
		at, err := v.GetVolumeIDFromTargetPath(cctx, &api.VolumeGetVolumeIDFromTargetPathRequest{TargetPath: dir})
		Expect(err).NotTo(HaveOccurred())
		Expect(at.VolumeId).To(Equal(id))
		dn, err := v.GetDiskNumberFromVolumeID(cctx, &api.VolumeGetDiskNumberFromVolumeIDRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(dn.DiskNumber).To(Equal(n))
		st, err := v.GetVolumeStats(cctx, &api.VolumeGetVolumeStatsRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(st.TotalBytes).To(BeNumerically(">", 0))
		Expect(st.UsedBytes).To(BeNumerically("<=", st.TotalBytes))
		_, err = v.ResizeVolume(cctx, &api.VolumeResizeVolumeRequest{VolumeId: id, SizeBytes: 0})
		Expect(err).NotTo(HaveOccurred(), "ResizeVolume to the largest size")
		grown, err := v.GetVolumeStats(cctx, &api.VolumeGetVolumeStatsRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		Expect(grown.TotalBytes).To(BeNumerically(">=", st.TotalBytes), "size after ResizeVolume(0)")
		_, err = v.WriteVolumeCache(cctx, &api.VolumeWriteVolumeCacheRequest{VolumeId: id})
		Expect(err).NotTo(HaveOccurred())
		_, err = v.UnmountVolume(cctx, &api.VolumeUnmountVolumeRequest{VolumeId: id, TargetPath: dir})
		Expect(err).NotTo(HaveOccurred())
		_, err = v.GetVolumeIDFromTargetPath(cctx, &api.VolumeGetVolumeIDFromTargetPathRequest{TargetPath: dir})
		Expect(err).To(HaveOccurred(), "a volume is still found at %q after UnmountVolume", dir)
	})
}

func (s *state) volumes(ctx context.Context, n uint32) []string {
	r, err := s.volumeClient("ListVolumesOnDisk").ListVolumesOnDisk(ctx, &api.VolumeListVolumesOnDiskRequest{DiskNumber: n})
	Expect(err).NotTo(HaveOccurred())
	return r.VolumeIds
}
