package isolation

// The application spec: the input of the generator (generate.go).

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Labels set on every generated policy, so the applier can find and prune the
// policies of one application.
const (
	LabelApplication          = "isolation.fenceproof.io/application"
	LabelApplicationNamespace = "isolation.fenceproof.io/application-namespace"
	LabelModule               = "isolation.fenceproof.io/module"
)

// NamespaceNameLabel is the immutable label Kubernetes sets on every
// namespace, whose value is the namespace's name.
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// Application is the part of an application spec the generator reads.
type Application struct {
	// Name of the application; it prefixes the policy names.
	Name string `json:"name"`
	// Namespace the application is deployed in; the legacy workloadSelector
	// selects pods there.
	Namespace string `json:"namespace"`
	// Selector says where the application's workloads run.
	Selector Selector `json:"selector"`
	// Chain is the data plane: the modules and what they may reach.
	Chain Chain `json:"chain"`
}

// Selector holds the workload locations and the deprecated workloadSelector.
type Selector struct {
	// WorkloadSelector is the deprecated selector of workload pods in the
	// application's namespace.
	WorkloadSelector *metav1.LabelSelector `json:"workloadSelector,omitempty"`
	// WorkloadLocations are OR'ed; each becomes one peer of the entry
	// module's ingress rule.
	WorkloadLocations []WorkloadLocation `json:"workloadLocations,omitempty"`
}

// WorkloadLocation is one place a workload may connect from: pods (by pod
// and/or namespace selector) or an IP block, never both.
type WorkloadLocation struct {
	// WorkloadPodSelector selects workload pods; without NamespaceSelector
	// it selects them in the entry module's namespace.
	WorkloadPodSelector *metav1.LabelSelector `json:"workloadPodSelector,omitempty"`
	// NamespaceSelector selects namespaces; without WorkloadPodSelector it
	// admits every pod in them.
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// IPBlock admits sources by address; it excludes the other fields.
	IPBlock *networkingv1.IPBlock `json:"ipBlock,omitempty"`
}

// Chain is an ordered list of modules in one namespace: Modules[0] is the
// entry module and module i may only talk to module i+1.
type Chain struct {
	// Namespace the modules run in; the policies are created there.
	Namespace string `json:"namespace"`
	// Modules in chain order.
	Modules []Module `json:"modules"`
	// DNS is where modules resolve names; nil means kube-dns in kube-system.
	DNS *DNS `json:"dns,omitempty"`
}

// Module is one data-plane module.
type Module struct {
	// Name of the module, unique in the chain.
	Name string `json:"name"`
	// PodSelector is the set of labels that selects the module's pods; it
	// must be non-empty and must not select another module's pods.
	PodSelector map[string]string `json:"podSelector"`
	// Ports the module serves; its predecessor (or the workloads) may reach
	// only these.
	Ports []Port `json:"ports"`
	// Egress lists the datasets the module may reach besides its successor.
	Egress []EgressTarget `json:"egress,omitempty"`
}

// Port is a port number and protocol (TCP when empty).
type Port struct {
	Port     int32           `json:"port"`
	Protocol corev1.Protocol `json:"protocol,omitempty"`
}

// EgressTarget is an allowed destination outside the chain, such as a
// dataset endpoint, by CIDR and ports.
type EgressTarget struct {
	// Name documents the target (e.g. the dataset).
	Name string `json:"name,omitempty"`
	// CIDR of the target; Except carves addresses out of it.
	CIDR   string   `json:"cidr"`
	Except []string `json:"except,omitempty"`
	// Ports allowed on the target; at least one.
	Ports []Port `json:"ports"`
}

// DNS is the resolver the modules may reach.
type DNS struct {
	// Namespace of the resolver pods.
	Namespace string `json:"namespace"`
	// PodSelector of the resolver pods.
	PodSelector map[string]string `json:"podSelector"`
	// Port of the resolver, reached on UDP and TCP.
	Port int32 `json:"port"`
}

// DefaultDNS is kube-dns (CoreDNS) as every kubeadm-based cluster, kind
// included, deploys it.
func DefaultDNS() DNS {
	return DNS{Namespace: "kube-system", PodSelector: map[string]string{"k8s-app": "kube-dns"}, Port: 53}
}

// Parse reads an application spec from YAML or JSON. Unknown fields are an
// error, so a misspelt selector cannot silently drop a restriction.
func Parse(data []byte) (Application, error) {
	var app Application
	if err := yaml.UnmarshalStrict(data, &app); err != nil {
		return Application{}, fmt.Errorf("application spec: %w", err)
	}
	return app, nil
}
