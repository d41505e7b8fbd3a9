package probing

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/internal/probeline"

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
func (p *ExecProber) Args(req Request) []string {
	return []string{p.Command, "connect",
		"--proto", strings.ToLower(string(req.Case.Protocol)),
		"--to", net.JoinHostPort(req.To.IP.String(), strconv.Itoa(int(req.Case.Port))),
		"--timeout", p.Timeout.String()}
}

// Probe execs the probe client in req.From's pod.
func (p *ExecProber) Probe(ctx context.Context, req Request) (Result, error) {
	u := p.Client.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(req.From.Namespace).Name(req.From.Pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: p.Container, Command: p.Args(req), Stdout: true, Stderr: true}, scheme.ParameterCodec).
		URL()
	ex, err := remotecommand.NewSPDYExecutor(p.Config, "POST", u)
	if err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout+20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	execErr := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	res, perr := ParseConnect(stdout.Bytes())
	if perr != nil {
		if execErr != nil {
			return Result{}, fmt.Errorf("exec in %s/%s: %w (stderr: %s)", req.From.Namespace, req.From.Pod, execErr, strings.TrimSpace(stderr.String()))
		}
		return Result{}, fmt.Errorf("exec in %s/%s: %w", req.From.Namespace, req.From.Pod, perr)
	}
	return res, nil
}

// ParseConnect reads the last JSON line `probe connect` printed.
func ParseConnect(out []byte) (Result, error) {
	l, err := probeline.Parse(out)
	if err != nil {
		return Result{}, err
	}
	return Result{Reachable: l.OK, Reply: l.Reply, Error: l.Error}, nil
}
