package probing

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// DockerProber runs `probe connect` in a Docker container outside the
// cluster (Endpoint.Container) with `docker exec`: one fresh connection per
// probe, from the container's own address.
type DockerProber struct {
	// Command is the probe binary's path in the container's image.
	Command string
	// Timeout of the connection attempt inside the container.
	Timeout time.Duration
	// Docker is the docker CLI; "docker" when empty.
	Docker string
}

// Args are the docker CLI's arguments for a request.
func (p *DockerProber) Args(req Request) []string {
	e := ExecProber{Command: p.Command, Timeout: p.Timeout}
	return append([]string{"exec", req.From.Container}, e.Args(req)...)
}

// Probe execs the probe client in req.From's container.
func (p *DockerProber) Probe(ctx context.Context, req Request) (Result, error) {
	if req.From.Container == "" {
		return Result{}, fmt.Errorf("docker prober: %s is not a container", req.From.Name)
	}
	bin := p.Docker
	if bin == "" {
		bin = "docker"
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout+20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, p.Args(req)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	res, err := ParseConnect(stdout.Bytes())
	if err != nil {
		if runErr != nil {
			return Result{}, fmt.Errorf("docker exec in %s: %w (stderr: %s)", req.From.Container, runErr, strings.TrimSpace(stderr.String()))
		}
		return Result{}, fmt.Errorf("docker exec in %s: %w", req.From.Container, err)
	}
	return res, nil
}

// ByRunner sends a probe to Container when its source is a container
// outside the cluster (Endpoint.Container set) and to Pod otherwise.
type ByRunner struct {
	Pod, Container Prober
}

// Probe dispatches on req.From.
func (b ByRunner) Probe(ctx context.Context, req Request) (Result, error) {
	if req.From.Container != "" {
		if b.Container == nil {
			return Result{}, fmt.Errorf("%s runs in container %s but no container prober is set", req.From.Name, req.From.Container)
		}
		return b.Container.Probe(ctx, req)
	}
	return b.Pod.Probe(ctx, req)
}
