// Package run is `fenceproof fencing`: it runs writer workloads on a
// cluster whose csi-addons driver someone else deployed, fences a node
// through a NetworkFence, optionally rehearses the node's loss (cut,
// fence, out-of-service taint, the workload moved, restore, unfence),
// collects the writers' logs and a read-back of their records from another
// node, measures the clocks, has fencing/judge decide, writes the reports
// and removes everything it created, also when it fails or is interrupted:
// the cut node restored first, then unfenced, then the taint removed, then
// the workloads deleted. Every object it creates carries the label
// LabelRun, so that `fenceproof fencing cleanup --run ID` finds what a
// killed run left.
package run

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/fenceproof/fenceproof/fencing/contract"
)

// Storage kinds with a default writer (fencing/README.md, the writer contract).
const (
	StoragePath     = "path"     // a PersistentVolume mounted in the writer: fenceproof path-writer
	StorageLibrados = "librados" // a Ceph pool: fenceproof ceph-writer
	StorageRefstore = "refstore" // fenceproof's reference storage service: fenceproof writer
)

// StorageKinds lists them.
var StorageKinds = []string{StoragePath, StorageLibrados, StorageRefstore}

// Where the clients take their addresses to fence from.
const (
	CIDRsFromNode    = "node"    // the node's pod CIDRs and InternalIPs
	CIDRsFromClients = "clients" // the clients GetFenceClients reports on the node (the class's CSIAddonsNode status)
)

// DefaultImage carries the fenceproof binary (writers, agent);
// DefaultLibradosImage the build with librados (fenceproof ceph-writer).
// They are the tags fixtures/cluster builds for kind.
const (
	DefaultImage         = "fenceproof:dev"
	DefaultLibradosImage = "fenceproof-ceph:dev"
)

// Config is one run.
type Config struct {
	Kubeconfig string
	// Driver is the csi-addons driver name (a NetworkFenceClass's
	// provisioner, a CSIAddonsNode's spec.driver.name).
	Driver string
	// Class is the NetworkFenceClass to fence through; without it the
	// NetworkFence names Driver, Secret (namespace/name) and Params.
	Class  string
	Secret string
	Params map[string]string
	// Node is the node to fence; PeerNode runs the unfenced writer and the
	// reader (default: another schedulable node).
	Node, PeerNode string
	// Namespace holds the writers (created if missing, and then deleted).
	Namespace string
	// Storage is a storage kind; PodTemplate a YAML file (Pod, PodTemplate
	// or StatefulSet) whose first container (or the one named "writer")
	// follows the writer contract; without it, Storage's default.
	Storage, PodTemplate string
	Image, LibradosImage string
	// path: the volume's StorageClass ("" = the cluster's default) and size.
	StorageClass, VolumeSize string
	// librados: the mon addresses (or a ConfigMap namespace/name with key
	// mon_host), a Secret namespace/name with the keyring, user and pool.
	CephMonHost, CephConfigMap, CephSecret, CephUser, CephPool string
	// refstore: host:port, or a Service namespace/name[:port].
	Refstore string
	// CIDRsFrom is CIDRsFromNode or CIDRsFromClients.
	CIDRsFrom string
	// Rehearsal: the DR rehearsal instead of a plain fence. CutCommand and
	// RestoreCommand run with sh -c, the node's name in $1 and $NODE; on
	// kind they default to stopping and starting the node's kubelet.
	Rehearsal                  bool
	CutCommand, RestoreCommand string
	// Observe is how long the writers keep writing after the ack before
	// the fence is lifted; Interval the pause between two writes.
	Observe, Interval time.Duration
	// Timeout bounds the run (cleanup excluded).
	Timeout time.Duration
	// Reports is the directory of the run's reports (reports/fencing/<run>).
	Reports string
	// Name is the run's id (default: generated); it names every object.
	Name string
	// Out receives the progress lines (default standard output).
	Out io.Writer
}

// Defaults are the values a Config starts from.
func Defaults() Config {
	return Config{Storage: StorageLibrados, Image: DefaultImage, LibradosImage: DefaultLibradosImage, VolumeSize: "1Gi",
		CephUser: "admin", CephPool: "rbd", CIDRsFrom: CIDRsFromNode, Observe: 5 * time.Second, Interval: 20 * time.Millisecond,
		Timeout: 20 * time.Minute, Reports: "reports/fencing-runs", Out: os.Stdout}
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// Validate checks what can be checked without the cluster; its errors are
// bad flags (exit 2).
func (c *Config) Validate() error {
	var errs []error
	need := func(v, flag string) {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is required", flag))
		}
	}
	need(c.Node, "--node")
	need(c.Namespace, "--namespace")
	if c.Class == "" && c.Driver == "" {
		errs = append(errs, errors.New("--class or --driver is required"))
	}
	if c.Class == "" && c.Secret == "" {
		errs = append(errs, errors.New("without --class, --secret namespace/name is required (the NetworkFence names the driver's secret)"))
	}
	if c.Class != "" && (c.Secret != "" || len(c.Params) > 0) {
		errs = append(errs, errors.New("--secret and --param go with --driver only: a NetworkFenceClass names its own secret and parameters"))
	}
	if c.Secret != "" && !strings.Contains(c.Secret, "/") {
		errs = append(errs, fmt.Errorf("--secret %q: want namespace/name", c.Secret))
	}
	if !slices.Contains(StorageKinds, c.Storage) {
		errs = append(errs, fmt.Errorf("--storage %q: want one of %s", c.Storage, strings.Join(StorageKinds, ", ")))
	}
	if c.PodTemplate == "" {
		switch c.Storage {
		case StorageLibrados:
			if c.CephMonHost == "" && c.CephConfigMap == "" || c.CephSecret == "" {
				errs = append(errs, errors.New("--storage librados: --ceph-secret and --ceph-mon-host or --ceph-configmap are required (or give --pod-template)"))
			}
		case StorageRefstore:
			need(c.Refstore, "--storage refstore: --refstore")
		}
	}
	if c.CIDRsFrom != CIDRsFromNode && c.CIDRsFrom != CIDRsFromClients {
		errs = append(errs, fmt.Errorf("--cidrs-from %q: want node or clients", c.CIDRsFrom))
	}
	if c.CIDRsFrom == CIDRsFromClients && c.Class == "" {
		errs = append(errs, errors.New("--cidrs-from clients needs --class (csi-addons asks GetFenceClients per NetworkFenceClass)"))
	}
	if (c.CutCommand == "") != (c.RestoreCommand == "") {
		errs = append(errs, errors.New("--cut-command and --restore-command go together"))
	}
	if c.Name != "" && !nameRE.MatchString(c.Name) {
		errs = append(errs, fmt.Errorf("--name %q: want 1-32 lower-case letters, digits and dashes", c.Name))
	}
	if c.Node != "" && !contract.ValidName(c.Node) {
		errs = append(errs, fmt.Errorf("--node %q is not a node name", c.Node))
	}
	if c.Observe < time.Second || c.Interval <= 0 || c.Timeout <= 0 {
		errs = append(errs, errors.New("--observe must be at least 1s, --interval and --timeout positive"))
	}
	return errors.Join(errs...)
}

// splitName splits namespace/name.
func splitName(s string) (ns, name string) {
	ns, name, _ = strings.Cut(s, "/")
	return ns, name
}
