package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCIRunStopsOnlyTheDockerdItStarted pins the bug where .ci/run stopped
// dockerd with `pkill -x dockerd`: a daemon a user started while CI ran was
// stopped too. .ci/run runs here with a make that does what `make e2e` does
// to Docker (lib.sh's ensure_docker starts a daemon, none answering) and
// then, as a user would, starts a second daemon; at its end .ci/run must
// have stopped the first, by its PID, and left the second running. Both
// daemons are stand-ins named dockerd (so their process name is dockerd),
// and docker is a stub that answers once the first has started.
func TestCIRunStopsOnlyTheDockerdItStarted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("ensure_docker starts dockerd only as root")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	up := filepath.Join(dir, "up")
	write("dockerd", "#!/bin/bash\necho $$ >> "+filepath.Join(dir, "started")+"\ntouch "+up+"\nwhile :; do sleep 0.2; done\n")
	write("docker", "#!/bin/bash\n[[ $1 == info && -e "+up+" ]]\n")
	user := filepath.Join(dir, "user.pid")
	repo := filepath.Join(clusterDir(t), "..", "..")
	write("make", `#!/bin/bash
[[ $1 == e2e ]] || exit 0
bash -c 'source fixtures/cluster/lib.sh && ensure_docker' || exit 1
setsid dockerd > /dev/null 2>&1 < /dev/null &
echo $! > `+user+`
sleep 0.5
`)
	cmd := exec.Command("bash", filepath.Join(repo, ".ci", "run"))
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FENCEPROOF_CACHE="+filepath.Join(dir, "cache"), "FENCEPROOF_DOCKERD_LOG="+filepath.Join(dir, "dockerd.log"))
	out, err := cmd.CombinedOutput()
	started := pids(t, filepath.Join(dir, "started"))
	t.Cleanup(func() {
		for _, p := range started {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	if err != nil {
		t.Fatalf(".ci/run: %v\n%s", err, out)
	}
	userPid := pids(t, user)
	if len(started) != 2 || len(userPid) != 1 || started[1] != userPid[0] {
		t.Fatalf("want two daemons started, the run's then the user's; started %v, the user's %v\n%s", started, userPid, out)
	}
	ours := started[0]
	for deadline := time.Now().Add(5 * time.Second); alive(ours) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if alive(ours) {
		t.Errorf("the dockerd the run started (pid %d) still runs\n%s", ours, out)
	}
	if !alive(userPid[0]) {
		t.Errorf("the user's dockerd (pid %d) was stopped by the run\n%s", userPid[0], out)
	}
	if !strings.Contains(string(out), "stopping the dockerd this run started (pid "+strconv.Itoa(ours)+")") {
		t.Errorf("the run did not say which dockerd it stopped:\n%s", out)
	}
}

func pids(t *testing.T, file string) []int {
	t.Helper()
	b, _ := os.ReadFile(file)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %q", file, b)
		}
		out = append(out, n)
	}
	return out
}

// alive: the process exists and is no zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}
