// Package fencekind deploys the fencing world of suites/fencing on a
// Kubernetes cluster: the csi-addons controller (v0.14.0, CRDs and RBAC from
// its module), the reference driver with the csi-addons sidecar as the
// CSI-Addons endpoint, the reference storage service (refstore) that
// enforces the fence storage-side, and writer pods; and it drives
// NetworkFence CRs and reads back the logs the write-audit oracle needs.
// Nothing here is a mock: every object runs the real binaries.
package fencekind

import (
	"fmt"
	"path"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Names and paths of the deployed world, declared once.
const (
	// ControllerNamespace is where csi-addons' own RBAC (rbac.yaml) puts the controller.
	ControllerNamespace = "csi-addons-system"
	ControllerName      = "csi-addons-controller-manager"
	// StorageNamespace holds refstore, the driver + sidecar and the secrets.
	StorageNamespace = "fenceproof-fence"
	DriverName       = "fenceproof-driver"
	RefstoreName     = "refstore"
	SidecarSA        = "fenceproof-csi-addons-sidecar"
	// CSIAddonsSecret is the Secret the NetworkFenceClass names; the driver
	// requires the same key and value (DriverSecrets, mounted as a file).
	CSIAddonsSecret = "fenceproof-fence-secret"
	DriverSecrets   = "fenceproof-driver-secrets"
	SecretKey       = "userKey"
	// RequiredParam is a parameter the driver requires; the class carries it.
	RequiredParam = "clusterID"
	// ClassName is the NetworkFenceClass of the suite.
	ClassName = "fenceproof"
	// DriverIdentity is the driver's CSI-Addons name (the class provisioner).
	DriverIdentity = "fenceproof.reference.driver"

	RefstorePort = 7070
	SidecarPort  = 9070

	// HostLogDir is on the storage node, under /var/log so that the kubelet's
	// /logs/ endpoint serves the audit log (NodeFile); each run has its own
	// subdirectory here and under the state and run directories, so that a
	// run never inherits fences or writes of an earlier one.
	HostLogDir     = "/var/log/fenceproof-fence"
	AuditLogName   = "audit.log"
	hostRunDir     = "/run/fenceproof-fence"     // refstore's admin socket, shared with the driver
	hostStateDir   = "/var/lib/fenceproof-fence" // driver fences and refstore blocklist survive pod deletion
	adminSocket    = "/run/refstore/admin.sock"
	csiAddonsSock  = "/run/csi-addons/socket"
	secretsMount   = "/etc/fenceproof"
	controlPlaneLb = "node-role.kubernetes.io/control-plane"
)

// World says where and how the storage side runs.
type World struct {
	Images Images
	// StorageNode runs refstore and the driver (the control plane on kind;
	// never a node the suite fences).
	StorageNode string
	// RunID names this run's host directories.
	RunID string
	// Faults are the driver's --fault names (empty: the faithful driver).
	Faults []string
	// Storage is StorageRefstore ("" too) or StorageCeph.
	Storage string
}

// AuditLogPath is the audit log of the run relative to the node's /var/log.
func (w World) AuditLogPath() string {
	return "fenceproof-fence/" + w.RunID + "/" + AuditLogName
}

// Images of the world; the suite takes them from flags so that a helper can
// test its own build without overwriting the committed tags.
type Images struct {
	Fenceproof, Controller, Sidecar string
	// Ceph runs the Ceph daemons, the driver with the Ceph backend and the
	// Ceph writers (fenceproof built with -tags ceph on Debian's Ceph).
	Ceph string
}

// DefaultImages are the tags `make cluster-image` builds.
var DefaultImages = Images{
	Fenceproof: "fenceproof:dev",
	Controller: "fenceproof/csi-addons-controller:v0.14.0",
	Sidecar:    "fenceproof/csi-addons-sidecar:v0.14.0",
	Ceph:       "fenceproof-ceph:dev",
}

func labels(app string) map[string]string { return map[string]string{"app.kubernetes.io/name": app} }

func ptr[T any](v T) *T { return &v }

// onStorageNode pins a pod to the storage node (the control plane, which
// the fence never targets) and tolerates its taint.
func onStorageNode(spec *corev1.PodSpec, node string) {
	spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	spec.Tolerations = append(spec.Tolerations,
		corev1.Toleration{Key: controlPlaneLb, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
}

func hostDir(name, path string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
		Path: path, Type: ptr(corev1.HostPathDirectoryOrCreate)}}}
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

// ControllerDeployment is the csi-addons controller as upstream's
// setup-controller.yaml runs it (leader election, auth enabled: TLS to the
// sidecar with the ServiceAccount token, which the sidecar checks with a
// TokenReview), with our locally built image. It runs on the storage node
// (found on kind: scheduled on worker B, the rehearsal's paused node took
// the controller with it, and no NetworkFence was ever reconciled), so that
// cutting off a worker never cuts off the component that must fence it.
func ControllerDeployment(w World) *appsv1.Deployment {
	img := w.Images
	l := labels("csi-addons")
	d := deployment(ControllerName, ControllerNamespace, l, "", corev1.PodSpec{
		ServiceAccountName:            ControllerName,
		TerminationGracePeriodSeconds: ptr(int64(5)),
		SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65534))},
		Containers: []corev1.Container{{
			Name:            "manager",
			Image:           img.Controller,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/usr/local/bin/csi-addons-manager"},
			Args:            []string{"--namespace=$(POD_NAMESPACE)", "--leader-elect", "--enable-auth=true"},
			Env:             []corev1.EnvVar{fieldEnv("POD_NAMESPACE", "metadata.namespace")},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/readyz", Port: intstr.FromInt32(8081)}}, PeriodSeconds: 2},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false), ReadOnlyRootFilesystem: ptr(true)},
		}},
	})
	onStorageNode(&d.Spec.Template.Spec, w.StorageNode)
	return d
}

// SidecarRBAC is what the csi-addons sidecar needs (read from its source:
// sidecar/internal/csiaddonsnode, internal/kubernetes/token, the leader
// election and the NetworkFence service): its pod and owners, CSIAddonsNode
// objects, the Lease, the secrets a NetworkFenceClass names, TokenReviews.
// The ServiceAccount name in namespace, the ClusterRole and its binding are
// all called name.
func SidecarRBAC(namespace, name string) (*corev1.ServiceAccount, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
			{APIGroups: []string{"apps"}, Resources: []string{"replicasets", "deployments", "daemonsets", "statefulsets"}, Verbs: []string{"get"}},
			{APIGroups: []string{"csiaddons.openshift.io"}, Resources: []string{"csiaddonsnodes"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"tokenreviews"}, Verbs: []string{"create"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: namespace}},
	}
	return sa, role, binding
}

// Secrets: the one the NetworkFenceClass names (the sidecar reads it and
// passes its data as the request's secrets) and the driver's copy of the
// required secret as a YAML file. The value is generated per run.
func Secrets(value string) []*corev1.Secret {
	return []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: CSIAddonsSecret, Namespace: StorageNamespace},
			StringData: map[string]string{SecretKey: value}},
		{ObjectMeta: metav1.ObjectMeta{Name: DriverSecrets, Namespace: StorageNamespace},
			StringData: map[string]string{"secrets.yaml": fmt.Sprintf("%s: %q\n", SecretKey, value)}},
	}
}

// RefstoreDeployment is the reference storage service on the storage node:
// writes on RefstorePort, the fsynced audit log and the blocklist on host
// paths (they outlive the pod), the admin socket in a host directory shared
// with the driver.
func RefstoreDeployment(w World) *appsv1.Deployment {
	img, node := w.Images, w.StorageNode
	l := labels(RefstoreName)
	d := deployment(RefstoreName, StorageNamespace, l, appsv1.RecreateDeploymentStrategyType, corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr(int64(5)),
		Containers: []corev1.Container{{
			Name:            RefstoreName,
			Image:           img.Fenceproof,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"/usr/local/bin/fenceproof", "refstore",
				fmt.Sprintf("--listen=:%d", RefstorePort),
				"--admin=unix://" + adminSocket,
				"--audit=/var/log/refstore/" + AuditLogName,
				"--state=/var/lib/refstore/blocklist.json"},
			Ports: []corev1.ContainerPort{{Name: "write", ContainerPort: RefstorePort}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
				Port: intstr.FromInt32(RefstorePort)}}, PeriodSeconds: 2},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "run", MountPath: "/run/refstore"},
				{Name: "log", MountPath: "/var/log/refstore"},
				{Name: "state", MountPath: "/var/lib/refstore"},
			},
		}},
		Volumes: []corev1.Volume{
			hostDir("run", hostRunDir+"/"+w.RunID), hostDir("log", HostLogDir+"/"+w.RunID), hostDir("state", hostStateDir+"/"+w.RunID+"/refstore"),
		},
	})
	onStorageNode(&d.Spec.Template.Spec, node)
	return d
}

// RefstoreService gives the writers a stable address (a ClusterIP: no DNS
// needed, which matters when a node holding CoreDNS is cut off).
func RefstoreService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: RefstoreName, Namespace: StorageNamespace},
		Spec: corev1.ServiceSpec{
			Selector: labels(RefstoreName),
			Ports:    []corev1.ServicePort{{Name: "write", Port: RefstorePort, TargetPort: intstr.FromInt32(RefstorePort)}},
		},
	}
}

// DriverStatefulSet is the reference driver (backend refstore: the fenced
// set goes to refstore before the RPC returns) and the csi-addons sidecar
// sharing the CSI-Addons socket. Its fences live in a bbolt file on the
// storage node, so deleting the pod keeps them. faults are --fault names.
//
// A one-replica StatefulSet, not a Deployment, for two reasons. At most
// one driver pod exists at a time (a Deployment starts the replacement
// while the old pod still terminates, holding the state file and the
// Lease). And the sidecar makes the StatefulSet, not the pod, the owner of
// its CSIAddonsNode: for a Deployment's pod, csi-addons v0.14.0 makes the
// pod the owner, so replacing the pod lets the garbage collector delete
// the CSIAddonsNode the new sidecar has just registered into (seen on
// kind: the sidecar's next registration attempt came minutes later).
func DriverStatefulSet(w World) *appsv1.StatefulSet {
	img, node, faults := w.Images, w.StorageNode, w.Faults
	l := labels(DriverName)
	driverImage, backendArgs := img.Fenceproof, []string{"--backend=refstore", "--refstore-admin=unix://" + adminSocket}
	if w.Storage == StorageCeph {
		driverImage, backendArgs = img.Ceph, cephDriverArgs()
	}
	driverArgs := append([]string{"/usr/local/bin/fenceproof", "driver",
		"--endpoint=unix://" + csiAddonsSock}, backendArgs...)
	driverArgs = append(driverArgs,
		"--state=/var/lib/fenceproof/fences.db",
		"--secrets-file="+secretsMount+"/secrets.yaml",
		"--require-param="+RequiredParam,
		"--name="+DriverIdentity,
		"--log-format=json")
	for _, f := range faults {
		driverArgs = append(driverArgs, "--fault="+f)
	}
	pod := corev1.PodSpec{
		ServiceAccountName:            SidecarSA,
		TerminationGracePeriodSeconds: ptr(int64(5)),
		Containers: []corev1.Container{
			{
				Name:            "driver",
				Image:           driverImage,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         driverArgs,
				VolumeMounts: []corev1.VolumeMount{
					{Name: "csi-addons", MountPath: "/run/csi-addons"},
					{Name: "refstore-run", MountPath: "/run/refstore"},
					{Name: "state", MountPath: "/var/lib/fenceproof"},
					{Name: "secrets", MountPath: secretsMount, ReadOnly: true},
				},
			},
			SidecarContainer(img.Sidecar, "csi-addons", csiAddonsSock),
		},
		Volumes: []corev1.Volume{
			{Name: "csi-addons", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			hostDir("refstore-run", hostRunDir+"/"+w.RunID),
			hostDir("state", hostStateDir+"/"+w.RunID+"/driver"),
			// 0400: only the driver reads its secrets (it warns about a
			// secrets file other users can read).
			{Name: "secrets", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: DriverSecrets, DefaultMode: ptr(int32(0o400))}}},
		},
	}
	if w.Storage == StorageCeph {
		cephDriverPod(&pod)
	}
	onStorageNode(&pod, node)
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: DriverName, Namespace: StorageNamespace, Labels: l},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr(int32(1)),
			ServiceName: DriverName,
			Selector:    &metav1.LabelSelector{MatchLabels: l},
			Template:    corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: pod},
		},
	}
}

// SidecarContainer is the csi-addons sidecar (auth enabled, as upstream's
// deployments run it) for the driver serving socket, a unix socket path in
// the pod's volume called volume, mounted at the socket's directory.
func SidecarContainer(image, volume, socket string) corev1.Container {
	return corev1.Container{
		Name:            "csi-addons",
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"/usr/local/bin/csi-addons-sidecar",
			"--csi-addons-address=unix://" + socket,
			"--node-id=$(NODE_NAME)",
			fmt.Sprintf("--controller-port=%d", SidecarPort),
			"--pod=$(POD_NAME)", "--namespace=$(POD_NAMESPACE)", "--pod-uid=$(POD_UID)",
			"--enable-auth=true",
			// Short lease timings: a replacement leads soon after the old pod is gone
			// (at once in practice: it has the old pod's name, so the Lease is its own).
			"--leader-election-lease-duration=8s", "--leader-election-renew-deadline=5s", "--leader-election-retry-period=1s"},
		Env: []corev1.EnvVar{
			fieldEnv("NODE_NAME", "spec.nodeName"), fieldEnv("POD_NAME", "metadata.name"),
			fieldEnv("POD_NAMESPACE", "metadata.namespace"), fieldEnv("POD_UID", "metadata.uid"),
		},
		Ports:        []corev1.ContainerPort{{Name: "csi-addons", ContainerPort: SidecarPort}},
		VolumeMounts: []corev1.VolumeMount{{Name: volume, MountPath: path.Dir(socket)}},
	}
}

// deployment is a one-replica Deployment of pod, selected by and labelled
// with l; strategy "" is the API's default (rolling update).
func deployment(name, namespace string, l map[string]string, strategy appsv1.DeploymentStrategyType, pod corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: l},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(1)),
			Strategy: appsv1.DeploymentStrategy{Type: strategy},
			Selector: &metav1.LabelSelector{MatchLabels: l},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: pod},
		},
	}
}
