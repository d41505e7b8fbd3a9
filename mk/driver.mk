# Reference driver: its tests run with `make test` (go test ./...); root-only
# tests (nftables in private network namespaces, kill -9 durability with
# nftables) skip with a reason when not root.

BENCH_TARGETS += bench-driver
DRIVER_BENCHTIME ?= 3x

.PHONY: bench-driver test-driver run-driver
bench-driver: ## driver benchmarks: fence 10k (memory, nftables), list 100k, /8 as one set element
	@out=$$($(GO) test -run '^$$' -bench . -benchtime $(DRIVER_BENCHTIME) ./driver/... 2>/dev/null | grep '^Benchmark'); \
	echo "$$out"; \
	echo "$$out" | awk '{ n[$$1] = $$3 } \
	  END { for (k in n) { if (k ~ /Fence10k\/memory/) m = n[k]; if (k ~ /Fence10k\/nftables/) f = n[k]; if (k ~ /List100k/) l = n[k] } \
	        if (m && f) printf "ratio fence-10k nftables/memory: %.2f\n", f / m; \
	        if (m && l) printf "ratio list-100k / fence-10k (memory): %.2f\n", l / m }'

test-driver: ## only the driver's tests (verbose counts)
	$(GO) test -count=1 ./driver/...

run-driver: build ## run the reference driver (memory backend) on /tmp/fenceproof-driver.sock
	$(FENCEPROOF) driver --endpoint unix:///tmp/fenceproof-driver.sock --state /tmp/fenceproof-driver.db
