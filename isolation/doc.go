// Package isolation is the data-plane isolation feature (seed 002): it
// generates the NetworkPolicies that isolate an application's data plane,
// predicts the reachability they allow, measures it with probes and reports
// the difference.
//
// The generated policies: the entry module admits only the application's
// workload locations, each chained module admits only its predecessor, and
// every module egresses only to its successor, its allowed datasets and DNS.
// Workload locations are OR'ed; the legacy workloadSelector is a pod
// selector plus a namespace selector on kubernetes.io/metadata.name = the
// application's namespace; an application with neither gets no policies.
//
// One file per concept, in the order the data flows:
//
//	spec.go        the application spec (Application, Parse)
//	generate.go    spec -> NetworkPolicies (Generate); validate.go checks the spec
//	apply.go       the policies into a cluster, updated in place (Apply)
//	model.go       NetworkPolicies -> allowed or not, per connection (Model; profile.go: what plugins differ in)
//	topology.go    the probe pods and outside workloads a suite deploys (Topology, RenderSpec)
//	matrix.go      the reachability matrix and its prediction from the model (Matrix, Predict)
//	diff.go        expected vs observed, cyclonus-style tables (Diff, Tables)
//	cases.go       the matrix cases of a suite and their pinned cells (LoadCases, CheckCells)
//	probe*.go      the matrix measured by probes in pods or containers (Runner, ExecProber, DockerProber)
//	report.go      the cases as JUnit XML and Markdown (Report)
//
// The probe's wire format lives in the subpackage probeline, so that the
// probe binary (cmd/probe) stays small and free of client-go.
//
// `fenceproof isolation -f SPEC` prints the generated policies; the kind
// suite suites/isolation runs the whole loop against a real cluster.
package isolation
