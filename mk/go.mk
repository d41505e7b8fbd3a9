# Unit tests of every package. Parts with tests that need more (root, a
# cluster) guard them themselves and skip with a reason.
GO_TEST_FLAGS ?= -count=1 -timeout 14m

TEST_TARGETS += test-go
.PHONY: test-go
test-go: ## go test ./... (every package)
	$(GO) test $(GO_TEST_FLAGS) ./...
