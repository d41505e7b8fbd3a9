package isolation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/fenceproof/fenceproof/internal/e2e"
	"github.com/fenceproof/fenceproof/isolation"
)

// wrongCell is the one cell the deliberately wrong policy opens.
const wrongCell = "tcp/80 iso-app/stranger -> iso-mods/m0: expected X (blocked), observed . (allowed)"

// otherCases follow the matrix cases of cases.yaml (ISOLATION-001 ...) in
// the suite's case table.
var otherCases = []e2e.Case{
	{ID: "ISOLATION-014", Area: "legacy-selector", Cluster: e2e.Shared,
		Title: "gives identical matrices for the legacy workloadSelector and its equivalent location"},
	{ID: "ISOLATION-015", Area: "selector-change", Cluster: e2e.Shared,
		Title: "updates the policies in place when the application's selector changes, without redeploying modules, and the probes converge"},
	{ID: "ISOLATION-016", Area: "wrong-policy", Cluster: e2e.Shared,
		Title: "catches a deliberately wrong policy at its exact cell"},
	{ID: "ISOLATION-017", Area: "external-source", Cluster: e2e.Shared,
		Title: "reaches a pod with its own source address (no SNAT, so ipBlock can match it), and reports the source it sees for the pod's connections"},
}

// matrixCases are the matrix cases of cases.yaml, read once (after the
// flags are parsed: Ginkgo builds the tree in RunSpecs).
var matrixCases = sync.OnceValues(func() ([]isolation.MatrixCase, error) {
	return isolation.LoadCases(filepath.Join(*flagFixtures, "cases.yaml"))
})

// isolationCases is the suite's case table: the matrix cases, then
// otherCases. IDs are stable (reports and CI history refer to them) and
// never reused; TestCaseTable checks the table against the specs.
func isolationCases() e2e.Cases {
	mcs, _ := matrixCases()
	var list []e2e.Case
	for _, c := range mcs {
		list = append(list, e2e.Case{ID: c.ID, Area: "matrix", Cluster: e2e.Shared, Title: c.Name + ": " + c.Description})
	}
	return e2e.Cases{Suite: "isolation", Prefix: "ISOLATION", List: append(list, otherCases...)}
}

// run is one case as the suite executes it.
type run struct {
	// id is the case's ID; name names the matrix run in the report (a case
	// may measure several).
	id, name, description, spec string
	cells                       []isolation.Cell
	// tamper changes the cluster after the generated policies are applied
	// (the wrong policy); expected then follows the generated policies.
	tamper func(ctx context.Context) error
	// wantMismatches makes the case one that must show exactly these.
	wantMismatches []string
}

// result is what a case measured.
type result struct {
	app                isolation.Application
	generated          []networkingv1.NetworkPolicy
	expected, observed *isolation.Matrix
	rc                 isolation.CaseResult
}

func loadApp(spec string) isolation.Application {
	tmpl, err := os.ReadFile(filepath.Join(*flagFixtures, spec))
	Expect(err).NotTo(HaveOccurred())
	data, err := isolation.RenderSpec(tmpl, world.ips)
	Expect(err).NotTo(HaveOccurred())
	app, err := isolation.Parse(data)
	Expect(err).NotTo(HaveOccurred())
	return app
}

func predict(pols []networkingv1.NetworkPolicy) *isolation.Matrix {
	m, err := isolation.NewModel(world.topo.NamespaceLabels(), pols)
	Expect(err).NotTo(HaveOccurred())
	return isolation.Predict(m.WithProfile(world.profile), world.names, world.peers, world.cases)
}

// clusterPolicies lists the policies in the topology's namespaces.
func clusterPolicies(ctx context.Context) []networkingv1.NetworkPolicy {
	var out []networkingv1.NetworkPolicy
	for _, ns := range world.topo.Namespaces {
		l, err := world.cs.NetworkingV1().NetworkPolicies(ns.Name).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		out = append(out, l.Items...)
	}
	return out
}

// execute applies the case's application, predicts, probes and records the
// case in the report; it returns the result without asserting on it. The
// application's policies are removed when the spec ends.
func execute(ctx context.Context, r run, app isolation.Application) result {
	start := time.Now()
	generated, err := isolation.Apply(ctx, world.cs, app)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(removePolicies, app)
	if r.tamper != nil {
		Expect(r.tamper(ctx)).To(Succeed())
	}
	intended := predict(generated)
	inCluster := predict(clusterPolicies(ctx))
	rc := isolation.CaseResult{ID: r.id, Name: r.name, Description: r.description, WantMismatches: r.wantMismatches}
	for _, p := range generated {
		rc.Notes = append(rc.Notes, "policy "+p.Namespace+"/"+p.Name)
	}
	expected := inCluster
	if r.tamper != nil {
		// The cluster holds a policy the spec does not ask for: the spec's
		// intent is the expectation.
		expected = intended
		ms, _ := isolation.Diff(intended, inCluster)
		rc.Notes = append(rc.Notes, fmt.Sprintf("the model on the tampered cluster policies predicts %d differing cell(s): %v", len(ms), ms))
	} else if ms, _ := isolation.Diff(intended, inCluster); len(ms) > 0 {
		rc.Failures = append(rc.Failures, fmt.Sprintf("the cluster's policies do not predict what the generated ones do: %v", ms))
	}
	rc.Failures = append(rc.Failures, isolation.CheckCells(intended, r.cells, world.profile.Name)...)
	for _, c := range r.cells {
		if c.Profile == world.profile.Name {
			rc.Notes = append(rc.Notes, "pinned for the "+c.Profile+" profile only: "+c.String())
		}
	}

	// Settle towards what the cluster's policies predict, the state the
	// data plane converges to, tampered or not: settling towards the
	// intent stopped as soon as the data plane matched it, which a
	// tampered cluster does until the wrong policy reaches the plugin
	// (ISOLATION-016 once saw no mismatch under load).
	observed, st := world.runner.Run(ctx, world.probes, world.cases, inCluster)
	rc.Expected, rc.Observed = expected, observed
	rc.Duration, rc.MatrixTime = time.Since(start), st.FirstPass
	rc.Notes = append(rc.Notes, fmt.Sprintf("full matrix %dx%dx%d: first pass %s, total %s, %d probes in %d execs, %d retried, %d settle rounds, %d probe errors",
		len(world.names), len(world.names), len(world.cases), st.FirstPass.Round(time.Millisecond), st.Duration.Round(time.Millisecond),
		st.Probes, st.Execs, st.Retries, st.Rounds-1, st.Errors))
	if slices.ContainsFunc(st.Disagreeing, func(n int) bool { return n > 0 }) {
		rc.Notes = append(rc.Notes, fmt.Sprintf("cells disagreeing with what the cluster's policies predict after each pass: %v", st.Disagreeing))
	}
	if st.LastError != "" {
		rc.Notes = append(rc.Notes, "last probe error: "+st.LastError)
	}
	report.add(rc)

	logf("case %s: full matrix (%d pods x %d pods x %d port/protocols) time %s (first pass; %s with retries and settling)",
		r.name, len(world.names), len(world.names), len(world.cases), st.FirstPass.Round(time.Millisecond), st.Duration.Round(time.Millisecond))
	AddReportEntry("matrix time "+r.name, st.FirstPass.Round(time.Millisecond).String())
	GinkgoWriter.Printf("EXPECTED\n%s\nOBSERVED\n%s\nDIFFERENCE\n%s\n", expected.Tables(), observed.Tables(), isolation.DiffTables(expected, observed))
	return result{app: app, generated: generated, expected: expected, observed: observed, rc: rc}
}

// expectPassed fails the spec when the case has a problem. The message
// leads with the problems and the difference (CI logs often keep only the
// first lines of a failure), then both matrices and how they were measured.
func expectPassed(res result) {
	problems := res.rc.Problems()
	Expect(problems).To(BeEmpty(), "case %s: %d problem(s):\n  %s\nDIFFERENCE\n%s\nmeasured: %s\nEXPECTED\n%s\nOBSERVED\n%s",
		res.rc.Name, len(problems), strings.Join(problems, "\n  "), isolation.DiffTables(res.expected, res.observed),
		strings.Join(res.rc.Notes, "; "), res.expected.Tables(), res.observed.Tables())
}

// removePolicies deletes the policies of app (Apply with no workload
// location leaves none) and waits until the data plane shows it: each
// case's teardown. The wait keeps the next case, which creates policies of
// the same names, from racing the network plugin: a Cilium 1.15 agent that
// sees the delete and the re-create of one name late gets them as a single
// update, replaces rules by labels that carry the UID, and so keeps
// enforcing the deleted policy's rules for good (isolation/README.md,
// "Stale rules").
func removePolicies(ctx SpecContext, app isolation.Application) {
	app.Selector = isolation.Selector{}
	_, err := isolation.Apply(ctx, world.cs, app)
	Expect(err).NotTo(HaveOccurred())
	expectDataPlaneFollowsPolicies(ctx, "after removing the policies of "+app.Name)
}

// expectDataPlaneFollowsPolicies probes the full matrix against what the
// policies in the cluster predict (settling as a case does) and fails with
// the cells that differ: the plugin enforces rules the API server does not
// hold.
func expectDataPlaneFollowsPolicies(ctx context.Context, when string) {
	start := time.Now()
	expected := predict(clusterPolicies(ctx))
	observed, st := world.runner.Run(ctx, world.probes, world.cases, expected)
	ms, err := isolation.Diff(expected, observed)
	Expect(err).NotTo(HaveOccurred())
	var cells []string
	for _, m := range ms {
		cells = append(cells, m.String())
	}
	Expect(cells).To(BeEmpty(), "%s, the data plane still differs from the policies in the cluster after %s of probing "+
		"(disagreeing cells after each pass: %v): the network plugin enforces rules no policy in the API server holds, "+
		"such as those of a deleted policy (restart its agents or recreate the cluster)\nDIFFERENCE\n%s",
		when, st.Duration.Round(time.Millisecond), st.Disagreeing, isolation.DiffTables(expected, observed))
	logf("%s: the data plane follows the cluster's policies (%s, %d pass(es))", when, time.Since(start).Round(time.Millisecond), st.Rounds)
}

// caseEntries are the matrix cases' table entries; when the case file
// cannot be read, one entry that fails with why.
func caseEntries() []TableEntry {
	cs, err := matrixCases()
	if err != nil {
		return []TableEntry{Entry("the case file cases.yaml", isolation.MatrixCase{}, err)}
	}
	var out []TableEntry
	for _, c := range cs {
		out = append(out, isolationCases().Entry(c.ID, NodeTimeout(5*time.Minute), c, error(nil)))
	}
	return out
}

var _ = Describe("data-plane isolation", func() {
	DescribeTable("matrix cases",
		func(ctx SpecContext, c isolation.MatrixCase, casesErr error) {
			Expect(casesErr).NotTo(HaveOccurred())
			if !world.outside.on() {
				if specUsesExternal(c.Spec) {
					Skip("this case is about the workload outside the cluster, which is " + world.outside.why)
				}
				var dropped int
				if c.Cells, dropped = withoutExternalCells(c.Cells); dropped > 0 {
					logf("case %s: %d cell(s) about the workload outside the cluster dropped: it is %s", c.Name, dropped, world.outside.why)
				}
			}
			r := run{id: c.ID, name: c.Name, description: c.Description, spec: c.Spec, cells: c.Cells}
			expectPassed(execute(ctx, r, loadApp(c.Spec)))
		},
		caseEntries(),
	)

	isolationCases().It("ISOLATION-014", func(ctx SpecContext) {
		legacy := execute(ctx, run{id: "ISOLATION-014", name: "legacy", description: "the legacy workloadSelector", spec: "apps/legacy.yaml"}, loadApp("apps/legacy.yaml"))
		expectPassed(legacy)
		located := execute(ctx, run{id: "ISOLATION-014", name: "legacy-equivalent", description: "the location equivalent to the legacy workloadSelector", spec: "apps/app-workload.yaml"}, loadApp("apps/app-workload.yaml"))
		expectPassed(located)
		for _, pair := range [][2]*isolation.Matrix{{legacy.expected, located.expected}, {legacy.observed, located.observed}} {
			ms, err := isolation.Diff(pair[0], pair[1])
			Expect(err).NotTo(HaveOccurred())
			Expect(ms).To(BeEmpty(), "legacy and location matrices differ")
		}
		Expect(legacy.generated).To(Equal(located.generated), "the generated policies differ")
	}, NodeTimeout(5*time.Minute))

	isolationCases().It("ISOLATION-015", func(ctx SpecContext) {
		before := execute(ctx, run{id: "ISOLATION-015", name: "selector-before", description: "before the selector change (app namespace's workload)", spec: "apps/app-workload.yaml"}, loadApp("apps/app-workload.yaml"))
		expectPassed(before)
		modules := podIdentities(ctx, "iso-mods")
		policies := policyUIDs(ctx, "iso-mods")

		app := before.app
		app.Selector = loadApp("apps/other-namespace.yaml").Selector
		after := execute(ctx, run{id: "ISOLATION-015", name: "selector-after", description: "after changing the selector to the other namespace's workload",
			spec: "apps/other-namespace.yaml", cells: mustCells(
				"iso-other/workload -> iso-mods/m0 tcp/80 .",
				"iso-app/workload -> iso-mods/m0 tcp/80 X",
			)}, app)
		expectPassed(after)
		Expect(podIdentities(ctx, "iso-mods")).To(Equal(modules), "module pods were recreated or restarted")
		Expect(policyUIDs(ctx, "iso-mods")).To(Equal(policies), "policies were recreated instead of updated")
		ms, _ := isolation.Diff(before.expected, after.expected)
		Expect(ms).NotTo(BeEmpty(), "the selector change changed nothing: the spec proves nothing")
	}, NodeTimeout(5*time.Minute))

	isolationCases().It("ISOLATION-016", func(ctx SpecContext) {
		r := run{
			id: "ISOLATION-016", name: "wrong-policy", description: "a deliberately wrong entry policy admits one pod too many",
			spec: "apps/app-workload.yaml", tamper: applyWrongPolicy,
			wantMismatches: []string{wrongCell},
		}
		if *flagWrong == "fail" {
			r.wantMismatches = nil
		}
		res := execute(ctx, r, loadApp(r.spec))
		ms, err := isolation.Diff(res.expected, res.observed)
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("wrong policy: %d mismatching cell(s): %v\n", len(ms), ms)
		expectPassed(res)
	}, NodeTimeout(5*time.Minute))
})

func mustCells(ss ...string) []isolation.Cell {
	var out []isolation.Cell
	for _, s := range ss {
		c, err := isolation.ParseCell(s)
		Expect(err).NotTo(HaveOccurred())
		out = append(out, c)
	}
	return out
}

// applyWrongPolicy replaces the generated entry policy with the fixture.
func applyWrongPolicy(ctx context.Context) error {
	data, err := os.ReadFile(filepath.Join(*flagFixtures, "wrong-entry-policy.yaml"))
	if err != nil {
		return err
	}
	var wrong networkingv1.NetworkPolicy
	if err := yaml.UnmarshalStrict(data, &wrong); err != nil {
		return err
	}
	api := world.cs.NetworkingV1().NetworkPolicies(wrong.Namespace)
	cur, err := api.Get(ctx, wrong.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Spec = wrong.Spec
	_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

type podIdentity struct {
	UID      types.UID
	Restarts int32
}

func podIdentities(ctx context.Context, ns string) map[string]podIdentity {
	l, err := world.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	out := map[string]podIdentity{}
	for _, p := range l.Items {
		out[p.Name] = podIdentity{UID: p.UID, Restarts: restarts(p)}
	}
	return out
}

func restarts(p corev1.Pod) int32 {
	var n int32
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

func policyUIDs(ctx context.Context, ns string) []string {
	l, err := world.cs.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name+"="+string(p.UID))
	}
	slices.Sort(out)
	return out
}
