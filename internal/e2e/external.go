package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// External is a workload outside the cluster: a Docker container on the
// cluster's Docker network (kind's "kind"), not a pod, that reaches pod
// addresses directly through static routes to every node's pod CIDR, as a
// host on a routed network would. Policies never select it; only ipBlock
// peers match its address.
type External struct {
	// Container is the Docker container's name.
	Container string
	// Network is the Docker network it is attached to.
	Network string
	// IP is its address on that network.
	IP netip.Addr
}

// ExternalOptions describe an out-of-cluster workload to start.
type ExternalOptions struct {
	// Container name; it must not exist.
	Container string
	// Network is the Docker network; default "kind".
	Network string
	// Image to run (a reference or an image ID).
	Image string
	// Labels set on the container (RemoveExternals finds leftovers by them).
	Labels map[string]string
	// Entrypoint overrides the image's entrypoint when set.
	Entrypoint string
	// Args are the arguments after the image (its entrypoint's arguments).
	Args []string
}

// DefaultExternalNetwork is the Docker network kind puts its nodes on.
const DefaultExternalNetwork = "kind"

// docker runs the docker CLI and returns its trimmed standard output; the
// error carries standard error.
func docker(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "docker", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// DockerNetworkPrefixes returns the IPv4 and IPv6 subnets of a Docker
// network; an error when Docker does not answer or the network is missing.
func DockerNetworkPrefixes(ctx context.Context, network string) ([]netip.Prefix, error) {
	out, err := docker(ctx, "network", "inspect", "-f", "{{range .IPAM.Config}}{{.Subnet}} {{end}}", network)
	if err != nil {
		return nil, err
	}
	var ps []netip.Prefix
	for _, f := range strings.Fields(out) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("docker network %s: subnet %q: %w", network, f, err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// StartExternal runs the container detached on the network and returns it
// with its IPv4 address. On error nothing is left running.
func StartExternal(ctx context.Context, o ExternalOptions) (*External, error) {
	if o.Network == "" {
		o.Network = DefaultExternalNetwork
	}
	args := []string{"run", "-d", "--pull", "never", "--name", o.Container, "--network", o.Network, "--hostname", o.Container}
	keys := make([]string, 0, len(o.Labels))
	for k := range o.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--label", k+"="+o.Labels[k])
	}
	if o.Entrypoint != "" {
		args = append(args, "--entrypoint", o.Entrypoint)
	}
	args = append(append(args, o.Image), o.Args...)
	e := &External{Container: o.Container, Network: o.Network}
	if _, err := docker(ctx, args...); err != nil {
		_ = e.Remove(context.WithoutCancel(ctx))
		return nil, err
	}
	out, err := docker(ctx, "inspect", "-f", "{{with index .NetworkSettings.Networks \""+o.Network+"\"}}{{.IPAddress}}{{end}}", o.Container)
	if err == nil {
		e.IP, err = netip.ParseAddr(out)
	}
	if err != nil {
		logs, _ := docker(ctx, "logs", "--tail", "20", o.Container)
		_ = e.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("container %s has no address on network %s: %v (logs: %s)", o.Container, o.Network, err, logs)
	}
	return e, nil
}

// Remove deletes the container (running or not); a missing one is fine.
func (e *External) Remove(ctx context.Context) error {
	_, err := docker(ctx, "rm", "-f", e.Container)
	if err != nil && strings.Contains(err.Error(), "No such container") {
		return nil
	}
	return err
}

// RemoveExternals deletes every container carrying label key=value, e.g.
// left by a run that was killed; it returns their names.
func RemoveExternals(ctx context.Context, key, value string) ([]string, error) {
	out, err := docker(ctx, "ps", "-a", "--filter", "label="+key+"="+value, "--format", "{{.Names}}")
	if err != nil {
		return nil, err
	}
	names := strings.Fields(out)
	for _, n := range names {
		if err := (&External{Container: n}).Remove(ctx); err != nil {
			return names, err
		}
	}
	return names, nil
}

// Exec runs a command in the container and returns its standard output; a
// non-zero exit status is an error only when there is no output (the probe
// exits 1 for "unreachable" and still prints its line).
func (e *External) Exec(ctx context.Context, cmd ...string) (string, error) {
	c := exec.CommandContext(ctx, "docker", append([]string{"exec", e.Container}, cmd...)...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if err != nil && out.Len() == 0 {
		return "", fmt.Errorf("docker exec %s %s: %w: %s", e.Container, strings.Join(cmd, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Route is a static route to a node's pod CIDR through the node.
type Route struct {
	Node string
	To   netip.Prefix
	Via  netip.Addr
}

func (r Route) String() string { return fmt.Sprintf("%s via %s (%s)", r.To, r.Via, r.Node) }

// PodRoutes returns one route per pod CIDR of every node, through the
// node's InternalIP of the same family.
func PodRoutes(ctx context.Context, cs kubernetes.Interface) ([]Route, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []Route
	for _, n := range nodes.Items {
		cidrs := n.Spec.PodCIDRs
		if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
			cidrs = []string{n.Spec.PodCIDR}
		}
		for _, c := range cidrs {
			p, err := netip.ParsePrefix(c)
			if err != nil {
				return nil, fmt.Errorf("node %s: pod CIDR %q: %w", n.Name, c, err)
			}
			via, ok := internalIP(n, p.Addr().Is4())
			if !ok {
				return nil, fmt.Errorf("node %s has no InternalIP of the family of its pod CIDR %s", n.Name, p)
			}
			out = append(out, Route{Node: n.Name, To: p, Via: via})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no node has a pod CIDR (spec.podCIDRs): cannot route to pods from outside")
	}
	return out, nil
}

func internalIP(n corev1.Node, v4 bool) (netip.Addr, bool) {
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		ip, err := netip.ParseAddr(a.Address)
		if err == nil && ip.Is4() == v4 {
			return ip, true
		}
	}
	return netip.Addr{}, false
}

// AddRoutes installs the routes in the container's network namespace from
// the host (nsenter + ip, as root), so the container itself needs no
// capability. Every gateway must be on the container's network.
func (e *External) AddRoutes(ctx context.Context, routes []Route) error {
	pid, err := docker(ctx, "inspect", "-f", "{{.State.Pid}}", e.Container)
	if err != nil {
		return err
	}
	for _, r := range routes {
		cmd := exec.CommandContext(ctx, "nsenter", "-t", pid, "-n", "ip", "route", "replace", r.To.String(), "via", r.Via.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("route %s in container %s: %w: %s (needs root, nsenter and ip on the host)", r, e.Container, err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// ArchiveImageID returns the image ID ("sha256:...") of the single image in
// a `docker save` archive, so a suite can run exactly the image of its own
// checkout even when another checkout has since retagged the same name.
func ArchiveImageID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return "", fmt.Errorf("%s: no manifest.json (not a docker save archive)", path)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		if h.Name != "manifest.json" {
			continue
		}
		var m []struct{ Config string }
		if err := json.NewDecoder(tr).Decode(&m); err != nil {
			return "", fmt.Errorf("%s: manifest.json: %w", path, err)
		}
		if len(m) != 1 || m[0].Config == "" {
			return "", fmt.Errorf("%s: manifest.json lists %d images, want 1", path, len(m))
		}
		cfg := m[0].Config
		cfg = strings.TrimPrefix(cfg, "blobs/sha256/")
		cfg = strings.TrimSuffix(cfg, ".json")
		return "sha256:" + cfg, nil
	}
}

// LoadArchive loads a `docker save` archive into the host's Docker and
// returns the image ID it holds.
func LoadArchive(ctx context.Context, path string) (string, error) {
	id, err := ArchiveImageID(path)
	if err != nil {
		return "", err
	}
	if _, err := docker(ctx, "image", "inspect", id); err == nil {
		return id, nil
	}
	if _, err := docker(ctx, "load", "-i", path); err != nil {
		return "", err
	}
	if _, err := docker(ctx, "image", "inspect", id); err != nil {
		return "", fmt.Errorf("%s loaded, but Docker does not know its image ID %s: %w", path, id, err)
	}
	return id, nil
}

// OwnImageArchive is the path of this checkout's archive of one of our
// images (built by `make cluster-image`), e.g. OwnImageArchive("fenceproof-probe").
func OwnImageArchive(name string) (string, error) {
	p, err := findRepoPaths()
	if err != nil {
		return "", err
	}
	return filepath.Join(p.ownImages, name+".tar"), nil
}
