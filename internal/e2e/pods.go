package e2e

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/isolation/probeline"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// ProbePorts are the ports every probe pod serves, TCP and UDP.
var ProbePorts = []int32{80, 81}

// ProbePod returns a pod running `probe serve` on ProbePorts (TCP and UDP)
// from ProbeImage, pinned to node when node is not "". It never pulls.
func ProbePod(namespace, name, node string, labels map[string]string) *corev1.Pod {
	ports := make([]string, len(ProbePorts))
	var cports []corev1.ContainerPort
	for i, p := range ProbePorts {
		ports[i] = fmt.Sprint(p)
		cports = append(cports,
			corev1.ContainerPort{Name: fmt.Sprintf("tcp-%d", p), ContainerPort: p, Protocol: corev1.ProtocolTCP},
			corev1.ContainerPort{Name: fmt.Sprintf("udp-%d", p), ContainerPort: p, Protocol: corev1.ProtocolUDP})
	}
	list := strings.Join(ports, ",")
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{
				Name:            "probe",
				Image:           ProbeImage,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"/usr/local/bin/probe", "serve", "--tcp", list, "--udp", list},
				Ports:           cports,
			}},
		},
	}
}

// CreatePodsAndWait creates the pods and waits until every one is Running
// with an IP, returning them as they are then.
func CreatePodsAndWait(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, pods ...*corev1.Pod) ([]*corev1.Pod, error) {
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return WaitPodsRunning(ctx, cs, timeout, pods...)
}

// WaitPodsRunning waits until every pod (by namespace and name) is Running
// with an IP, returning them as they are then.
func WaitPodsRunning(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, pods ...*corev1.Pod) ([]*corev1.Pod, error) {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
			got, err := cs.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			out[i] = got
			return got.Status.Phase == corev1.PodRunning && got.Status.PodIP != "", nil
		})
		if err != nil {
			state := "not found"
			if out[i] != nil {
				state = fmt.Sprintf("phase %s, conditions %v, containers %v", out[i].Status.Phase, out[i].Status.Conditions, out[i].Status.ContainerStatuses)
			}
			return nil, fmt.Errorf("pod %s/%s not running after %s: %s", p.Namespace, p.Name, timeout, state)
		}
	}
	return out, nil
}

// CreateNamespace creates a namespace with the given labels.
func CreateNamespace(ctx context.Context, cs kubernetes.Interface, name string, labels map[string]string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
	}, metav1.CreateOptions{})
	return err
}

// DeleteNamespace deletes a namespace and waits (up to timeout) until it is
// gone; a missing namespace is not an error.
func DeleteNamespace(ctx context.Context, cs kubernetes.Interface, name string, timeout time.Duration) error {
	return DeleteNamespaces(ctx, cs, timeout, name)
}

// DeleteNamespaces deletes every namespace first and then waits (up to
// timeout) until all are gone, so their teardowns overlap; a missing
// namespace is not an error. It returns the first error.
func DeleteNamespaces(ctx context.Context, cs kubernetes.Interface, timeout time.Duration, names ...string) error {
	var first error
	pending := map[string]bool{}
	for _, name := range names {
		err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		switch {
		case err == nil:
			pending[name] = true
		case !apierrors.IsNotFound(err) && first == nil:
			first = err
		}
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		for name := range pending {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				delete(pending, name)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil && first == nil {
		first = fmt.Errorf("namespaces %v not gone after %s: %w", slices.Sorted(maps.Keys(pending)), timeout, err)
	}
	return first
}

// Exec runs cmd in a container of a pod (container "" is the first) and
// returns its standard output and error. A non-zero exit status is returned
// as an error of type k8s.io/client-go/util/exec.ExitError (with the output).
func Exec(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, namespace, pod, container string, cmd ...string) (stdout, stderr string, err error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container,
			Command:   cmd,
			Stdout:    true,
			Stderr:    true,
		}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), err
}

// ProbeResult is the JSON line of `probe connect` (see cmd/probe).
type ProbeResult = probeline.Line

// Connect runs `probe connect` in a probe pod: one fresh connection from it
// to to ("HOST:PORT") over proto ("tcp" or "udp"). An unreachable target is a
// result with OK false, not an error; an error means the probe could not be
// run or said something unexpected.
func Connect(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, namespace, pod, proto, to string, timeout time.Duration) (ProbeResult, error) {
	stdout, stderr, err := Exec(ctx, cfg, cs, namespace, pod, "",
		"/usr/local/bin/probe", "connect", "--proto", proto, "--to", to, "--timeout", timeout.String())
	r, perr := probeline.Parse([]byte(stdout))
	if perr != nil {
		return r, fmt.Errorf("probe connect in %s/%s: %v, stderr %q, exec error %v", namespace, pod, perr, stderr, err)
	}
	return r, nil
}
