# The offline kind cluster of the end-to-end suites (fixtures/cluster/README.md).
# Everything is built from the Go module proxy and Debian packages, cached in
# $(FENCEPROOF_CACHE) (outside the tree, shared by clones), and stamped so a
# second run with nothing changed takes seconds.
CLUSTER      ?= fenceproof
KEEP_CLUSTER ?=
CLUSTER_SH   := fixtures/cluster/cluster.sh
export CLUSTER KEEP_CLUSTER

# docker.io and debootstrap are also installed by the scripts when root and
# missing; jq and patch are used on the host by the image build.
DEB_PACKAGES += docker.io debootstrap jq patch

E2E_TARGETS += e2e-smoke
.PHONY: cluster-image cluster cluster-down e2e-smoke

cluster-image: ## build the offline kind node image and our images (cached; ~20 min cold, seconds warm)
	@fixtures/cluster/build-image.sh

cluster: cluster-image ## create (or reuse) kind cluster $(CLUSTER): 1 control plane + 2 workers, Cilium, CoreDNS
	@$(CLUSTER_SH) up

cluster-down: ## delete kind cluster $(CLUSTER)
	@$(CLUSTER_SH) down

e2e-smoke: ## smoke spec: NetworkPolicy enforced across nodes (creates/reuses the cluster; KEEP_CLUSTER=1 keeps it)
	@$(CLUSTER_SH) e2e smoke
