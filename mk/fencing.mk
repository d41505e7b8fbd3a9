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
