package e2e

import (
	"archive/tar"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func writeTar(t *testing.T, files map[string]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "img.tar")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func TestArchiveImageID(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, want, wantErr string
	}{
		{"docker 20.10 layout", `[{"Config":"abc123.json","RepoTags":["fenceproof-probe:dev"]}]`, "sha256:abc123", ""},
		{"OCI layout of newer Docker", `[{"Config":"blobs/sha256/def456","RepoTags":["x:y"]}]`, "sha256:def456", ""},
		{"two images", `[{"Config":"a.json"},{"Config":"b.json"}]`, "", "lists 2 images"},
		{"bad json", `{`, "", "manifest.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ArchiveImageID(writeTar(t, map[string]string{"manifest.json": tc.manifest, "layer.tar": "x"}))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := ArchiveImageID(writeTar(t, map[string]string{"other": "x"})); err == nil {
		t.Error("an archive without manifest.json: want an error")
	}
}

func node(name, podCIDR string, addrs ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDR: podCIDR}}
	if podCIDR != "" {
		n.Spec.PodCIDRs = []string{podCIDR}
	}
	n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
	for _, a := range addrs {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a})
	}
	return n
}

func TestPodRoutes(t *testing.T) {
	cs := fake.NewSimpleClientset(
		node("cp", "10.244.0.0/24", "fc00::2", "172.18.0.2"),
		node("w1", "10.244.1.0/24", "172.18.0.3"),
	)
	got, err := PodRoutes(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	want := []Route{
		{Node: "cp", To: netip.MustParsePrefix("10.244.0.0/24"), Via: netip.MustParseAddr("172.18.0.2")},
		{Node: "w1", To: netip.MustParsePrefix("10.244.1.0/24"), Via: netip.MustParseAddr("172.18.0.3")},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("routes %v, want %v (the InternalIP of the pod CIDR's family)", got, want)
	}

	if _, err := PodRoutes(context.Background(), fake.NewSimpleClientset(node("w", "10.244.2.0/24", "fc00::3"))); err == nil ||
		!strings.Contains(err.Error(), "no InternalIP of the family") {
		t.Errorf("an IPv4 pod CIDR on a node with only an IPv6 InternalIP: err %v", err)
	}
	if _, err := PodRoutes(context.Background(), fake.NewSimpleClientset(node("w", "", "172.18.0.3"))); err == nil {
		t.Error("no pod CIDRs at all: want an error, not an empty route list")
	}
}
