// Command fenceworld deploys fenceproof's reference world on a cluster the
// way a storage vendor deploys theirs, so that `fenceproof fencing` can be
// pointed at it knowing only names: the csi-addons controller (upstream
// CRDs and RBAC, v0.14.0), the reference driver with the csi-addons
// sidecar, its NetworkFenceClass, and the storage it fences (a single-node
// Ceph, or refstore). It is internal/fencekind's world, the one the kind
// fencing suite deploys in-process, as a command of its own.
//
//	fenceworld up --kubeconfig K [--storage ceph|refstore] [--driver-fault F] [--manifests DIR]
//	fenceworld down --kubeconfig K
//
// up on a deployed world only rolls the driver out with the faults given
// (none: the faithful driver). It writes what it deployed, as YAML (Secret
// values redacted), to --manifests, and prints the `fenceproof fencing`
// flags that name it. make fencing-world runs it on the kind cluster.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/e2e-framework/klient/k8s/resources"
	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/internal/fencekind"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) == 0 || (args[0] != "up" && args[0] != "down") {
		fmt.Fprintln(os.Stderr, "usage: fenceworld up|down --kubeconfig K [--storage ceph|refstore] [--driver-fault F ...] [--manifests DIR]")
		return 2
	}
	fs := flag.NewFlagSet("fenceworld "+args[0], flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "the cluster's kubeconfig")
	storage := fs.String("storage", fencekind.StorageCeph, "the storage the driver fences: ceph or refstore")
	manifests := fs.String("manifests", "reports/fencing-world", "where to write what was deployed (world.yaml)")
	deploy := fs.String("csi-addons-deploy", fencekind.DeployDir(), "csi-addons' crds.yaml and rbac.yaml (make cluster-image copies them from the module)")
	img := fencekind.DefaultImages
	fs.StringVar(&img.Fenceproof, "image", img.Fenceproof, "the fenceproof image (refstore, driver)")
	fs.StringVar(&img.Ceph, "ceph-image", img.Ceph, "the Ceph image (daemons, the driver's Ceph backend)")
	fs.StringVar(&img.Controller, "controller-image", img.Controller, "the csi-addons controller image")
	fs.StringVar(&img.Sidecar, "sidecar-image", img.Sidecar, "the csi-addons sidecar image")
	var faults listFlag
	fs.Var(&faults, "driver-fault", "a fault of the driver (driver/fault), e.g. ack-before-enforce (repeatable; none: the faithful driver)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if *storage != fencekind.StorageCeph && *storage != fencekind.StorageRefstore {
		fmt.Fprintf(os.Stderr, "fenceworld: --storage %q: want ceph or refstore\n", *storage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	k, err := connect(*kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceworld:", err)
		return 2
	}
	t0 := time.Now()
	if args[0] == "down" {
		if err := k.Uninstall(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "fenceworld down:", err)
			return 1
		}
		fmt.Printf("fenceworld: removed in %.1f s\n", time.Since(t0).Seconds())
		return 0
	}
	if err := up(ctx, k, *storage, *deploy, img, faults); err != nil {
		fmt.Fprintln(os.Stderr, "fenceworld up:", err)
		return 1
	}
	path, err := writeManifests(ctx, k, *manifests)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fenceworld up: manifests:", err)
		return 1
	}
	fmt.Printf("fenceworld: %s world up in %.1f s (driver faults: %v); what was deployed: %s\n", *storage, time.Since(t0).Seconds(), faults, path)
	fmt.Printf("name it to fenceproof fencing with: --class %s (driver %s) %s\n", fencekind.ClassName, fencekind.DriverIdentity, storageFlags(*storage))
	return 0
}

func connect(kubeconfig string) (fencekind.Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fencekind.Cluster{}, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fencekind.Cluster{}, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return fencekind.Cluster{}, err
	}
	res, err := resources.New(rc)
	if err != nil {
		return fencekind.Cluster{}, err
	}
	return fencekind.Cluster{CS: cs, Dyn: dyn, Res: res, REST: rc, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}, nil
}

// up installs the world, or, when its driver is deployed, rolls the
// driver out with faults if they differ from the deployed ones.
func up(ctx context.Context, k fencekind.Cluster, storage, deploy string, img fencekind.Images, faults []string) error {
	if have, err := k.DriverFaults(ctx); err == nil {
		if slices.Equal(have, faults) {
			fmt.Println("fenceworld: deployed already, driver faults", have)
			return nil
		}
		fmt.Printf("fenceworld: rolling the driver out with faults %v (was %v)\n", faults, have)
		return k.RedeployDriver(ctx, faults)
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	cp, err := k.CS.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
	if err != nil || len(cp.Items) == 0 {
		return fmt.Errorf("the storage side runs on a control-plane node: none found (%v)", err)
	}
	b := make([]byte, 16)
	rand.Read(b)
	w := fencekind.World{Images: img, StorageNode: cp.Items[0].Name, RunID: "world-" + time.Now().UTC().Format("20060102-150405"), Faults: faults, Storage: storage}
	fmt.Printf("fenceworld: deploying csi-addons, the reference driver and %s on %s\n", storage, w.StorageNode)
	if err := k.InstallUpstream(ctx, deploy); err != nil {
		return err
	}
	return k.Install(ctx, w, hex.EncodeToString(b))
}

// storageFlags are the fencing flags that name the world's storage.
func storageFlags(storage string) string {
	ns := fencekind.StorageNamespace
	if storage == fencekind.StorageCeph {
		return fmt.Sprintf("--storage librados --ceph-configmap %s/%s --ceph-secret %s/%s --ceph-user %s --ceph-pool %s",
			ns, fencekind.CephConfigMap, ns, fencekind.CephWriterKeys, fencekind.CephWriterUser, fencekind.CephPool)
	}
	return fmt.Sprintf("--storage refstore --refstore %s/%s", ns, fencekind.RefstoreName)
}

// worldKinds are what writeManifests shows, by namespace ("" cluster-wide).
var worldKinds = []struct {
	gvr        schema.GroupVersionResource
	namespaced bool
}{
	{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, false},
	{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, false},
	{fencekind.NetworkFenceClassGVR, false},
	{schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "services"}, true},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
	{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, true},
	{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, true},
}

// writeManifests writes the world's objects as deployed (no status, no
// server fields, Secret values redacted) to dir/world.yaml.
func writeManifests(ctx context.Context, k fencekind.Cluster, dir string) (string, error) {
	var out strings.Builder
	out.WriteString("# fenceproof's reference world as fenceworld deployed it (the csi-addons CRDs and the controller's RBAC are upstream's: crds.yaml, rbac.yaml)\n")
	for _, wk := range worldKinds {
		var items []unstructured.Unstructured
		for _, ns := range []string{fencekind.ControllerNamespace, fencekind.StorageNamespace} {
			var l *unstructured.UnstructuredList
			var err error
			if wk.namespaced {
				l, err = k.Dyn.Resource(wk.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			} else {
				l, err = k.Dyn.Resource(wk.gvr).List(ctx, metav1.ListOptions{})
			}
			if err != nil {
				return "", err
			}
			for _, o := range l.Items {
				if mine(o, wk.namespaced) && !(wk.namespaced && o.GetOwnerReferences() != nil && wk.gvr.Resource == "pods") {
					items = append(items, o)
				}
			}
			if !wk.namespaced {
				break
			}
		}
		for _, o := range items {
			b, err := yaml.Marshal(clean(o))
			if err != nil {
				return "", err
			}
			out.WriteString("---\n")
			out.Write(b)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "world.yaml")
	return path, os.WriteFile(path, []byte(out.String()), 0o644)
}

// mine: a cluster-wide object of the world (named after it), or any
// object of its namespaces except the service account tokens Kubernetes
// makes.
func mine(o unstructured.Unstructured, namespaced bool) bool {
	n := o.GetName()
	if namespaced {
		return n != "kube-root-ca.crt" && n != "default"
	}
	switch o.GetKind() {
	case "Namespace":
		return n == fencekind.ControllerNamespace || n == fencekind.StorageNamespace
	case "NetworkFenceClass":
		return true
	}
	return n == fencekind.SidecarSA
}

// clean drops what the server adds and redacts Secret values.
func clean(o unstructured.Unstructured) map[string]any {
	m := o.DeepCopy().Object
	delete(m, "status")
	md, _ := m["metadata"].(map[string]any)
	for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "annotations", "ownerReferences"} {
		delete(md, f)
	}
	if o.GetKind() == "Secret" {
		for _, f := range []string{"data", "stringData"} {
			if d, ok := m[f].(map[string]any); ok {
				for key := range d {
					d[key] = "<redacted>"
				}
			}
		}
	}
	return m
}

type listFlag []string

func (f *listFlag) String() string     { return strings.Join(*f, ",") }
func (f *listFlag) Set(s string) error { *f = append(*f, s); return nil }
