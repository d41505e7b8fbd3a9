# CSI Proxy conformance (seed 003, csiproxy/; see csiproxy/README.md).
# `make csiproxy-sanity` runs the suite against the simulated Windows host
# (reports in REPORTS), then its self test (every exact fault of the
# simulated host's table fails exactly its rules, every hostile host fails
# a MUST rule) and the reference lane (the suite against csi-proxy v1.1.3's
# own server code under both profiles, compared with its checked-in verdict
# tables). CSIPROXY_SEED replays a run's draws (its seed is printed). CSIPROXY_ENDPOINT=unix:///dir runs the suite against a host
# serving there instead (CSIPROXY_FLAGS passes more flags, e.g.
# --kubelet-path, --escape-link). `make csiproxy-fuzz` runs each fuzz target
# of the restriction validator for CSIPROXY_FUZZTIME. make test runs the
# suite once for its reports (csiproxy-reports); its Go tests run in test-go.
CSIPROXY_ENDPOINT ?=
CSIPROXY_FLAGS    ?=
CSIPROXY_SEED     ?=
CSIPROXY_FUZZTIME ?= 10s
CSIPROXY_FUZZ     := FuzzPath FuzzSMBRemotePath FuzzISCSI FuzzPipe
CSIPROXY_ADMISSION_KUBECONFIG ?=

TEST_TARGETS += csiproxy-reports csiproxy-fuzz csiproxy-windows
E2E_TARGETS  += e2e-csiproxy-admission
.PHONY: csiproxy-sanity csiproxy-reports csiproxy-reference csiproxy-fuzz csiproxy-windows e2e-csiproxy-admission

csiproxy-reports: deps $(FENCEPROOF) ## csi-proxy conformance vs the simulated Windows host (or CSIPROXY_ENDPOINT): reports/csiproxy.*
	$(FENCEPROOF) csiproxy-sanity --reports $(REPORTS) $(if $(CSIPROXY_ENDPOINT),--endpoint $(CSIPROXY_ENDPOINT)) $(if $(CSIPROXY_SEED),--seed $(CSIPROXY_SEED)) $(CSIPROXY_FLAGS)

csiproxy-sanity: csiproxy-reports ## csiproxy-reports, then every fault-injected host fails exactly its rules, every hostile host a MUST rule, and the suite against csi-proxy's own code matches its verdict tables
ifeq ($(CSIPROXY_ENDPOINT),)
	$(GO) test -count=1 -timeout 10m -run 'TestEveryFaultFailsExactlyItsRules|TestEveryRuleHasAFault|TestUnknownCodeWarns|TestSimulatedHostConforms|TestRealisticBugsFail|TestLearningHostFails|TestEveryHostileHostFails|TestOrderLearningHostFails' ./csiproxy/conformance/
	$(GO) test -count=1 -timeout 10m ./csiproxy/reference/
endif

csiproxy-reference: ## the suite against csi-proxy v1.1.3's own server code (23 group versions, the disk group through a patched build) under both profiles, verbose; UPDATE=1 rewrites the verdict tables
	$(GO) test -count=1 -timeout 10m -v -run 'TestReferenceLane|TestSimulatedHostAcceptsWhatCSIProxyAccepts' ./csiproxy/reference/ $(if $(UPDATE),-args -update)

csiproxy-fuzz: ## fuzz the csi-proxy restriction validator (oracle: hostmodel's Win32 normalisation and NTFS upper-case table), CSIPROXY_FUZZTIME (10s) per target; corpora in csiproxy/restrict/testdata/fuzz and every drawn case
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
