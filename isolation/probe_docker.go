package isolation

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// DockerProber runs `probe connect` in a Docker container outside the
// cluster (ProbeEndpoint.Container) with `docker exec`: one fresh connection per
// probe, from the container's own address.
type DockerProber struct {
	// Command is the probe binary's path in the container's image.
	Command string
	// Timeout of the connection attempt inside the container.
	Timeout time.Duration
	// Docker is the docker CLI; "docker" when empty.
	Docker string
}

// Probe execs the probe client in req.From's container.
func (p *DockerProber) Probe(ctx context.Context, req ProbeRequest) (ProbeResult, error) {
	e := ExecProber{Command: p.Command, Timeout: p.Timeout}
	stdout, err := p.run(ctx, req.From, e.Args(req), p.Timeout+20*time.Second)
	if err != nil {
		return ProbeResult{}, err
	}
	res, err := ParseConnect(stdout)
	if err != nil {
		return ProbeResult{}, fmt.Errorf("docker exec in %s: %w", req.From.Container, err)
	}
	return res, nil
}

// ProbeBatch runs `probe connect-all` in from's container once for all reqs.
func (p *DockerProber) ProbeBatch(ctx context.Context, from ProbeEndpoint, reqs []ProbeRequest) ([]ProbeResult, error) {
	stdout, err := p.run(ctx, from, batchArgs(p.Command, p.Timeout, reqs), p.Timeout+30*time.Second)
	if err != nil {
		return nil, err
	}
	res, err := parseBatch(stdout, reqs)
	if err != nil {
		return nil, fmt.Errorf("docker exec in %s: %w", from.Container, err)
	}
	return res, nil
}

// run execs command in from's container. A non-zero exit with output is
// the probe's verdict (unreachable), not an error; no output with a failed
// exec is.
func (p *DockerProber) run(ctx context.Context, from ProbeEndpoint, command []string, timeout time.Duration) ([]byte, error) {
	if from.Container == "" {
		return nil, fmt.Errorf("docker prober: %s is not a container", from.Name)
	}
	bin := p.Docker
	if bin == "" {
		bin = "docker"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"exec", from.Container}, command...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if runErr != nil && !strings.Contains(stdout.String(), `"ok":`) {
		return nil, fmt.Errorf("docker exec in %s: %w (stderr: %s; stdout: %s)", from.Container, runErr,
			strings.TrimSpace(stderr.String()), strings.TrimSpace(stdout.String()))
	}
	return stdout.Bytes(), nil
}

// ByRunner sends a probe to Container when its source is a container
// outside the cluster (ProbeEndpoint.Container set) and to Pod otherwise.
type ByRunner struct {
	Pod, Container Prober
}

// Probe dispatches on req.From.
func (b ByRunner) Probe(ctx context.Context, req ProbeRequest) (ProbeResult, error) {
	if req.From.Container != "" {
		if b.Container == nil {
			return ProbeResult{}, fmt.Errorf("%s runs in container %s but no container prober is set", req.From.Name, req.From.Container)
		}
		return b.Container.Probe(ctx, req)
	}
	return b.Pod.Probe(ctx, req)
}
