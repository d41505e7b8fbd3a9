package fencing

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/fenceproof/fenceproof/internal/fencekind"
)

// storage is the storage side the cases fence: deployed with the driver
// that fences it, written to by the writer pods, keeping the logs the
// oracle judges. The cases reach it only through this interface, so the
// same cases run on every storage; --fencing.storage ($FENCING_STORAGE)
// picks one of storages.
type storage interface {
	// String describes the deployed storage for logs and the report.
	fmt.Stringer
	// name is the storage's name in storages.
	name() string
	// install deploys the csi-addons controller, the storage, the driver
	// serving it and the suite's NetworkFenceClass, and waits until the
	// driver is Connected; uninstall removes all of it (also what an
	// earlier run left).
	install(ctx context.Context, w *world) error
	uninstall(ctx context.Context, w *world) error
	// writerPod is a pod on node that writes to the storage as client id
	// (its pod name) all the time, logging every attempt.
	writerPod(w *world, ns, id, node string) *corev1.Pod
	// statefulWriter is a one-replica StatefulSet of such a writer that
	// may run on nodes.
	statefulWriter(w *world, ns, name string, nodes []string) *appsv1.StatefulSet
	// prepare readies a case's namespace for writer pods (the Ceph
	// writers' keyring Secret).
	prepare(ctx context.Context, w *world, ns string) error
	// clientID is the id GetFenceClients reports for writer id at podIP.
	clientID(id, podIP string) string
	// log reads one of the storage's logs of this run (JSON lines).
	log(ctx context.Context, w *world, l storageLog) ([]byte, error)
}

// storageLog names a log the storage keeps.
type storageLog string

// The logs: accepted writes (fencekind.Accepted), refused attempts (the
// same record), enforcement of fences (audit.EnforceRecord).
const (
	acceptedLog storageLog = fencekind.AuditLogName
	refusedLog  storageLog = "refused.log"
	enforceLog  storageLog = "enforce.log"
)

// storages are the storages the suite runs on, by name.
var storages = map[string]func() storage{
	"refstore": func() storage { return &refstoreStorage{} },
}

func storageNames() string {
	var names []string
	for n := range storages {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// storageNamed returns a fresh storage of that name.
func storageNamed(name string) (storage, error) {
	s, ok := storages[name]
	if !ok {
		return nil, fmt.Errorf("--fencing.storage=%q: want one of %s", name, storageNames())
	}
	return s(), nil
}

// refstoreStorage is the reference storage service (refstore) on the
// storage node, with the driver's refstore backend and refstore's line
// protocol writers.
type refstoreStorage struct {
	server string // refstore's Service address, set by install
}

func (s *refstoreStorage) name() string   { return "refstore" }
func (s *refstoreStorage) String() string { return "refstore at " + s.server }

func (s *refstoreStorage) install(ctx context.Context, w *world) error {
	if err := w.k.Install(ctx, w.spec, randHex(16)); err != nil {
		return err
	}
	var err error
	s.server, err = w.k.RefstoreAddr(ctx)
	return err
}

func (s *refstoreStorage) uninstall(ctx context.Context, w *world) error { return w.k.Uninstall(ctx) }

func (s *refstoreStorage) writerPod(w *world, ns, id, node string) *corev1.Pod {
	return fencekind.WriterPod(w.spec.Images, ns, id, node, s.server)
}

func (s *refstoreStorage) prepare(context.Context, *world, string) error { return nil }

// clientID: refstore knows a client by the id it gives.
func (s *refstoreStorage) clientID(id, _ string) string { return id }

func (s *refstoreStorage) statefulWriter(w *world, ns, name string, nodes []string) *appsv1.StatefulSet {
	return fencekind.StatefulWriter(w.spec.Images, ns, name, s.server, nodes)
}

// log reads refstore's log from the storage node: the audit log and the
// refusal and enforcement logs beside it.
func (s *refstoreStorage) log(ctx context.Context, w *world, l storageLog) ([]byte, error) {
	return w.k.NodeFile(ctx, w.storageNode, path.Join(path.Dir(w.spec.AuditLogPath()), string(l)))
}
