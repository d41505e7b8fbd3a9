package fencekind

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/e2e-framework/klient/decoder"
	"sigs.k8s.io/e2e-framework/klient/k8s"
)

// TestUpstreamFilesDecode reads the csi-addons CRDs and RBAC that `make
// cluster-image` copies from the module and checks they hold what the
// world relies on. It skips when the build has not run on this machine.
func TestUpstreamFilesDecode(t *testing.T) {
	dir := DeployDir()
	if _, err := os.Stat(filepath.Join(dir, "crds.yaml")); err != nil {
		t.Skipf("no csi-addons deploy files in %s (run `make cluster-image`)", dir)
	}
	names := map[string]bool{}
	for _, f := range UpstreamFiles {
		err := decoder.DecodeEachFile(context.Background(), os.DirFS(dir), f, func(_ context.Context, obj k8s.Object) error {
			kind := obj.(runtime.Object).GetObjectKind().GroupVersionKind().Kind
			names[kind+"/"+obj.GetName()] = true
			return nil
		})
		if err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
	}
	for _, want := range []string{
		"CustomResourceDefinition/networkfences.csiaddons.openshift.io",
		"CustomResourceDefinition/networkfenceclasses.csiaddons.openshift.io",
		"CustomResourceDefinition/csiaddonsnodes.csiaddons.openshift.io",
		"ServiceAccount/" + ControllerName,
		"ClusterRole/csi-addons-manager-role",
	} {
		if !names[want] {
			t.Errorf("upstream files lack %s", want)
		}
	}
}
