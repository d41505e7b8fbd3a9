package isolation

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/isolation"
)

// The workload outside the cluster (topology.yaml's external peers): a
// container on the cluster's Docker network running the probe, not a pod.
var (
	flagExternal   = flag.String("isolation.external", envOr("ISOLATION_EXTERNAL", "auto"), "the out-of-cluster workload: on (the suite fails without it), off, or auto (on when Docker has --isolation.external-network and the nodes are on it, as for kind); default $ISOLATION_EXTERNAL")
	flagExtNetwork = flag.String("isolation.external-network", envOr("ISOLATION_EXTERNAL_NETWORK", e2e.DefaultExternalNetwork), "Docker network of the out-of-cluster workload (the kind nodes' network)")
	flagExtImage   = flag.String("isolation.external-image", envOr("ISOLATION_EXTERNAL_IMAGE", ""), "image of the out-of-cluster workload; default: this checkout's fenceproof-probe archive (.cache/own-images), run by its image ID")
	flagProbeImage = flag.String("isolation.probe-image", envOr("ISOLATION_PROBE_IMAGE", e2e.ProbeImage), "image of the probe pods (already on the nodes)")
)

// externalLabel marks the suite's containers, with the cluster's API server
// as value, so that a later run removes what a killed one left.
const externalLabel = "fenceproof.io/isolation-external"

// outside is the suite's out-of-cluster side.
type outside struct {
	// byPeer maps "external/<name>" to its container; empty when off.
	byPeer map[string]*e2e.External
	// why the external workloads are off, for skips and the report.
	why    string
	routes []e2e.Route
}

func (o *outside) on() bool { return o != nil && len(o.byPeer) > 0 }

// startOutside starts the topology's external workloads, or says why not
// (auto mode on a cluster that is not on a Docker network of this host).
func startOutside(ctx context.Context, cs kubernetes.Interface, apiServer string, topo isolation.Topology) (*outside, error) {
	o := &outside{byPeer: map[string]*e2e.External{}}
	off := func(format string, args ...any) (*outside, error) {
		o.why = fmt.Sprintf(format, args...)
		if *flagExternal == "on" {
			return nil, fmt.Errorf("--isolation.external=on: %s", o.why)
		}
		return o, nil
	}
	switch {
	case len(topo.External) == 0:
		return off("the topology has no external workload")
	case *flagExternal == "off":
		o.why = "off (--isolation.external=off)"
		return o, nil
	case *flagExternal != "on" && *flagExternal != "auto":
		return nil, fmt.Errorf("--isolation.external=%q: want on, off or auto", *flagExternal)
	}
	subnets, err := e2e.DockerNetworkPrefixes(ctx, *flagExtNetwork)
	if err != nil {
		return off("no Docker network %q on this host (%v): not a kind cluster here", *flagExtNetwork, err)
	}
	routes, err := e2e.PodRoutes(ctx, cs)
	if err != nil {
		return off("%v", err)
	}
	for _, r := range routes {
		if !inAny(r.Via, subnets) {
			return off("node %s (%s) is not on Docker network %s %v", r.Node, r.Via, *flagExtNetwork, subnets)
		}
	}
	o.routes = routes
	image := *flagExtImage
	if image == "" {
		archive, err := e2e.OwnImageArchive("fenceproof-probe")
		if err != nil {
			return nil, err
		}
		if image, err = e2e.LoadArchive(ctx, archive); err != nil {
			return nil, fmt.Errorf("the out-of-cluster workload's image: %w (run `make cluster-image`)", err)
		}
	}
	if left, err := e2e.RemoveExternals(ctx, externalLabel, apiServer); err != nil {
		return nil, err
	} else if len(left) > 0 {
		logf("removed out-of-cluster workloads left by an earlier run: %v", left)
	}
	ports := joinPorts(e2e.ProbePorts)
	for _, x := range topo.External {
		name := isolation.ExternalNamespace + "/" + x.Name
		ext, err := e2e.StartExternal(ctx, e2e.ExternalOptions{
			Container:  fmt.Sprintf("fenceproof-iso-%s-%d", x.Name, os.Getpid()),
			Network:    *flagExtNetwork,
			Image:      image,
			Entrypoint: *flagProbePath,
			Labels:     map[string]string{externalLabel: apiServer},
			Args:       []string{"serve", "--tcp", ports, "--udp", ports, "--reply-peer"},
		})
		if err != nil {
			o.stop(ctx)
			return nil, err
		}
		o.byPeer[name] = ext
		if err := ext.AddRoutes(ctx, routes); err != nil {
			o.stop(ctx)
			return nil, err
		}
		logf("  %-20s %-15s container %s on Docker network %s, routes %v", name, ext.IP, ext.Container, ext.Network, routes)
	}
	return o, nil
}

// stop removes the containers.
func (o *outside) stop(ctx context.Context) {
	if o == nil {
		return
	}
	for name, ext := range o.byPeer {
		if err := ext.Remove(ctx); err != nil {
			logf("remove %s (%s): %v", name, ext.Container, err)
		}
	}
}

func inAny(ip netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func joinPorts(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ",")
}

// withoutExternalCells drops the cells about external peers (when the
// external workloads are off) and says how many.
func withoutExternalCells(cells []isolation.Cell) ([]isolation.Cell, int) {
	var out []isolation.Cell
	for _, c := range cells {
		if !isolation.IsExternal(c.From) && !isolation.IsExternal(c.To) {
			out = append(out, c)
		}
	}
	return out, len(cells) - len(out)
}

// specUsesExternal reports whether an application spec template refers to
// an external peer's address.
func specUsesExternal(spec string) bool {
	data, err := os.ReadFile(*flagFixtures + "/" + spec)
	return err == nil && strings.Contains(string(data), `"`+isolation.ExternalNamespace+`/`)
}

// The source-address spec probes once each way, per port/protocol, between
// the external workload and a pod no policy selects (iso-app/stranger), with
// servers that reply with the client address they saw.
var _ = Describe("data-plane isolation: the workload outside the cluster", func() {
	isolationCases().It("ISOLATION-017", func(ctx SpecContext) {
		if !world.outside.on() {
			Skip("out-of-cluster workload " + world.outside.why)
		}
		const podName = "iso-app/stranger"
		var ext isolation.ProbeEndpoint
		for _, p := range world.probes {
			if p.Container != "" {
				ext = p
				break
			}
		}
		var pod isolation.ProbeEndpoint
		for _, p := range world.probes {
			if p.Name == podName {
				pod = p
			}
		}
		ns, name := splitName(podName)
		po, err := world.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		nodeIP := nodeInternalIP(ctx, po.Spec.NodeName)

		var notes []string
		for _, pc := range world.cases {
			in, err := world.runner.Prober.Probe(ctx, isolation.ProbeRequest{From: ext, To: pod, Case: pc})
			Expect(err).NotTo(HaveOccurred())
			Expect(in.Reachable).To(BeTrue(), "%s -> %s %s: %+v", ext.Name, pod.Name, pc, in)
			Expect(in.Reply).To(Equal(fmt.Sprintf("ok %s from %s", name, ext.IP)),
				"%s -> %s %s: the pod must see the outside workload's own address %s (no SNAT), or ipBlock could not match it", ext.Name, pod.Name, pc, ext.IP)

			out, err := world.runner.Prober.Probe(ctx, isolation.ProbeRequest{From: pod, To: ext, Case: pc})
			Expect(err).NotTo(HaveOccurred())
			Expect(out.Reachable).To(BeTrue(), "%s -> %s %s: %+v", pod.Name, ext.Name, pc, out)
			// Leaving the cluster, a pod's connection is either masqueraded
			// to its node's address (Cilium's enable-ipv4-masquerade, our
			// manifest) or keeps the pod address; anything else is a bug.
			seen := out.Reply[strings.LastIndex(out.Reply, " ")+1:]
			how := map[string]string{
				nodeIP.String(): "the node's address: masqueraded (SNAT)",
				pod.IP.String(): "the pod's own address: not translated",
			}[seen]
			Expect(how).NotTo(BeEmpty(),
				"%s (%s on node %s, %s) -> %s %s: reply %q; want the node's or the pod's address", pod.Name, pod.IP, po.Spec.NodeName, nodeIP, ext.Name, pc, out.Reply)
			notes = append(notes,
				fmt.Sprintf("%s: %s (%s) -> %s (%s): the pod saw source %s (the workload's own address, no SNAT)", pc, ext.Name, ext.IP, pod.Name, pod.IP, ext.IP),
				fmt.Sprintf("%s: %s (%s, node %s %s) -> %s: the workload saw source %s (%s)", pc, pod.Name, pod.IP, po.Spec.NodeName, nodeIP, ext.Name, seen, how))
		}
		report.mu.Lock()
		report.r.Notes = append(report.r.Notes, notes...)
		report.mu.Unlock()
		for _, n := range notes {
			logf("%s", n)
		}
	}, NodeTimeout(2*time.Minute))
})

func nodeInternalIP(ctx context.Context, node string) netip.Addr {
	n, err := world.cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
				return ip
			}
		}
	}
	Fail("node " + node + " has no IPv4 InternalIP")
	return netip.Addr{}
}
