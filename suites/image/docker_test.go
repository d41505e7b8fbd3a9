package image

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/internal/e2e"
)

// docker runs the docker CLI and returns its exit status and output
// (standard output and error).
func docker(ctx context.Context, args ...string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		return -1, err.Error()
	}
	return 0, out.String()
}

// hostImage makes the host's Docker hold this checkout's build under the
// image's tag (a build of another checkout may have moved the tag) and
// returns the build's image ID; "" when this machine has no archive.
func hostImage(ctx context.Context) (string, error) {
	if archive == "" {
		return "", nil
	}
	id, err := e2e.LoadArchive(ctx, archive)
	if err != nil {
		return "", err
	}
	if _, out := docker(ctx, "image", "inspect", "-f", "{{.Id}}", image); strings.TrimSpace(out) != id {
		if code, out := docker(ctx, "tag", id, image); code != 0 {
			return "", fmt.Errorf("docker tag %s %s: %s", id, image, out)
		}
	}
	return id, nil
}

// hostDriver copies this checkout's static fenceproof (the binary of its
// fenceproof:dev archive, the reference driver the cluster runs) into dir,
// to run the driver as a process on the host: no Go build in the suite.
func hostDriver(ctx context.Context, dir string) (string, error) {
	a, err := e2e.OwnImageArchive("fenceproof")
	if err != nil {
		return "", err
	}
	id, err := e2e.LoadArchive(ctx, a)
	if err != nil {
		return "", err
	}
	name := "fenceproof-image-e2e-driver-" + randHex(4)
	if code, out := docker(ctx, "create", "--name", name, id); code != 0 {
		return "", fmt.Errorf("docker create %s: %s", id, out)
	}
	defer docker(context.Background(), "rm", name)
	bin := filepath.Join(dir, "fenceproof")
	if code, out := docker(ctx, "cp", name+":/usr/local/bin/fenceproof", bin); code != 0 {
		return "", fmt.Errorf("docker cp: %s", out)
	}
	return bin, nil
}
