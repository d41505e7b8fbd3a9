package fencekind

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fenceproof/fenceproof/fencing/networkfence"
)

func nestedString(obj map[string]any, fields ...string) (string, bool, error) {
	return unstructured.NestedString(obj, fields...)
}

// containsPod reports whether a CSIAddonsNode endpoint
// (pod://<pod>.<ns>:<port>) names pod.
func containsPod(endpoint, pod string) bool {
	return strings.HasPrefix(endpoint, "pod://"+pod+".") || strings.HasPrefix(endpoint, "pod://"+pod+":")
}

// NodeFile reads a file below /var/log of a node through the kubelet's
// /logs/ endpoint (API server node proxy; needs nodes/proxy, which an admin
// kubeconfig has). This is how the suite reads refstore's audit log on any
// cluster, kind or not, without a shell in the image.
func (c Cluster) NodeFile(ctx context.Context, node, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	b, err := c.CS.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "logs", path).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("read /var/log/%s on node %s through the kubelet: %w", path, node, err)
	}
	return b, nil
}

// PodLogs returns the logs of a container of a pod (current instance; with
// previous, the one before the last restart).
func (c Cluster) PodLogs(ctx context.Context, ns, pod, container string, previous bool) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	b, err := c.CS.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: previous}).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("logs of %s/%s[%s]: %w", ns, pod, container, err)
	}
	return b, nil
}

// CallTimeout bounds one read of a log or node file: a kubelet that does
// not answer fails the read instead of hanging the suite.
const CallTimeout = time.Minute

// DriverPods returns the names of the driver's pods.
func (c Cluster) DriverPods(ctx context.Context) ([]corev1.Pod, error) {
	l, err := c.CS.CoreV1().Pods(StorageNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + DriverName})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// RefstoreAddr returns refstore's Service address for writers.
func (c Cluster) RefstoreAddr(ctx context.Context) (string, error) {
	s, err := c.CS.CoreV1().Services(StorageNamespace).Get(ctx, RefstoreName, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return ServerAddr(s.Spec.ClusterIP), nil
}

// NodeAddrs returns a node's pod CIDRs and InternalIPs as CIDRs
// (networkfence.NodeCIDRs): what an operator fences to cut the node off
// from storage.
func (c Cluster) NodeAddrs(ctx context.Context, node string) ([]string, error) {
	n, err := c.CS.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return networkfence.NodeCIDRs(n)
}
