package smoke

import (
	"context"
	"fmt"
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/fenceproof/fenceproof/internal/e2e"
)

// smokeCases is the suite's case table; IDs are stable (reports and CI
// history refer to them) and never reused. TestCaseTable checks it against
// the specs.
var smokeCases = e2e.Cases{Suite: "smoke", Prefix: "SMOKE", List: []e2e.Case{
	{ID: "SMOKE-001", Area: "connectivity", Cluster: e2e.Shared, Title: "reaches the server on the other worker without policies"},
	{ID: "SMOKE-002", Area: "default-deny", Cluster: e2e.Shared, Title: "blocks a fresh connection under a default-deny ingress policy"},
	{ID: "SMOKE-003", Area: "allow-policy", Cluster: e2e.Shared, Title: "admits only the labelled client under an allow policy"},
	{ID: "SMOKE-004", Area: "policy-deletion", Cluster: e2e.Shared, Title: "restores reachability when the policies are deleted"},
}}

// The cases are the steps of one story, in order, on one setup (BeforeAll,
// its cleanup beside it): a client pod on worker A reaches a server pod on
// worker B; a default-deny ingress policy blocks it; an allow policy admits
// the labelled client only; deleting the policies restores reachability.
// Every check is a fresh connection made by the probe in the client pod.
var _ = Describe("NetworkPolicy enforcement across nodes", Ordered, func() {
	const (
		probeTimeout = 2 * time.Second
		// How long a policy change may take to reach the datapath.
		converge = 60 * time.Second
	)
	var (
		ns             string
		server, client *corev1.Pod
		other          *corev1.Pod
		serverAddr     string
	)

	// connect makes one fresh TCP connection from pod to the server.
	connect := func(ctx context.Context, from *corev1.Pod) e2e.ProbeResult {
		r, err := e2e.Connect(ctx, cluster.Config.Client().RESTConfig(), cluster.Clientset,
			ns, from.Name, "tcp", serverAddr, probeTimeout)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("%s -> %s: ok=%v reply=%q error=%q (%dms)\n", from.Name, r.To, r.OK, r.Reply, r.Error, r.Ms)
		return r
	}
	reachable := func(ctx context.Context, from *corev1.Pod) func() bool {
		return func() bool { return connect(ctx, from).OK }
	}

	BeforeAll(func(ctx SpecContext) {
		cs := cluster.Clientset
		workers, err := e2e.WorkerNodes(ctx, cs)
		Expect(err).NotTo(HaveOccurred())
		Expect(len(workers)).To(BeNumerically(">=", 2), "the smoke spec needs two worker nodes, got %v", workers)

		ns = "smoke-" + rand.String(5)
		Expect(e2e.CreateNamespace(ctx, cs, ns, map[string]string{"fenceproof.io/suite": "smoke"})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(e2e.DeleteNamespace(ctx, cs, ns, 2*time.Minute)).To(Succeed())
		}, NodeTimeout(3*time.Minute))

		pods, err := e2e.CreatePodsAndWait(ctx, cs, 3*time.Minute,
			e2e.ProbePod(ns, "server", workers[1], map[string]string{"app": "server"}),
			e2e.ProbePod(ns, "client", workers[0], map[string]string{"role": "client"}),
			e2e.ProbePod(ns, "other", workers[0], map[string]string{"role": "other"}),
		)
		Expect(err).NotTo(HaveOccurred())
		server, client, other = pods[0], pods[1], pods[2]
		Expect(client.Spec.NodeName).NotTo(Equal(server.Spec.NodeName))
		serverAddr = net.JoinHostPort(server.Status.PodIP, fmt.Sprint(e2e.ProbePorts[0]))
		GinkgoWriter.Printf("server %s on %s, client %s and other %s on %s\n",
			server.Status.PodIP, server.Spec.NodeName, client.Status.PodIP, other.Status.PodIP, client.Spec.NodeName)
	}, NodeTimeout(5*time.Minute))

	smokeCases.It("SMOKE-001", func(ctx SpecContext) {
		r := connect(ctx, client)
		Expect(r.OK).To(BeTrue(), "client -> server: %+v", r)
		Expect(r.Reply).To(Equal("ok server"))
		Expect(connect(ctx, other).OK).To(BeTrue())
		udp, err := e2e.Connect(ctx, cluster.Config.Client().RESTConfig(), cluster.Clientset, ns, client.Name, "udp", serverAddr, probeTimeout)
		Expect(err).NotTo(HaveOccurred())
		Expect(udp.OK).To(BeTrue(), "client -> server over UDP: %+v", udp)
	}, NodeTimeout(time.Minute))

	smokeCases.It("SMOKE-002", func(ctx SpecContext) {
		_, err := cluster.Clientset.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "default-deny-ingress"},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(reachable(ctx, client)).WithTimeout(converge).WithPolling(time.Second).Should(BeFalse())
		// Not a fluke: it stays blocked for both clients.
		Consistently(reachable(ctx, client)).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(BeFalse())
		Expect(connect(ctx, other).OK).To(BeFalse())
	}, NodeTimeout(2*time.Minute))

	smokeCases.It("SMOKE-003", func(ctx SpecContext) {
		port := intstr.FromInt32(e2e.ProbePorts[0])
		tcp := corev1.ProtocolTCP
		_, err := cluster.Clientset.NetworkingV1().NetworkPolicies(ns).Create(ctx, &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "allow-client"},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "server"}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{
					From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"role": "client"}}}},
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
				}},
			},
		}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		Eventually(reachable(ctx, client)).WithTimeout(converge).WithPolling(time.Second).Should(BeTrue())
		Consistently(reachable(ctx, other)).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(BeFalse())
		Expect(connect(ctx, client).OK).To(BeTrue())
	}, NodeTimeout(2*time.Minute))

	smokeCases.It("SMOKE-004", func(ctx SpecContext) {
		for _, name := range []string{"allow-client", "default-deny-ingress"} {
			Expect(cluster.Clientset.NetworkingV1().NetworkPolicies(ns).Delete(ctx, name, metav1.DeleteOptions{})).To(Succeed())
		}
		Eventually(reachable(ctx, other)).WithTimeout(converge).WithPolling(time.Second).Should(BeTrue())
		Expect(connect(ctx, client).OK).To(BeTrue())
	}, NodeTimeout(2*time.Minute))
})
