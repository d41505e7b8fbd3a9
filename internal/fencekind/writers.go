package fencekind

import (
	"net"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WriterInterval is the pause between two writes of a writer.
const WriterInterval = "20ms"

// writerContainer runs `fenceproof writer` against server (refstore's
// HOST:PORT) with id, writing every interval and logging one JSON line per
// attempt to standard output (pod logs); for a CephTarget, `fenceproof
// ceph-writer` with the volumes it needs.
func writerContainer(img Images, server, id, interval string) (corev1.Container, []corev1.Volume) {
	if strings.HasPrefix(server, cephTargetProto) {
		return cephWriterContainer(img, server, id, interval)
	}
	return corev1.Container{
		Name:            "writer",
		Image:           img.Fenceproof,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"/usr/local/bin/fenceproof", "writer",
			"--server=" + server, "--id=" + id, "--interval=" + interval, "--log=-"},
	}, nil
}

// IdleClientName is the pod and client id of IdleClientPod.
const IdleClientName = "idle-client"

// IdleClientPod is a writer that keeps one session open to refstore for the
// whole run, on the storage node (never fenced), writing once a second.
//
// csi-addons v0.14.0 cannot record a driver that reports no clients: the
// CSIAddonsNode reconcile then writes status.networkFenceClientStatus with
// ClientDetails null, which its own CRD rejects ("Required value"), so the
// status is never updated (a replaced driver pod is never seen Connected)
// and every reconcile errors and backs off exponentially. Seen on kind and
// in CI: the ack-before-enforce spec replaced the driver between two cases,
// when no writer was connected, and waited for Connected in vain. A
// storage system in use has clients; this one gives refstore one.
func IdleClientPod(w World, server string) *corev1.Pod {
	c, vols := writerContainer(w.Images, server, IdleClientName, "1s")
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: IdleClientName, Namespace: StorageNamespace, Labels: labels(IdleClientName)},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr(int64(0)),
			RestartPolicy:                 corev1.RestartPolicyAlways,
			Containers:                    []corev1.Container{c},
			Volumes:                       vols,
		},
	}
	onStorageNode(&p.Spec, w.StorageNode)
	return p
}

// WriterPod is a writer pinned to node, writing as id (its pod name).
func WriterPod(img Images, namespace, name, node, server string) *corev1.Pod {
	c, vols := writerContainer(img, server, name, WriterInterval)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels("writer")},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{"kubernetes.io/hostname": node},
			TerminationGracePeriodSeconds: ptr(int64(0)),
			RestartPolicy:                 corev1.RestartPolicyAlways,
			Containers:                    []corev1.Container{c},
			Volumes:                       vols,
		},
	}
}

// StatefulWriter is the rehearsal's application: one replica that writes as
// the same id (its stable pod name) wherever it runs, allowed on nodes, so
// it can move when its node is declared out of service. It tolerates
// nothing, so the out-of-service taint evicts it.
func StatefulWriter(img Images, namespace, name, server string, nodes []string) *appsv1.StatefulSet {
	l := map[string]string{"app.kubernetes.io/name": name}
	c, vols := writerContainer(img, server, "$(POD_NAME)", WriterInterval)
	c.Env = []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name")}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr(int32(1)),
			ServiceName: name,
			Selector:    &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: l},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr(int64(0)),
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchExpressions: []corev1.NodeSelectorRequirement{{
								Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: nodes}},
						}}},
					}},
					Containers: []corev1.Container{c},
					Volumes:    vols,
				},
			},
		},
	}
}

// ServerAddr is HOST:PORT of refstore for writers.
func ServerAddr(clusterIP string) string {
	return net.JoinHostPort(clusterIP, strconv.Itoa(RefstorePort))
}
