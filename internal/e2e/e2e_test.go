package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
)

func TestProbePod(t *testing.T) {
	p := ProbePod("ns1", "server", "node-b", map[string]string{"app": "server"})
	if p.Namespace != "ns1" || p.Name != "server" || p.Spec.NodeName != "node-b" || p.Labels["app"] != "server" {
		t.Fatalf("metadata/placement: %+v", p.ObjectMeta)
	}
	c := p.Spec.Containers[0]
	if c.Image != ProbeImage || c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("image %q pull %q: want %q and Never (nothing can be pulled)", c.Image, c.ImagePullPolicy, ProbeImage)
	}
	want := []string{"/usr/local/bin/probe", "serve", "--tcp", "80,81", "--udp", "80,81"}
	if len(c.Command) != len(want) {
		t.Fatalf("command %q, want %q", c.Command, want)
	}
	for i := range want {
		if c.Command[i] != want[i] {
			t.Fatalf("command %q, want %q", c.Command, want)
		}
	}
	if len(c.Ports) != 2*len(ProbePorts) {
		t.Errorf("ports %v: want TCP and UDP for each of %v", c.Ports, ProbePorts)
	}
}

func TestEnabled(t *testing.T) {
	t.Setenv(EnvEnable, "")
	if Enabled(envconf.New()) {
		t.Error("enabled without FENCEPROOF_E2E or --kubeconfig")
	}
	if !Enabled(envconf.NewWithKubeConfig("/tmp/kubeconfig")) {
		t.Error("not enabled with a kubeconfig")
	}
	t.Setenv(EnvEnable, "1")
	if !Enabled(nil) {
		t.Error("not enabled with FENCEPROOF_E2E=1")
	}
}
