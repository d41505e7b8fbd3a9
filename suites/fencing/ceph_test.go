package fencing

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/fenceproof/fenceproof/internal/fencekind"
)

var flagCephImage = flag.String("fencing.ceph-image", fencekind.DefaultImages.Ceph, "image with Debian's Ceph and fenceproof built with -tags ceph (--fencing.storage=ceph)")

func init() {
	storages[fencekind.StorageCeph] = func() storage { return &cephStorage{writers: map[string][]string{}} }
}

// cephStorage is a real single-node Ceph (Debian's Pacific mon and one
// memstore OSD, `fenceproof ceph serve`) in one pod on the storage node,
// the driver's Ceph backend (client.fencer) and librados writers
// (client.writer, `fenceproof ceph-writer`). The Ceph pod is on the pod
// network: the mon and the OSD see every writer at its pod IP (no NAT),
// so the cases fence exactly what they fence on refstore.
//
// Its logs: the accepted writes are the writers' audit objects, read back
// (fencekind.CephAudit, refstore's audit format); Ceph logs no refusal,
// so the refused attempts come from the writers' own logs, which each
// writer copies to its node's disk (the rehearsal's stale writer is
// deleted while its node is cut off); there is no enforcement log.
type cephStorage struct {
	target string // fencekind.CephTarget, set by install

	mu      sync.Mutex
	writers map[string][]string // writer id -> the nodes it may run on
}

func (s *cephStorage) name() string   { return fencekind.StorageCeph }
func (s *cephStorage) String() string { return "Ceph (one mon, one OSD, Pacific) at " + s.target }

func (s *cephStorage) install(ctx context.Context, w *world) error {
	w.spec.Storage = fencekind.StorageCeph
	if w.spec.Images.Ceph == "" {
		w.spec.Images.Ceph = *flagCephImage
	}
	w.k.REST = cluster.Config.Client().RESTConfig() // CephAudit execs in the Ceph pod
	if err := w.k.Install(ctx, w.spec, randHex(16)); err != nil {
		return err
	}
	var err error
	s.target, err = w.k.WriterTarget(ctx, w.spec)
	return err
}

func (s *cephStorage) uninstall(ctx context.Context, w *world) error { return w.k.Uninstall(ctx) }

func (s *cephStorage) prepare(ctx context.Context, w *world, ns string) error {
	return w.k.PrepareNamespace(ctx, w.spec, ns)
}

func (s *cephStorage) writerPod(w *world, ns, id, node string) *corev1.Pod {
	s.remember(id, node)
	return fencekind.WriterPod(w.spec.Images, ns, id, node, s.target)
}

func (s *cephStorage) statefulWriter(w *world, ns, name string, nodes []string) *appsv1.StatefulSet {
	s.remember(name+"-0", nodes...) // its one replica's pod name, its writer id
	return fencekind.StatefulWriter(w.spec.Images, ns, name, s.target, nodes)
}

func (s *cephStorage) remember(id string, nodes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range nodes {
		if !slices.Contains(s.writers[id], n) {
			s.writers[id] = append(s.writers[id], n)
		}
	}
}

// clientID is how the driver's Ceph backend names a client: its Ceph user
// and the address its session comes from (every writer is client.writer).
func (s *cephStorage) clientID(_, podIP string) string {
	return "client." + fencekind.CephWriterUser + "@" + podIP
}

func (s *cephStorage) log(ctx context.Context, w *world, l storageLog) ([]byte, error) {
	switch l {
	case acceptedLog:
		return w.k.CephAudit(ctx)
	case refusedLog:
		return s.refused(ctx, w)
	}
	return nil, fmt.Errorf("Ceph keeps no %s (the driver acknowledges after its OSD barrier; see ceph/README.md)", l)
}

// refused gathers every writer's refused attempts (EBLOCKLISTED from the
// OSD) from the log copies on the nodes it ran on, as refusal records
// (refstore's format: client, source address, sequence, time).
func (s *cephStorage) refused(ctx context.Context, w *world) ([]byte, error) {
	s.mu.Lock()
	writers := make(map[string][]string, len(s.writers))
	for id, nodes := range s.writers {
		writers[id] = slices.Clone(nodes)
	}
	s.mu.Unlock()
	var out []byte
	var errs []error
	for id, nodes := range writers {
		for _, node := range nodes {
			b, err := w.k.NodeFile(ctx, node, w.spec.WriterLogCopy(id))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, a := range fencekind.ParseLines[fencekind.Attempt](b) {
				if a.Outcome != "refused" {
					continue
				}
				line, _ := json.Marshal(fencekind.Accepted{Client: a.Client, Addr: a.Local, Seq: a.Seq, TNs: a.TNs})
				out = append(append(out, line...), '\n')
			}
		}
	}
	if out == nil && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
