package isolation

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

// Topology is the set of namespaces and probe pods a suite deploys, and the
// port/protocols it probes between every pair of pods.
type Topology struct {
	Namespaces []Namespace `json:"namespaces"`
	// External lists workloads outside the cluster: not pods but hosts (in
	// the kind suites, containers on the cluster's Docker network). Each is
	// the peer "external/<name>"; no policy selects it and only ipBlock
	// peers match its address.
	External []External `json:"external,omitempty"`
	// Probe lists the port/protocols, e.g. "tcp/80".
	Probe []string `json:"probe"`
}

// Namespace is one namespace of the topology and its pods.
type Namespace struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Pods   []Pod             `json:"pods"`
}

// External is one workload outside the cluster.
type External struct {
	Name string `json:"name"`
}

// ExternalNamespace is the first part of an external peer's name
// ("external/<name>"); no namespace of a topology may have this name.
const ExternalNamespace = "external"

// IsExternal reports whether a peer name is an external workload's.
func IsExternal(peer string) bool { return strings.HasPrefix(peer, ExternalNamespace+"/") }

// Pod is one probe pod.
type Pod struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
}

// LoadTopology reads a topology file strictly.
func LoadTopology(path string) (Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Topology{}, err
	}
	var t Topology
	if err := yaml.UnmarshalStrict(data, &t); err != nil {
		return Topology{}, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := t.Cases(); err != nil {
		return Topology{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := t.validate(); err != nil {
		return Topology{}, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func (t Topology) validate() error {
	seen := map[string]bool{}
	for _, ns := range t.Namespaces {
		if ns.Name == ExternalNamespace {
			return fmt.Errorf("namespace %q: the name is reserved for external workloads", ns.Name)
		}
	}
	for _, e := range t.External {
		if e.Name == "" || strings.Contains(e.Name, "/") || seen[e.Name] {
			return fmt.Errorf("external workload %q: want a unique name without /", e.Name)
		}
		seen[e.Name] = true
	}
	return nil
}

// WithoutExternal returns the topology without its external workloads.
func (t Topology) WithoutExternal() Topology {
	t.External = nil
	return t
}

// Cases parses Probe.
func (t Topology) Cases() ([]PortProto, error) {
	var out []PortProto
	for _, s := range t.Probe {
		pc, err := ParsePortProto(s)
		if err != nil {
			return nil, err
		}
		out = append(out, pc)
	}
	return out, nil
}

// PeerNames lists "namespace/pod" for every pod, in file order, then
// "external/<name>" for every external workload.
func (t Topology) PeerNames() []string {
	var out []string
	for _, ns := range t.Namespaces {
		for _, p := range ns.Pods {
			out = append(out, ns.Name+"/"+p.Name)
		}
	}
	for _, e := range t.External {
		out = append(out, ExternalNamespace+"/"+e.Name)
	}
	return out
}

// NamespaceLabels maps each namespace to its labels, for NewModel.
func (t Topology) NamespaceLabels() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, ns := range t.Namespaces {
		out[ns.Name] = ns.Labels
	}
	return out
}

// Peers returns the model peers of every pod and external workload, in
// PeerNames order,
// with the addresses in ips (keyed by peer name).
func (t Topology) Peers(ips map[string]netip.Addr) ([]Peer, error) {
	var out []Peer
	for _, ns := range t.Namespaces {
		for _, p := range ns.Pods {
			ip, ok := ips[ns.Name+"/"+p.Name]
			if !ok {
				return nil, fmt.Errorf("no address for pod %s/%s", ns.Name, p.Name)
			}
			out = append(out, Peer{Namespace: ns.Name, Name: p.Name, Labels: p.Labels, IP: ip})
		}
	}
	for _, e := range t.External {
		name := ExternalNamespace + "/" + e.Name
		ip, ok := ips[name]
		if !ok {
			return nil, fmt.Errorf("no address for external workload %s", name)
		}
		// No namespace: outside the cluster.
		out = append(out, Peer{Name: name, IP: ip})
	}
	return out, nil
}

// RenderSpec expands a spec template against pod addresses: {{ip "ns/pod"}} is
// the pod's address and {{cidr "ns/pod" 16}} the prefix of that length
// holding it.
func RenderSpec(tmpl []byte, ips map[string]netip.Addr) ([]byte, error) {
	lookup := func(name string) (netip.Addr, error) {
		ip, ok := ips[name]
		if !ok {
			return netip.Addr{}, fmt.Errorf("no address for pod %q", name)
		}
		return ip, nil
	}
	t, err := template.New("spec").Option("missingkey=error").Funcs(template.FuncMap{
		"ip": func(name string) (string, error) {
			ip, err := lookup(name)
			return ip.String(), err
		},
		"cidr": func(name string, bits int) (string, error) {
			ip, err := lookup(name)
			if err != nil {
				return "", err
			}
			p, err := ip.Prefix(bits)
			return p.String(), err
		},
	}).Parse(string(tmpl))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, nil); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
