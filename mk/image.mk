# The fenceproof image vendors run (README: Running the image, Running in your
# cluster): built offline like the cluster's images (fixtures/cluster/build-image.sh,
# step "image": a Debian root filesystem from debootstrap, fenceproof built with
# -tags ceph, nothing pulled), tagged fenceproof:$(VERSION) (git describe, the
# version `fenceproof version` prints) and, with IMAGE=registry/path, also
# $(IMAGE):$(VERSION). `make cluster-image` builds it too; suites/image runs it
# (docker run against a driver socket on the host, and deploy/sanity-job on kind).
IMAGE ?= fenceproof

E2E_TARGETS += e2e-image
.PHONY: image e2e-image

image: e2e-deps ## the fenceproof image: Debian (glibc, librados2, tini) and fenceproof with every subcommand, tagged $(IMAGE):$(VERSION); offline, no registry (root)
	@FENCEPROOF_VERSION=$(VERSION) IMAGE_REPO=$(IMAGE) ONLY=image fixtures/cluster/build-image.sh

e2e-image: ## the image where vendors run it: docker run against a driver socket on the host, the sanity Job on kind against the reference driver and a broken one (E2E_KUBECONFIG=path)
	@$(CLUSTER_SH) e2e image
