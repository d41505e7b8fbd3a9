# CSI Proxy conformance (seed 003, csiproxy/). `make csiproxy-sanity`
# runs the suite against the simulated Windows host, then the suite's own
# tests: every fault-injected host fails exactly its rule(s).
# CSIPROXY_ENDPOINT=unix:///dir runs the suite against a host serving there
# instead (CSIPROXY_FLAGS passes more flags). `make csiproxy-fuzz` runs each
# fuzz target of the restriction validator for CSIPROXY_FUZZTIME.
CSIPROXY_ENDPOINT ?=
CSIPROXY_FLAGS    ?=
CSIPROXY_FUZZTIME ?= 10s
CSIPROXY_FUZZ     := FuzzPath FuzzSMBRemotePath FuzzISCSI FuzzPipe
CSIPROXY_ADMISSION_KUBECONFIG ?=

TEST_TARGETS += csiproxy-sanity csiproxy-fuzz csiproxy-windows
E2E_TARGETS  += e2e-csiproxy-admission
.PHONY: csiproxy-sanity csiproxy-fuzz csiproxy-windows e2e-csiproxy-admission

csiproxy-sanity: deps $(FENCEPROOF) ## csi-proxy conformance vs the simulated Windows host, and every fault-injected host fails its rule (CSIPROXY_ENDPOINT=unix:///dir for another host)
	$(FENCEPROOF) csiproxy-sanity --reports $(REPORTS) $(if $(CSIPROXY_ENDPOINT),--endpoint $(CSIPROXY_ENDPOINT)) $(CSIPROXY_FLAGS)
ifeq ($(CSIPROXY_ENDPOINT),)
	$(GO) test -count=1 -timeout 10m -run 'TestEveryFaultFailsExactlyItsRules|TestUnknownCodeWarns|TestSimulatedHostConforms' ./csiproxy/conformance/
endif

csiproxy-fuzz: ## fuzz the csi-proxy restriction validator, CSIPROXY_FUZZTIME (10s) per target; corpora in csiproxy/restrict/testdata/fuzz
	@GO="$(GO)" mk/fuzz.sh $(CSIPROXY_FUZZTIME) $(addprefix ./csiproxy/restrict/:,$(CSIPROXY_FUZZ))

csiproxy-windows: ## compile fenceproof for Windows (the npipe:// endpoint of csiproxy-sanity; it cannot run here)
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./cmd/fenceproof

e2e-csiproxy-admission: ## the csi-proxy pipe admission policy on kind: 16 pod shapes and an ephemeral container by server-side dry-run (CSIPROXY_ADMISSION_KUBECONFIG=path for any cluster)
ifneq ($(CSIPROXY_ADMISSION_KUBECONFIG),)
	@mkdir -p $(REPORTS)
	$(GO) test -count=1 -timeout 15m -v ./suites/csiproxyadmission -args --kubeconfig=$(abspath $(CSIPROXY_ADMISSION_KUBECONFIG)) \
	  -ginkgo.v -ginkgo.junit-report=$(abspath $(REPORTS))/e2e-csiproxyadmission-junit.xml
else
	@fixtures/cluster/cluster.sh e2e csiproxyadmission
endif
