package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// clusterDir is fixtures/cluster of this checkout.
func clusterDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "fixtures", "cluster")
}

// TestCSIAddonsStepOnEmptyModuleCache pins the bug that failed a machine's
// first `make e2e`: build-image.sh's csi-addons step asked `go list -m -f
// {{.Dir}}` for the module's directory before anything had downloaded the
// module, got an empty string, and failed with `cp: cannot stat
// '/deploy/controller/crds.yaml'`. Developers' module caches always held
// the module, so only a cold machine saw it. The step runs here against an
// empty module cache and an empty cluster cache; `go build` is stubbed (the
// binaries take minutes and are not the point), every other go command is
// the real one, so the module really is fetched from the module proxy.
// FENCEPROOF_BUILD_IMAGE_SH runs another copy of the script (e.g. an old
// commit's, to see this test fail on it).
func TestCSIAddonsStepOnEmptyModuleCache(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads the csi-addons module graph from the module proxy (~10 s)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (make e2e-deps installs it)", tool)
		}
	}
	script := os.Getenv("FENCEPROOF_BUILD_IMAGE_SH")
	if script == "" {
		script = filepath.Join(clusterDir(t), "build-image.sh")
	}
	script, _ = filepath.Abs(script)

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	// The stub: `go build -o DIR pkg...` creates DIR/<last element of pkg>.
	os.WriteFile(filepath.Join(bin, "go"), []byte(`#!/usr/bin/env bash
if [[ $1 == build ]]; then
  out=""; pkgs=()
  while (( $# )); do
    case $1 in -o) out=$2; shift ;; -ldflags|-tags) shift ;; -*|build) ;; *) pkgs+=("$1") ;; esac
    shift
  done
  for p in "${pkgs[@]}"; do printf '#!/bin/sh\n' > "$out/${p##*/}"; chmod +x "$out/${p##*/}"; done
  exit 0
fi
exec `+goBin+` "$@"
`), 0o755)

	modcache := filepath.Join(dir, "gomodcache")
	cache := filepath.Join(dir, "cache")
	cmd := exec.Command("bash", "-c", `source "$1" && go_build_csi_addons && csi_addons_ok`, "build-image", script)
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOMODCACHE="+modcache, "FENCEPROOF_CACHE="+cache)
	out, err := cmd.CombinedOutput()
	// Module cache files are read-only; let TempDir's cleanup remove them.
	defer exec.Command("chmod", "-R", "u+w", modcache).Run()
	if err != nil {
		t.Fatalf("the csi-addons step failed on an empty module cache: %v\n%s", err, out)
	}
	deploy := filepath.Join(cache, "out", "csi-addons", "deploy")
	for _, f := range []string{"crds.yaml", "rbac.yaml", "VERSION"} {
		b, err := os.ReadFile(filepath.Join(deploy, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: missing or empty after the step (%v)\n%s", f, err, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(deploy, "VERSION")); strings.TrimSpace(string(b)) != "v0.14.0" {
		t.Errorf("VERSION = %q, want the build module's v0.14.0", b)
	}
}

// TestBuildStepsReadModulesOnlyAfterDownload is the static half of the
// same defect class: no build or install step, and no Go code that runs
// one, may read a module's directory or the module cache's files through a
// command that does not download first. `go list -m -f {{.Dir}}` prints
// nothing for a module that is not cached, and
// $GOMODCACHE/cache/download/... exists only after some earlier run; `go
// mod download -json` (internal/gomod in Go) downloads and then names both.
func TestBuildStepsReadModulesOnlyAfterDownload(t *testing.T) {
	root := filepath.Join(clusterDir(t), "..", "..")
	var scripts []string
	for _, pat := range []string{"fixtures/cluster/*.sh", "mk/*.mk", "mk/*.sh", ".ci/*", "Makefile"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		scripts = append(scripts, m...)
	}
	if len(scripts) < 5 {
		t.Fatalf("found only %d build scripts under %s", len(scripts), root)
	}
	shell := []*regexp.Regexp{
		regexp.MustCompile(`go\s+list\s+-m\b[^|;&\n]*\{\{\s*\.Dir\s*\}\}`),
		regexp.MustCompile(`GOMODCACHE[^\n]*/cache/download`),
		regexp.MustCompile(`go\s+env\s+GOMODCACHE`),
	}
	goSource := []*regexp.Regexp{
		regexp.MustCompile(`"list",\s*"-m"[^\n]*\{\{\s*\.Dir\s*\}\}`),
		regexp.MustCompile(`"env",\s*"GOMODCACHE"`),
	}
	check := func(f string, bad []*regexp.Regexp, comment string) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), comment) {
				continue
			}
			for _, re := range bad {
				if re.MatchString(line) {
					rel, _ := filepath.Rel(root, f)
					t.Errorf("%s:%d reads the module cache without downloading first (use `go mod download -json MODULE` and its .Dir/.Info, or internal/gomod): %s",
						rel, i+1, strings.TrimSpace(line))
				}
			}
		}
	}
	for _, f := range scripts {
		check(f, shell, "#")
	}
	n := 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || (d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			n++
			check(p, goSource, "//")
		}
		return nil
	})
	if n < 100 {
		t.Fatalf("walked only %d Go files under %s", n, root)
	}
}

// TestStartedDockerdInheritsNoLock pins the bug that held a machine-wide
// lock for good: ensure_docker (fixtures/cluster/lib.sh) started dockerd
// from inside `flock LOCK make ...`, dockerd and its containerd inherited
// the lock's descriptor, and every later run waited on it forever. The
// dockerd here is a stand-in on PATH that records its open descriptors.
func TestStartedDockerdInheritsNoLock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("ensure_docker starts dockerd only as root")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	fds := filepath.Join(dir, "dockerd-fds")
	// docker info fails until the stand-in dockerd has run.
	os.WriteFile(filepath.Join(bin, "docker"), []byte("#!/bin/sh\n[ -e "+fds+" ]\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "dockerd"), []byte("#!/bin/sh\nls /proc/$$/fd > "+fds+".tmp; mv "+fds+".tmp "+fds+"\n"), 0o755)
	lock := filepath.Join(dir, "lock")
	script := `exec 7> "$1"; exec 9> "$1.build"; source "$2" && ensure_docker`
	cmd := exec.Command("bash", "-c", script, "t", lock, filepath.Join(clusterDir(t), "lib.sh"))
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FENCEPROOF_CACHE="+filepath.Join(dir, "cache"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ensure_docker: %v\n%s", err, out)
	}
	b, err := os.ReadFile(fds)
	if err != nil {
		t.Fatal(err)
	}
	// The stand-in is a shell script: its shell holds descriptors of its
	// own (the script file); the caller's locks are 7 and 9.
	for _, fd := range strings.Fields(string(b)) {
		if fd == "7" || fd == "9" {
			t.Errorf("the started dockerd inherited the caller's lock descriptor %s (open: %s)", fd, strings.Fields(string(b)))
		}
	}
}

// TestStaleClusterIsCreatedAnew pins a CI hazard: a session that kept its
// kind cluster ends, its dockerd dies with it, and the next run's dockerd
// finds the node containers stopped (kind does not start them again).
// cluster.sh used to call such a cluster existing and waited ten minutes for
// nodes that never came back. Now it deletes it, so it is created anew.
// kind and docker are stand-ins that report the containers' states.
func TestStaleClusterIsCreatedAnew(t *testing.T) {
	for _, tc := range []struct {
		states     string
		exists     bool
		wantDelete bool
	}{
		{"running\nrunning\nrunning\n", true, false},
		{"exited\nexited\nexited\n", false, true},
		{"running\nexited\nrunning\n", false, true},
	} {
		dir := t.TempDir()
		cache := filepath.Join(dir, "cache")
		os.MkdirAll(filepath.Join(cache, "out", "kind"), 0o755)
		calls := filepath.Join(dir, "calls")
		os.WriteFile(filepath.Join(cache, "out", "kind", "kind"), []byte(`#!/bin/sh
echo "kind $*" >> `+calls+`
[ "$1" = get ] && echo fenceproof
exit 0
`), 0o755)
		bin := filepath.Join(dir, "bin")
		os.MkdirAll(bin, 0o755)
		os.WriteFile(filepath.Join(bin, "docker"), []byte("#!/bin/sh\nprintf '"+strings.ReplaceAll(tc.states, "\n", `\n`)+"'\n"), 0o755)
		cmd := exec.Command("bash", filepath.Join(clusterDir(t), "cluster.sh"), "exists")
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"FENCEPROOF_CACHE="+cache, "CLUSTER=fenceproof")
		out, err := cmd.CombinedOutput()
		if got := err == nil; got != tc.exists {
			t.Errorf("states %q: exists = %v, want %v\n%s", tc.states, got, tc.exists, out)
		}
		b, _ := os.ReadFile(calls)
		if got := strings.Contains(string(b), "kind delete cluster --name fenceproof"); got != tc.wantDelete {
			t.Errorf("states %q: deleted = %v, want %v (calls: %s)", tc.states, got, tc.wantDelete, b)
		}
	}
}
