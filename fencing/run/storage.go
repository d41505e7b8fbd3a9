package run

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fenceproof/fenceproof/fencing/report"
)

// refstorePort is refstore's default write port.
const refstorePort = 7070

// resolveStorage looks up what the default writer of the storage kind
// needs: refstore's address; Ceph's mon addresses and keyring (the Secret
// copied into the run's namespace, where the writers can mount it).
func (r *runner) resolveStorage(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	switch r.cfg.Storage {
	case StorageRefstore:
		addr, err := r.refstoreAddr(ctx)
		if err != nil {
			return nil, err
		}
		out["refstore"] = addr
		r.step(report.StepInfo, "refstore at %s", addr)
	case StorageLibrados:
		mon := r.cfg.CephMonHost
		if mon == "" {
			ns, name := splitName(r.cfg.CephConfigMap)
			cm, err := r.cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, fail(StatusUsage, "--ceph-configmap %s: %v", r.cfg.CephConfigMap, err)
			}
			if mon = cm.Data["mon_host"]; mon == "" {
				return nil, fail(StatusUsage, "--ceph-configmap %s has no key mon_host", r.cfg.CephConfigMap)
			}
		}
		ns, name := splitName(r.cfg.CephSecret)
		s, err := r.cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fail(StatusUsage, "--ceph-secret %s: %v", r.cfg.CephSecret, err)
		}
		key := keyringKey(s.Data)
		if key == "" {
			return nil, fail(StatusUsage, "--ceph-secret %s: want one key, or a key named keyring or *.keyring", r.cfg.CephSecret)
		}
		cp := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: r.name + "-ceph-keyring", Namespace: r.cfg.Namespace,
			Labels: map[string]string{LabelRun: r.name, partOf: "fenceproof"}}, Data: map[string][]byte{"keyring": s.Data[key]}}
		if _, err := r.cs.CoreV1().Secrets(r.cfg.Namespace).Create(ctx, cp, metav1.CreateOptions{}); err != nil {
			return nil, setup(err, "copying the keyring")
		}
		out["mon_host"], out["keyring_secret"], out["keyring_key"] = mon, cp.Name, "keyring"
		r.step(report.StepInfo, "Ceph: mon %s, client.%s, pool %s", mon, r.cfg.CephUser, r.cfg.CephPool)
	}
	return out, nil
}

// keyringKey picks the Secret's keyring: its only key, or "keyring", or
// the first key ending in .keyring.
func keyringKey(data map[string][]byte) string {
	if len(data) == 1 {
		for k := range data {
			return k
		}
	}
	if _, ok := data["keyring"]; ok {
		return "keyring"
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if strings.HasSuffix(k, ".keyring") {
			return k
		}
	}
	return ""
}

// refstoreAddr is --refstore as host:port: given so, or a Service's
// ClusterIP (namespace/name[:port]).
func (r *runner) refstoreAddr(ctx context.Context) (string, error) {
	if _, _, err := net.SplitHostPort(r.cfg.Refstore); err == nil && !strings.Contains(r.cfg.Refstore, "/") {
		return r.cfg.Refstore, nil
	}
	svc, port, _ := strings.Cut(r.cfg.Refstore, ":")
	ns, name := splitName(svc)
	if ns == "" || name == "" {
		return "", fail(StatusUsage, "--refstore %q: want host:port or namespace/service[:port]", r.cfg.Refstore)
	}
	s, err := r.cs.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", fail(StatusUsage, "--refstore %s: %v", r.cfg.Refstore, err)
	}
	if port == "" {
		port = strconv.Itoa(refstorePort)
	}
	if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
		return "", fail(StatusUsage, "--refstore %s: the Service has no ClusterIP", r.cfg.Refstore)
	}
	return net.JoinHostPort(s.Spec.ClusterIP, port), nil
}
