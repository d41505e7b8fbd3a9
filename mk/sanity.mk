# The conformance suite. `make sanity` runs it against the in-repo reference
# driver; `make sanity ENDPOINT=unix:///path.sock` against any driver.
# SANITY_FLAGS passes more flags, e.g. SANITY_FLAGS="--config fixtures/sanity/example.yaml".
ENDPOINT     ?=
SANITY_FLAGS ?=

.PHONY: sanity
sanity: deps $(FENCEPROOF) ## run the conformance suite (ENDPOINT=unix:///x.sock for your driver; default: the reference driver)
	$(FENCEPROOF) sanity --reports $(REPORTS) $(if $(ENDPOINT),--endpoint $(ENDPOINT)) $(SANITY_FLAGS)

BENCH_TARGETS += bench-sanity
.PHONY: bench-sanity
bench-sanity: ## wall time of the whole suite against the reference driver
	$(GO) test -run '^$$' -bench 'BenchmarkSuite' -benchtime 3x ./sanity/
