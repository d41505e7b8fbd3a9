package isolation

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/isolation/probeline"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// ExecProber runs `probe connect` in the source pod through the Kubernetes
// exec API: one fresh connection per probe.
type ExecProber struct {
	Config *rest.Config
	Client kubernetes.Interface
	// Container that has the probe binary; empty for the pod's only one.
	Container string
	// Command is the probe binary's path in the image.
	Command string
	// Timeout of the connection attempt inside the pod.
	Timeout time.Duration
}

// Args are the probe's arguments for a request.
func (p *ExecProber) Args(req ProbeRequest) []string {
	return []string{p.Command, "connect",
		"--proto", strings.ToLower(string(req.Case.Protocol)),
		"--to", net.JoinHostPort(req.To.IP.String(), strconv.Itoa(int(req.Case.Port))),
		"--timeout", p.Timeout.String()}
}

// Probe execs the probe client in req.From's pod.
func (p *ExecProber) Probe(ctx context.Context, req ProbeRequest) (ProbeResult, error) {
	stdout, stderr, execErr := p.exec(ctx, req.From, p.Args(req), p.Timeout+20*time.Second)
	res, perr := ParseConnect(stdout)
	if perr != nil {
		return ProbeResult{}, execFailure(req.From, execErr, perr, stderr)
	}
	return res, nil
}

// ProbeBatch execs `probe connect-all` in from's pod once for all reqs.
func (p *ExecProber) ProbeBatch(ctx context.Context, from ProbeEndpoint, reqs []ProbeRequest) ([]ProbeResult, error) {
	stdout, stderr, execErr := p.exec(ctx, from, batchArgs(p.Command, p.Timeout, reqs), p.Timeout+30*time.Second)
	res, perr := parseBatch(stdout, reqs)
	if perr != nil {
		return nil, execFailure(from, execErr, perr, stderr)
	}
	return res, nil
}

func (p *ExecProber) exec(ctx context.Context, from ProbeEndpoint, command []string, timeout time.Duration) (stdout, stderr []byte, err error) {
	u := p.Client.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(from.Namespace).Name(from.Pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: p.Container, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec).
		URL()
	ex, err := remotecommand.NewSPDYExecutor(p.Config, "POST", u)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	return out.Bytes(), errb.Bytes(), err
}

// execFailure explains output that could not be read: the exec's own error
// (with stderr) when it failed, else the parse error.
func execFailure(from ProbeEndpoint, execErr, parseErr error, stderr []byte) error {
	if execErr != nil {
		return fmt.Errorf("exec in %s/%s: %w (stderr: %s)", from.Namespace, from.Pod, execErr, strings.TrimSpace(string(stderr)))
	}
	return fmt.Errorf("exec in %s/%s: %w", from.Namespace, from.Pod, parseErr)
}

// ParseConnect reads the last JSON line `probe connect` printed.
func ParseConnect(out []byte) (ProbeResult, error) {
	l, err := probeline.Parse(out)
	if err != nil {
		return ProbeResult{}, err
	}
	return ProbeResult{Reachable: l.OK, Reply: l.Reply, Error: l.Error}, nil
}
