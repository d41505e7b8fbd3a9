package reach

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"text/template"

	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/internal/netpolmodel"
)

// Topology is the set of namespaces and probe pods a suite deploys, and the
// port/protocols it probes between every pair of pods.
type Topology struct {
	Namespaces []Namespace `json:"namespaces"`
	// Probe lists the port/protocols, e.g. "tcp/80".
	Probe []string `json:"probe"`
}

// Namespace is one namespace of the topology and its pods.
type Namespace struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Pods   []Pod             `json:"pods"`
}

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
	return t, nil
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

// PeerNames lists "namespace/pod" for every pod, in file order.
func (t Topology) PeerNames() []string {
	var out []string
	for _, ns := range t.Namespaces {
		for _, p := range ns.Pods {
			out = append(out, ns.Name+"/"+p.Name)
		}
	}
	return out
}

// NamespaceLabels maps each namespace to its labels, for netpolmodel.New.
func (t Topology) NamespaceLabels() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, ns := range t.Namespaces {
		out[ns.Name] = ns.Labels
	}
	return out
}

// Endpoints returns the model endpoints of every pod in PeerNames order,
// with the addresses in ips (keyed by "namespace/pod").
func (t Topology) Endpoints(ips map[string]netip.Addr) ([]netpolmodel.Endpoint, error) {
	var out []netpolmodel.Endpoint
	for _, ns := range t.Namespaces {
		for _, p := range ns.Pods {
			ip, ok := ips[ns.Name+"/"+p.Name]
			if !ok {
				return nil, fmt.Errorf("no address for pod %s/%s", ns.Name, p.Name)
			}
			out = append(out, netpolmodel.Endpoint{Namespace: ns.Name, Name: p.Name, Labels: p.Labels, IP: ip})
		}
	}
	return out, nil
}

// Render expands a spec template against pod addresses: {{ip "ns/pod"}} is
// the pod's address and {{cidr "ns/pod" 16}} the prefix of that length
// holding it.
func Render(tmpl []byte, ips map[string]netip.Addr) ([]byte, error) {
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
