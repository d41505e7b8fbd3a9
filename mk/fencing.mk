# Storage-side fencing: the reference storage service (refstore), the
# refstore driver backend and the write-audit oracle (audit). Their
# tests run in `make test` through test-go (real loopback TCP and gRPC, no
# root needed); these targets run them alone and write demo reports.

.PHONY: test-fencing-core audit-demo
test-fencing-core: ## only the refstore, writer, refstore backend and oracle tests (race detector on)
	$(GO) test -race -count=1 ./refstore/... ./driver/backend/refstore/ ./audit/ ./driver/fault/

audit-demo: ## local fence/unfence against refstore, faithful and ack-before-enforce drivers; reports in $(REPORTS)/audit-local-*
	FP_AUDIT_REPORTS=$(abspath $(REPORTS)) $(GO) test -count=1 -run 'TestIntegration' ./audit/
	@ls $(REPORTS)/audit-local-*.md

BENCH_TARGETS += bench-refstore
REFSTORE_BENCHTIME ?= 2s
.PHONY: bench-refstore
bench-refstore: ## refstore acknowledged (fsynced) writes/s with 1 and 8 sessions, and their ratio
	@out=$$($(GO) test -run '^$$' -bench BenchmarkWrites -benchtime $(REFSTORE_BENCHTIME) ./refstore/ 2>/dev/null | grep '^Benchmark'); \
	echo "$$out"; \
	echo "$$out" | awk '{ for (i = 1; i < NF; i++) if ($$(i+1) == "writes/s") w[$$1] = $$i } \
	  END { for (k in w) { if (k ~ /sessions=1-/ || k ~ /sessions=1$$/) one = w[k]; if (k ~ /sessions=8/) eight = w[k] } \
	        if (one && eight) printf "ratio writes/s 8 sessions / 1 session: %.2f\n", eight / one }'

# The fencing e2e suite (suites/fencing): NetworkFence CRs through the real
# csi-addons controller and sidecar (v0.14.0) to the reference driver and
# refstore, writers on both workers, the write-audit oracle. With
# FENCING_KUBECONFIG (or E2E_KUBECONFIG, which make e2e sets) it runs against
# that existing cluster: nothing is created or deleted, and the csi-addons
# images and CRD files must be there (`make cluster-image` builds them).
# Otherwise fixtures/cluster/cluster.sh builds the images, creates or reuses
# the kind cluster $(CLUSTER), runs the suite and deletes the cluster if it
# created it (KEEP_CLUSTER=1 keeps it). E2E_GINKGO_ARGS adds Ginkgo flags
# (e.g. -ginkgo.seed=N replays a spec order). FENCING_ACK_BEFORE_ENFORCE=fail
# turns the ack-before-enforce spec into a plain case, so the run fails and
# names the offending write. Reports: reports/fencing.{md,xml} and
# reports/fencing/ (per case: audit, driver and writer logs, the oracle's
# report, replay.sh).
FENCING_KUBECONFIG         ?=
FENCING_ACK_BEFORE_ENFORCE ?= expect
# FENCING_STORAGE=ceph runs the same cases on a real single-node Ceph (the
# fenceproof-ceph:dev image: Debian's Ceph, the driver's Ceph backend,
# librados writers; ceph/README.md); reports/fencing-ceph.{md,xml}.
FENCING_STORAGE            ?= refstore
export FENCING_ACK_BEFORE_ENFORCE FENCING_STORAGE
FENCING_RUN = E2E_KUBECONFIG="$(or $(FENCING_KUBECONFIG),$(E2E_KUBECONFIG))" E2E_TIMEOUT=$${E2E_TIMEOUT:-40m} fixtures/cluster/cluster.sh e2e fencing

E2E_TARGETS += e2e-fencing e2e-fencing-ceph
.PHONY: e2e-fencing e2e-fencing-ceph rehearse-kind

e2e-fencing: ## fencing end to end: NetworkFence CR -> csi-addons -> driver -> refstore, audit oracle (KEEP_CLUSTER=1, FENCING_KUBECONFIG=path)
	@$(FENCING_RUN)

e2e-fencing-ceph: ## the fencing suite on a real single-node Ceph: NetworkFence CR -> csi-addons -> driver (Ceph backend) -> OSD blocklist, librados writers; reports/fencing-ceph.md
	@FENCING_STORAGE=ceph E2E_JUNIT_SUITE=fencingceph $(FENCING_RUN)

rehearse-kind: ## DR rehearsal on kind: cut worker B off, fence it via the CR, out-of-service taint, restore; prints the timeline
	@E2E_GINKGO_ARGS="-ginkgo.label-filter=area:rehearsal $(E2E_GINKGO_ARGS)" $(FENCING_RUN)

# Fencing on your own cluster (fencing/README.md): `fenceproof fencing`
# against a world it did not deploy. make fencing-world deploys fenceproof's
# reference world as a vendor deploys theirs (cmd/fenceworld: csi-addons,
# the reference driver with its sidecar, a single-node Ceph or refstore) on
# the kind cluster, or on E2E_KUBECONFIG/KUBECONFIG=path, and writes what it
# deployed to reports/fencing-world/world.yaml; make fencing-world-down
# removes it. FENCING_WORLD_FLAGS adds flags (--driver-fault ack-before-enforce).
FENCING_WORLD_STORAGE ?= ceph
FENCING_WORLD_FLAGS   ?=
FENCING_WORLD_KUBECONFIG = $(or $(E2E_KUBECONFIG),$(shell $(CLUSTER_SH) kubeconfig))

E2E_TARGETS += e2e-byo-fencing
.PHONY: e2e-byo-fencing fencing-world fencing-world-down

e2e-byo-fencing: ## fenceproof fencing given only names against a world deployed apart (cmd/fenceworld): PASS, the DR rehearsal, FAIL at the exact write of a driver that acks before it enforces
	@E2E_TIMEOUT=$${E2E_TIMEOUT:-40m} $(CLUSTER_SH) e2e byofencing

fencing-world: ## deploy the reference world (csi-addons, reference driver + sidecar, Ceph) as a vendor would, on the kind cluster or KUBECONFIG=path
	$(GO) run ./cmd/fenceworld up --kubeconfig $(FENCING_WORLD_KUBECONFIG) --storage $(FENCING_WORLD_STORAGE) $(FENCING_WORLD_FLAGS)

fencing-world-down: ## remove what make fencing-world deployed
	$(GO) run ./cmd/fenceworld down --kubeconfig $(FENCING_WORLD_KUBECONFIG)
