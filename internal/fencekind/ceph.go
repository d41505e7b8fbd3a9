package fencekind

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// The storage behind the driver: the reference storage service, or a real
// single-node Ceph (FENCING_STORAGE=ceph).
const (
	StorageRefstore = "refstore"
	StorageCeph     = "ceph"
)

// The Ceph world. The daemons run in one pod on the storage node, bound to
// the pod's address: writer pods reach the mon and the OSD over the pod
// network without NAT, so the mon and the OSD see each writer at its pod
// IP, a fence of a worker's pod CIDR is exactly that worker's writers, and
// GetFenceClients reports pod IPs as /32 blocks, as with refstore.
const (
	CephName        = "ceph"
	CephKeysSecret  = "fenceproof-ceph-keys"   // import.keyring, fencer.keyring (storage namespace)
	CephWriterKeys  = "fenceproof-ceph-writer" // writer.keyring, copied into every writer's namespace
	CephConfigMap   = "fenceproof-ceph"        // mon_host, for the driver
	CephPool        = "fenceproof"
	CephFencerUser  = "fencer"
	CephWriterUser  = "writer"
	cephDir         = "/var/lib/fenceproof-ceph"
	cephReady       = "/var/lib/fenceproof-ceph-ready"
	cephKeysMount   = "/etc/ceph-keys"
	writerLogMount  = "/var/log/fenceproof-writers"
	cephTargetProto = "ceph://"
)

// CephFencerCaps are the driver's caps: read the maps, change the
// blocklist, list the mons' sessions (ceph/cluster.FencerCaps).
const CephFencerCaps = `caps mon = "allow r, allow command \"osd blocklist\", allow command \"sessions\""`

// cephKey is a new cephx secret in Ceph's encoding (what `ceph-authtool
// --gen-print-key` prints): type 1 (AES), the creation time, 16 random
// bytes, base64.
func cephKey() string {
	b := make([]byte, 0, 28)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint32(b, uint32(time.Now().Unix()))
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint16(b, 16)
	secret := make([]byte, 16)
	rand.Read(secret)
	return base64.StdEncoding.EncodeToString(append(b, secret...))
}

// CephSecrets are the keys of a run: the users the Ceph pod imports (with
// their caps), the driver's keyring and the writers' keyring.
func CephSecrets() []*corev1.Secret {
	fencer, writer := cephKey(), cephKey()
	fencerKR := fmt.Sprintf("[client.%s]\n\tkey = %s\n", CephFencerUser, fencer)
	writerKR := fmt.Sprintf("[client.%s]\n\tkey = %s\n", CephWriterUser, writer)
	imp := fencerKR + "\t" + CephFencerCaps + "\n" +
		writerKR + "\tcaps mon = \"allow r\"\n\tcaps osd = \"allow rw pool=" + CephPool + "\"\n"
	return []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: CephKeysSecret, Namespace: StorageNamespace},
			StringData: map[string]string{"import.keyring": imp, "fencer.keyring": fencerKR}},
		{ObjectMeta: metav1.ObjectMeta{Name: CephWriterKeys, Namespace: StorageNamespace},
			StringData: map[string]string{"writer.keyring": writerKR}},
	}
}

// CephDeployment is the single-node Ceph (one mon, one memstore OSD, no
// mgr) on the storage node: `fenceproof ceph serve` bound to the pod's
// address, under tini (the daemons daemonize), ready once a first write
// went through.
func CephDeployment(w World) *appsv1.Deployment {
	l := labels(CephName)
	d := deployment(CephName, StorageNamespace, l, appsv1.RecreateDeploymentStrategyType, corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr(int64(10)),
		Containers: []corev1.Container{{
			Name:            CephName,
			Image:           w.Images.Ceph,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"/usr/bin/tini", "--", "/usr/local/bin/fenceproof", "ceph", "serve",
				"--dir=" + cephDir, "--addr=$(POD_IP)", "--ready-file=" + cephReady,
				"--import-keyring=" + cephKeysMount + "/import.keyring"},
			Env: []corev1.EnvVar{fieldEnv("POD_IP", "status.podIP")},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
				Command: []string{"cat", cephReady}}}, PeriodSeconds: 2},
			VolumeMounts: []corev1.VolumeMount{{Name: "keys", MountPath: cephKeysMount, ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{{Name: "keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: CephKeysSecret}}}},
	})
	onStorageNode(&d.Spec.Template.Spec, w.StorageNode)
	return d
}

// cephDriverArgs are the driver's Ceph backend flags: the mon address from
// the ConfigMap Install writes, the fencer's keyring.
func cephDriverArgs() []string {
	return []string{"--backend=ceph", "--ceph-mon-host=$(CEPH_MON_HOST)", "--ceph-user=" + CephFencerUser,
		"--ceph-keyring=" + cephKeysMount + "/fencer.keyring"}
}

// cephDriverPod adds what the Ceph driver needs to its pod: the mon
// address and the fencer's key.
func cephDriverPod(pod *corev1.PodSpec) {
	c := &pod.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "CEPH_MON_HOST", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: CephConfigMap}, Key: "mon_host"}}})
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "ceph-keys", MountPath: cephKeysMount, ReadOnly: true})
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "ceph-keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: CephKeysSecret, Items: []corev1.KeyToPath{{Key: "fencer.keyring", Path: "fencer.keyring"}}, DefaultMode: ptr(int32(0o400))}}})
}

// CephTarget is what a writer pod is told to write to when the storage is
// Ceph: ceph://<mon address>/<run id> (the run id names the host directory
// where each writer keeps a copy of its log).
func CephTarget(mon netip.Addr, runID string) string {
	return cephTargetProto + mon.String() + "/" + runID
}

// cephWriterContainer runs `fenceproof ceph-writer` against the target's
// mon as client.writer, with id, one attempt line per write to standard
// output and a copy in the node's writer log directory (it outlives a pod
// that is deleted while its node is cut off: the rehearsal's stale writer).
func cephWriterContainer(img Images, target, id, interval string) (corev1.Container, []corev1.Volume) {
	mon, runID, _ := strings.Cut(strings.TrimPrefix(target, cephTargetProto), "/")
	c := corev1.Container{
		Name:            "writer",
		Image:           img.Ceph,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"/usr/bin/tini", "--", "/usr/local/bin/fenceproof", "ceph-writer",
			"--mon-host=" + mon, "--user=" + CephWriterUser, "--keyring=" + cephKeysMount + "/writer.keyring",
			"--pool=" + CephPool, "--id=" + id, "--interval=" + interval, "--log=-",
			"--log-copy=" + writerLogMount + "/" + id + ".log"},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "ceph-keys", MountPath: cephKeysMount, ReadOnly: true},
			{Name: "writer-log", MountPath: writerLogMount},
		},
	}
	return c, []corev1.Volume{
		{Name: "ceph-keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: CephWriterKeys}}},
		hostDir("writer-log", HostLogDir+"/"+runID+"/writers"),
	}
}

// WriterLogCopy is the path, below the node's /var/log, of the copy of
// writer id's log on the node it ran on (Ceph writers; NodeFile reads it).
func (w World) WriterLogCopy(id string) string {
	return "fenceproof-fence/" + w.RunID + "/writers/" + id + ".log"
}

// installCeph deploys the Ceph pod, waits until it takes writes and writes
// its address to the ConfigMap the driver reads.
func (c Cluster) installCeph(ctx context.Context, w World) error {
	for _, s := range CephSecrets() {
		if err := create(ctx, "secret "+s.Name, c.CS.CoreV1().Secrets(StorageNamespace).Create, s); err != nil {
			return err
		}
	}
	if err := create(ctx, "ceph", c.CS.AppsV1().Deployments(StorageNamespace).Create, CephDeployment(w)); err != nil {
		return err
	}
	if err := c.WaitDeployment(ctx, StorageNamespace, CephName, 5*time.Minute); err != nil {
		return err
	}
	mon, err := c.CephMon(ctx)
	if err != nil {
		return err
	}
	return create(ctx, "ceph configmap", c.CS.CoreV1().ConfigMaps(StorageNamespace).Create, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: CephConfigMap, Namespace: StorageNamespace},
		Data:       map[string]string{"mon_host": mon.String()}})
}

// cephPod returns the running Ceph pod.
func (c Cluster) cephPod(ctx context.Context) (*corev1.Pod, error) {
	l, err := c.CS.CoreV1().Pods(StorageNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + CephName})
	if err != nil {
		return nil, err
	}
	for i := range l.Items {
		if p := &l.Items[i]; p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && p.Status.PodIP != "" {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no running Ceph pod in %s: %s", StorageNamespace, c.podsState(ctx, StorageNamespace))
}

// CephMon returns the address of the Ceph pod (its mon and OSD).
func (c Cluster) CephMon(ctx context.Context) (netip.Addr, error) {
	p, err := c.cephPod(ctx)
	if err != nil {
		return netip.Addr{}, err
	}
	return netip.ParseAddr(p.Status.PodIP)
}

// WriterTarget is what writer pods write to: refstore's address, or the
// Ceph target.
func (c Cluster) WriterTarget(ctx context.Context, w World) (string, error) {
	if w.Storage != StorageCeph {
		return c.RefstoreAddr(ctx)
	}
	mon, err := c.CephMon(ctx)
	if err != nil {
		return "", err
	}
	return CephTarget(mon, w.RunID), nil
}

// PrepareNamespace readies a namespace for writer pods: with Ceph, a copy
// of the writers' keyring Secret (a pod reads Secrets of its own
// namespace only).
func (c Cluster) PrepareNamespace(ctx context.Context, w World, ns string) error {
	if w.Storage != StorageCeph {
		return nil
	}
	s, err := c.CS.CoreV1().Secrets(StorageNamespace).Get(ctx, CephWriterKeys, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cp := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: CephWriterKeys, Namespace: ns}, Data: s.Data}
	return create(ctx, "secret "+CephWriterKeys+" in "+ns, c.CS.CoreV1().Secrets(ns).Create, cp)
}

// CephAudit returns the writes Ceph accepted, as refstore's audit lines:
// `fenceproof ceph-writer audit` run in the Ceph pod, which reads every
// writer's audit object (see ceph/writer).
func (c Cluster) CephAudit(ctx context.Context) ([]byte, error) {
	p, err := c.cephPod(ctx)
	if err != nil {
		return nil, err
	}
	out, stderr, err := c.Exec(ctx, p.Namespace, p.Name, CephName,
		"/usr/local/bin/fenceproof", "ceph-writer", "audit", "--conf="+cephDir+"/ceph.conf", "--pool="+CephPool)
	if err != nil {
		return nil, fmt.Errorf("ceph-writer audit in %s: %w (%s)", p.Name, err, strings.TrimSpace(string(stderr)))
	}
	return out, nil
}

// Exec runs a command in a container and returns its output.
func (c Cluster) Exec(ctx context.Context, ns, pod, container string, command ...string) (stdout, stderr []byte, err error) {
	if c.REST == nil {
		return nil, nil, fmt.Errorf("exec in %s/%s: no REST config", ns, pod)
	}
	u := c.CS.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
	ex, err := remotecommand.NewSPDYExecutor(c.REST, "POST", u)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errb})
	return out.Bytes(), errb.Bytes(), err
}
