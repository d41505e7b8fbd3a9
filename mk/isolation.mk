# The data-plane isolation e2e suite (suites/isolation, seed 002). With
# ISOLATION_KUBECONFIG (or E2E_KUBECONFIG) it runs against that existing
# cluster (nothing created or deleted); otherwise fixtures/cluster/cluster.sh builds the images,
# creates or reuses the kind cluster, runs the suite and deletes the cluster
# if it created it (KEEP_CLUSTER=1 keeps it). ISOLATION_WRONG_POLICY=fail
# turns the wrong-policy spec into a plain case, so the suite fails and shows
# the exact cell. Reports: reports/isolation.{md,xml}.
ISOLATION_KUBECONFIG   ?=
ISOLATION_WRONG_POLICY ?= expect
export ISOLATION_WRONG_POLICY

# The out-of-cluster workload is routed to the pods from the host: nsenter
# (util-linux, always installed) and ip.
E2E_DEB_PACKAGES += iproute2

E2E_TARGETS += e2e-isolation
.PHONY: e2e-isolation

e2e-isolation: ## data-plane isolation: NetworkPolicies from workload locations, predicted vs probed matrices (KEEP_CLUSTER=1, ISOLATION_KUBECONFIG=path)
	@E2E_KUBECONFIG="$(or $(ISOLATION_KUBECONFIG),$(E2E_KUBECONFIG))" $(CLUSTER_SH) e2e isolation
