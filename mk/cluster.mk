# The offline kind cluster of the end-to-end suites (fixtures/cluster/README.md).
# Everything is built from the Go module proxy and Debian packages, cached in
# $(FENCEPROOF_CACHE) (outside the tree, shared by clones), and stamped so a
# second run with nothing changed takes seconds.
CLUSTER      ?= fenceproof
KEEP_CLUSTER ?=
CLUSTER_SH   := fixtures/cluster/cluster.sh
export CLUSTER KEEP_CLUSTER

# E2E_KUBECONFIG=path runs `make e2e` and every e2e-* target on that existing
# cluster: nothing is built, loaded, created or deleted. `make e2e
# KUBECONFIG=path` says the same; a KUBECONFIG that is only in the
# environment is ignored, so that make e2e never lands on whatever cluster
# the shell happens to point at.
E2E_KUBECONFIG ?= $(if $(filter command line,$(origin KUBECONFIG)),$(KUBECONFIG))
export E2E_KUBECONFIG

# docker.io and debootstrap are also installed by the scripts when root and
# missing; jq and patch are used on the host by the image build.
E2E_DEB_PACKAGES += docker.io debootstrap jq patch

E2E_TARGETS += e2e-smoke
.PHONY: cluster-image cluster cluster-down e2e-smoke

cluster-image: e2e-deps ## build the offline kind node image and our images (cached; ~20 min cold, seconds warm)
	@fixtures/cluster/build-image.sh

cluster: cluster-image ## create (or reuse) kind cluster $(CLUSTER): 1 control plane + 2 workers, Cilium, CoreDNS
	@$(CLUSTER_SH) up

cluster-down: ## delete kind cluster $(CLUSTER)
	@$(CLUSTER_SH) down

e2e-smoke: ## smoke spec: NetworkPolicy enforced across nodes (creates/reuses the cluster; KEEP_CLUSTER=1 keeps it; E2E_KUBECONFIG=path)
	@$(CLUSTER_SH) e2e smoke
