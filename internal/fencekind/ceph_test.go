package fencekind

import (
	"encoding/base64"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"
)

// TestCephKeyEncoding: a key in cephx's encoding (type AES, 16 secret
// bytes), different each time.
func TestCephKeyEncoding(t *testing.T) {
	k1, k2 := cephKey(), cephKey()
	raw, err := base64.StdEncoding.DecodeString(k1)
	if err != nil || len(raw) != 28 || binary.LittleEndian.Uint16(raw) != 1 || binary.LittleEndian.Uint16(raw[10:]) != 16 || k1 == k2 {
		t.Fatalf("key %q: %v, %d bytes", k1, err, len(raw))
	}
}

// TestCephWorld: with Ceph, the driver runs the Ceph image with the Ceph
// backend as the fencer, and writers run ceph-writer as client.writer
// against the mon, with a copy of their log on their node.
func TestCephWorld(t *testing.T) {
	w := World{Images: DefaultImages, StorageNode: "cp", RunID: "r1", Storage: StorageCeph}
	s := DriverStatefulSet(w)
	c := s.Spec.Template.Spec.Containers[0]
	cmd := strings.Join(c.Command, " ")
	for _, want := range []string{"--backend=ceph", "--ceph-mon-host=$(CEPH_MON_HOST)", "--ceph-user=fencer", "--ceph-keyring=/etc/ceph-keys/fencer.keyring"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("driver command %q lacks %q", cmd, want)
		}
	}
	if c.Image != DefaultImages.Ceph || strings.Contains(cmd, "refstore") {
		t.Errorf("driver image %s, command %q", c.Image, cmd)
	}
	target := CephTarget(netip.MustParseAddr("10.244.0.9"), "r1")
	p := WriterPod(w.Images, "ns", "c1-b", "worker2", target)
	wc := p.Spec.Containers[0]
	cmd = strings.Join(wc.Command, " ")
	for _, want := range []string{"ceph-writer", "--mon-host=10.244.0.9", "--user=writer", "--id=c1-b", "--log-copy=/var/log/fenceproof-writers/c1-b.log"} {
		if !strings.Contains(cmd, want) {
			t.Errorf("writer command %q lacks %q", cmd, want)
		}
	}
	if len(p.Spec.Volumes) != 2 || p.Spec.Volumes[1].HostPath.Path != HostLogDir+"/r1/writers" {
		t.Errorf("writer volumes %+v", p.Spec.Volumes)
	}
	if got := w.WriterLogCopy("c1-b"); got != "fenceproof-fence/r1/writers/c1-b.log" {
		t.Errorf("WriterLogCopy %s", got)
	}
	// The refstore world is unchanged.
	w.Storage = ""
	if cmd := strings.Join(DriverStatefulSet(w).Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--backend=refstore") {
		t.Errorf("refstore driver command %q", cmd)
	}
}
