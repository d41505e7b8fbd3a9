package e2e

import (
	"archive/tar"
	"encoding/base64"
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
// just loaded and that no container was created from, and the leftovers of
// moved tags (an image left with kind's import ref and its ID only), each
// with all its refs; it keeps everything else (the preloaded images, the
// loaded ones, whatever a container uses by name or by ID, names that merely
// look like ours). The nodes are a stand-in docker answering ctr with a
// listing in ctr's format and recording what ctr images rm is asked to do.
func TestPruneNodesRemovesOnlyUnusedVersionsOfOurs(t *testing.T) {
	for _, tool := range []string{"jq", "bash", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "cache", "out", "kind"), 0o755)
	// One image per letter: its manifest digest m<x>, its ID <x>, its tags.
	type img struct {
		c    byte
		tags []string
		size string
	}
	images := []img{
		{'a', []string{"registry.k8s.io/pause:3.10"}, "300.0 KiB"},
		{'c', []string{"docker.io/library/fenceproof:dev"}, "49.0 MiB"},          // just loaded
		{'d', []string{"docker.io/library/fenceproof:v0.1-3-gabc"}, "140.0 MiB"}, // an older version
		{'e', nil, "1.0 GiB"}, // a moved tag's leftover
		{'f', []string{"docker.io/library/fenceproof-probe:dev"}, "2.6 MiB"}, // used by name
		{'1', nil, "1.0 MiB"}, // used by ID (an exited container)
		{'2', []string{"docker.io/fenceproof/csi-addons-sidecar:v0.13.0"}, "49.7 MiB"},
		{'3', []string{"quay.io/cilium/cilium:v1.15.19"}, "900.0 MiB"},
		{'4', []string{"docker.io/someone/fenceproofish:1"}, "1.0 MiB"},
		{'5', []string{"docker.io/library/fenceproof:v0.2", "docker.io/library/other:1"}, "1.0 MiB"}, // one tag not ours
	}
	var ls strings.Builder
	ls.WriteString("REF TYPE DIGEST SIZE PLATFORMS LABELS\n")
	const typ = "application/vnd.docker.distribution.manifest.v2+json"
	for _, im := range images {
		m := "sha256:" + strings.Repeat(string(im.c), 63) + "0"
		refs := append(slices.Clone(im.tags), "import-2026-11-28@"+m, "sha256:"+id(im.c))
		for _, r := range refs {
			fmt.Fprintf(&ls, "%s %s %s %s linux/amd64 io.cri-containerd.image=managed\n", r, typ, m, im.size)
		}
	}
	meta := func(imageID string) string {
		v := base64.StdEncoding.EncodeToString([]byte(`{"Version":"v1","Metadata":{"Config":{"image":{"image":"` + imageID + `"}}}}`))
		return `"Extensions":{"io.cri-containerd.container.metadata":{"type_url":"x","value":"` + v + `"}}`
	}
	containers := `{"Image":"docker.io/library/fenceproof-probe:dev",` + meta("sha256:"+id('f')) + `}
{"Image":"docker.io/library/fenceproof:dev",` + meta("sha256:"+id('1')) + `}
{"Image":"registry.k8s.io/pause:3.10","Extensions":{"io.cri-containerd.sandbox.metadata":{"type_url":"x","value":"AAEC"}}}
`
	os.WriteFile(filepath.Join(dir, "images.txt"), []byte(ls.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "containers.json"), []byte(containers), 0o644)
	os.WriteFile(filepath.Join(dir, "bin", "docker"), []byte(`#!/bin/bash
[[ $1 == exec ]] || exit 1
node=$2; shift 2
case "$*" in
  "ctr -n k8s.io images ls") cat `+dir+`/images.txt ;;
  "sh -c "*"containers info"*) cat `+dir+`/containers.json ;;
  "ctr -n k8s.io images rm "*) shift 5; echo "$node $*" >> `+dir+`/removed ;;
  *) echo "docker stand-in: unexpected: $*" >&2; exit 1 ;;
esac
`), 0o755)
	os.WriteFile(filepath.Join(dir, "cache", "out", "kind", "kind"), []byte("#!/bin/bash\n[[ \"$*\" == 'get nodes --name prune-test' ]] && printf 'n1\\nn2\\n'\n"), 0o755)
	// The archives just loaded: fenceproof:dev is c; the probe's is not on the nodes yet.
	archive(t, filepath.Join(dir, "fenceproof.tar"), id('c'), "fenceproof:dev")
	archive(t, filepath.Join(dir, "fenceproof-probe.tar"), id('9'), "fenceproof-probe:dev")

	out := sourceCluster(t, dir, `prune_nodes "$2" "$3"`, filepath.Join(dir, "fenceproof.tar"), filepath.Join(dir, "fenceproof-probe.tar"))
	b, _ := os.ReadFile(filepath.Join(dir, "removed"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var want []string
	for _, im := range images {
		if im.c == 'd' || im.c == 'e' || im.c == '2' {
			m := "sha256:" + strings.Repeat(string(im.c), 63) + "0"
			want = append(want, append(slices.Clone(im.tags), "import-2026-11-28@"+m, "sha256:"+id(im.c))...)
		}
	}
	slices.Sort(want)
	if len(lines) != 2 {
		t.Fatalf("ctr images rm ran %d times, want once per node:\n%s\n%s", len(lines), b, out)
	}
	for i, node := range []string{"n1", "n2"} {
		f := strings.Fields(lines[i])
		got := f[1:]
		slices.Sort(got)
		if f[0] != node || !slices.Equal(got, want) {
			t.Errorf("removed from %s: %v\nwant %v", f[0], got, want)
		}
	}
	if !strings.Contains(out, "pruned 3 unused image version(s) of ours from n1 (1271 MB)") {
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
