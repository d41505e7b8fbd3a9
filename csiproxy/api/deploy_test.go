package api

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestPodManifestMountsEveryPipe: the unprivileged pod's manifest mounts
// the pipe of every group version, and nothing else of the host.
func TestPodManifestMountsEveryPipe(t *testing.T) {
	b, err := os.ReadFile("../deploy/sanity-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\s+path: \\\\\.\\pipe\\(\S+)$`).FindAllSubmatch(b, -1) {
		got = append(got, string(m[1]))
	}
	var want []string
	for _, gv := range Versions {
		want = append(want, gv.PipeBase())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("hostPath pipes %v, want %v", got, want)
	}
	if n := len(regexp.MustCompile(`(?m)^\s+path: `).FindAll(b, -1)); n != len(want) {
		t.Fatalf("%d hostPath volumes, want only the %d pipes", n, len(want))
	}
}

// TestManifestsArePods: both manifests decode strictly as Pods (no
// unknown field) and run fenceproof csiproxy-sanity on a Windows node; the
// HostProcess one as a HostProcess pod on the host's network.
func TestManifestsArePods(t *testing.T) {
	for _, f := range []string{"sanity-pod.yaml", "sanity-hostprocess.yaml"} {
		b, err := os.ReadFile("../deploy/" + f)
		if err != nil {
			t.Fatal(err)
		}
		var p corev1.Pod
		if err := yaml.UnmarshalStrict(b, &p); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if p.Kind != "Pod" || p.Spec.NodeSelector["kubernetes.io/os"] != "windows" || len(p.Spec.Containers) != 1 ||
			!strings.Contains(strings.Join(p.Spec.Containers[0].Command, " "), "csiproxy-sanity") {
			t.Errorf("%s: not a Windows pod running csiproxy-sanity: %+v", f, p.Spec)
		}
		hp := p.Spec.SecurityContext != nil && p.Spec.SecurityContext.WindowsOptions != nil &&
			p.Spec.SecurityContext.WindowsOptions.HostProcess != nil && *p.Spec.SecurityContext.WindowsOptions.HostProcess
		if want := f == "sanity-hostprocess.yaml"; hp != want || (hp && !p.Spec.HostNetwork) {
			t.Errorf("%s: HostProcess %v (host network %v), want %v", f, hp, p.Spec.HostNetwork, want)
		}
	}
}
