package e2e

import (
	"archive/tar"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sourceCluster runs a bash snippet with fixtures/cluster/cluster.sh sourced
// (its functions, not its main), the cache in dir/cache and dir/bin first
// in PATH.
func sourceCluster(t *testing.T, dir, snippet string, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"-c", `source "$1" && ` + snippet, "prune-test", filepath.Join(clusterDir(t), "cluster.sh")}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FENCEPROOF_CACHE="+filepath.Join(dir, "cache"), "CLUSTER=prune-test")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", snippet, err, out)
	}
	return string(out)
}

// archive writes a docker-save archive whose manifest names config digest
// hex and tag.
func archive(t *testing.T, path, hex, tag string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	m := fmt.Sprintf(`[{"Config":"%s.json","RepoTags":["%s"],"Layers":[]}]`, hex, tag)
	tw.WriteHeader(&tar.Header{Name: "manifest.json", Mode: 0o644, Size: int64(len(m))})
	tw.Write([]byte(m))
	tw.Close()
}

func id(c byte) string { return strings.Repeat(string(c), 64) }

// TestPruneNodesRemovesOnlyUnusedVersionsOfOurs: cluster.sh prune_nodes
// removes from every node exactly the images of ours that are not the ones
// just loaded and that no container uses, and the untagged leftovers of
// moved tags; it keeps everything else (the preloaded images, the loaded
// ones, whatever a container uses, names that merely look like ours). The
// nodes are a stand-in docker answering crictl with a fixed image list and
// recording what crictl rmi is asked to remove.
func TestPruneNodesRemovesOnlyUnusedVersionsOfOurs(t *testing.T) {
	for _, tool := range []string{"jq", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "cache", "out", "kind"), 0o755)
	images := `{"images": [
	  {"id": "sha256:` + id('a') + `", "repoTags": ["registry.k8s.io/pause:3.10"], "size": "1"},
	  {"id": "sha256:` + id('c') + `", "repoTags": ["docker.io/library/fenceproof:dev"], "size": "1000000"},
	  {"id": "sha256:` + id('d') + `", "repoTags": ["docker.io/library/fenceproof:v0.1-3-gabc"], "size": "150000000"},
	  {"id": "sha256:` + id('e') + `", "repoTags": [], "size": "40000000"},
	  {"id": "sha256:` + id('f') + `", "repoTags": ["docker.io/library/fenceproof-probe:dev"], "size": "1"},
	  {"id": "sha256:` + id('1') + `", "repoTags": [], "size": "1"},
	  {"id": "sha256:` + id('2') + `", "repoTags": ["docker.io/fenceproof/csi-addons-sidecar:v0.13.0"], "size": "1"},
	  {"id": "sha256:` + id('3') + `", "repoTags": ["quay.io/cilium/cilium:v1.15.19"], "size": "1"},
	  {"id": "sha256:` + id('4') + `", "repoTags": ["docker.io/someone/fenceproofish:1"], "size": "1"},
	  {"id": "sha256:` + id('5') + `", "repoTags": ["docker.io/fenceproof/kind-node:v1.32.4"], "size": "1"}
	]}`
	// f and 1 are used by containers (1 by an exited one): kept.
	containers := `{"containers": [{"imageRef": "sha256:` + id('f') + `"}, {"imageRef": "sha256:` + id('1') + `"}]}`
	os.WriteFile(filepath.Join(dir, "images.json"), []byte(images), 0o644)
	os.WriteFile(filepath.Join(dir, "containers.json"), []byte(containers), 0o644)
	os.WriteFile(filepath.Join(dir, "bin", "docker"), []byte(`#!/bin/bash
[[ $1 == exec ]] || exit 1
node=$2; shift 2
case "$*" in
  "crictl images -o json") cat `+dir+`/images.json ;;
  "crictl ps -a -o json") cat `+dir+`/containers.json ;;
  "crictl rmi "*) shift 2; echo "$node $*" >> `+dir+`/removed ;;
  *) exit 1 ;;
esac
`), 0o755)
	os.WriteFile(filepath.Join(dir, "cache", "out", "kind", "kind"), []byte("#!/bin/bash\n[[ \"$*\" == 'get nodes --name prune-test' ]] && printf 'n1\\nn2\\n'\n"), 0o755)
	// The archives just loaded: fenceproof:dev is c; the probe's is not on the nodes yet.
	archive(t, filepath.Join(dir, "fenceproof.tar"), id('c'), "fenceproof:dev")
	archive(t, filepath.Join(dir, "fenceproof-probe.tar"), id('9'), "fenceproof-probe:dev")

	out := sourceCluster(t, dir, `prune_nodes "$2" "$3"`+"; echo", filepath.Join(dir, "fenceproof.tar"), filepath.Join(dir, "fenceproof-probe.tar"))
	b, _ := os.ReadFile(filepath.Join(dir, "removed"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{"sha256:" + id('d'), "sha256:" + id('e'), "sha256:" + id('2')}
	if len(lines) != 2 {
		t.Fatalf("crictl rmi ran %d times, want once per node:\n%s\n%s", len(lines), b, out)
	}
	for i, node := range []string{"n1", "n2"} {
		f := strings.Fields(lines[i])
		got := f[1:]
		slices.Sort(got)
		slices.Sort(want)
		if f[0] != node || !slices.Equal(got, want) {
			t.Errorf("removed from %s: %v, want %v", f[0], got, want)
		}
	}
	if !strings.Contains(out, "pruned 3 unused image version(s) of ours from n1 (190 MB)") {
		t.Errorf("prune_nodes did not say what it removed:\n%s", out)
	}
}

// TestPruneOwnArchives: the cache's archive sets go when no checkout links
// them and nobody used them for OWN_KEEP_HOURS; linked and recent ones stay.
func TestPruneOwnArchives(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "cache", "out", "own")
	old := time.Now().Add(-48 * time.Hour)
	for name, mtime := range map[string]time.Time{"current": old, "worktree": old, "recent": time.Now().Add(-time.Hour), "stale1": old, "stale2": old} {
		d := filepath.Join(own, name)
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "fenceproof.tar"), []byte("x"), 0o644)
		os.Chtimes(d, mtime, mtime)
	}
	out := sourceCluster(t, dir, `prune_own_archives "$2" "$3"`, filepath.Join(own, "current"), filepath.Join(own, "worktree"))
	left, _ := filepath.Glob(filepath.Join(own, "*"))
	for i := range left {
		left[i] = filepath.Base(left[i])
	}
	if !slices.Equal(left, []string{"current", "recent", "worktree"}) {
		t.Errorf("left %v, want current, recent, worktree", left)
	}
	if !strings.Contains(out, filepath.Join(own, "stale1")) || !strings.Contains(out, filepath.Join(own, "stale2")) {
		t.Errorf("prune_own_archives did not name what it removed: %q", out)
	}
}
