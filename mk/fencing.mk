# The fencing e2e suite (suites/fencing, issue 8): NetworkFence CRs through
# the real csi-addons controller and sidecar (v0.14.0) to the reference
# driver and refstore, writers on both workers, the write-audit oracle.
# With FENCING_KUBECONFIG it runs against that existing cluster (nothing
# created or deleted; the csi-addons images and CRD files must be there:
# `make cluster-image` builds them); otherwise fixtures/cluster/cluster.sh
# builds the images, creates or reuses the kind cluster $(CLUSTER), runs the
# suite and deletes the cluster if it created it (KEEP_CLUSTER=1 keeps it).
# FENCING_ACK_BEFORE_ENFORCE=fail turns the ack-before-enforce spec into a
# plain case, so the run fails and names the offending write.
# Reports: reports/fencing.{md,xml} and reports/fencing/.
FENCING_KUBECONFIG         ?=
FENCING_ACK_BEFORE_ENFORCE ?= expect
export FENCING_ACK_BEFORE_ENFORCE

E2E_TARGETS += e2e-fencing
.PHONY: e2e-fencing rehearse-kind

e2e-fencing: ## fencing end to end: NetworkFence CR -> csi-addons -> driver -> refstore, audit oracle (KEEP_CLUSTER=1, FENCING_KUBECONFIG=path)
ifneq ($(FENCING_KUBECONFIG),)
	@mkdir -p $(REPORTS)
	FENCEPROOF_E2E=1 $(GO) test -count=1 -timeout 60m -v ./suites/fencing -args --kubeconfig=$(abspath $(FENCING_KUBECONFIG)) -ginkgo.v
else
	@E2E_TIMEOUT=$${E2E_TIMEOUT:-60m} fixtures/cluster/cluster.sh e2e fencing
endif

rehearse-kind: ## DR rehearsal on kind: cut worker B off, fence it via the CR, out-of-service taint, restore; prints the timeline
ifneq ($(FENCING_KUBECONFIG),)
	@mkdir -p $(REPORTS)
	FENCEPROOF_E2E=1 $(GO) test -count=1 -timeout 60m -v ./suites/fencing -args --kubeconfig=$(abspath $(FENCING_KUBECONFIG)) -ginkgo.v -ginkgo.label-filter=rehearsal
else
	@E2E_TIMEOUT=$${E2E_TIMEOUT:-60m} E2E_GINKGO_ARGS=-ginkgo.label-filter=rehearsal fixtures/cluster/cluster.sh e2e fencing
endif
