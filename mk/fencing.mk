# Storage-side fencing: the reference storage service (driver/refstore), the
# refstore driver backend and the write-audit oracle (internal/audit). Their
# tests run in `make test` through test-go (real loopback TCP and gRPC, no
# root needed); these targets run them alone and write demo reports.

.PHONY: test-fencing-core audit-demo
test-fencing-core: ## only the refstore, writer, refstore backend and oracle tests (race detector on)
	$(GO) test -race -count=1 ./driver/refstore/... ./driver/backend/refstore/ ./internal/audit/ ./driver/fault/

audit-demo: ## local fence/unfence against refstore, faithful and ack-before-enforce drivers; reports in $(REPORTS)/audit-local-*
	FP_AUDIT_REPORTS=$(abspath $(REPORTS)) $(GO) test -count=1 -run 'TestIntegration' ./internal/audit/
	@ls $(REPORTS)/audit-local-*.md

BENCH_TARGETS += bench-refstore
REFSTORE_BENCHTIME ?= 2s
.PHONY: bench-refstore
bench-refstore: ## refstore acknowledged (fsynced) writes/s with 1 and 8 sessions, and their ratio
	@out=$$($(GO) test -run '^$$' -bench BenchmarkWrites -benchtime $(REFSTORE_BENCHTIME) ./driver/refstore/ 2>/dev/null | grep '^Benchmark'); \
	echo "$$out"; \
	echo "$$out" | awk '{ for (i = 1; i < NF; i++) if ($$(i+1) == "writes/s") w[$$1] = $$i } \
	  END { for (k in w) { if (k ~ /sessions=1-/ || k ~ /sessions=1$$/) one = w[k]; if (k ~ /sessions=8/) eight = w[k] } \
	        if (one && eight) printf "ratio writes/s 8 sessions / 1 session: %.2f\n", eight / one }'
