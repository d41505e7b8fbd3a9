# Reference driver: its tests run with `make test` (go test ./...); root-only
# tests (nftables in private network namespaces, kill -9 durability with
# nftables) skip with a reason when not root.

BENCH_TARGETS += bench-driver
TEST_TARGETS  += fuzz-driver-short
DRIVER_BENCHTIME ?= 10x
# make fuzz-driver runs every fuzz target of the driver for FUZZTIME;
# fuzz-driver-short (in make test) runs each for DRIVER_SHORT_FUZZTIME.
FUZZTIME ?= 30s
DRIVER_SHORT_FUZZTIME ?= 3s
# package:target of every driver fuzz target; a finding is written to
# <package>/testdata/fuzz/<target>/ and fails the run (commit it with the fix).
DRIVER_FUZZ := ./driver:FuzzFenceRequest ./driver/cidr:FuzzParse ./driver/cidr:FuzzMinBits \
  ./driver/cidr:FuzzSetChange ./driver/store:FuzzRecord ./driver/store:FuzzBitFlip ./driver/store:FuzzOpen

.PHONY: bench-driver test-driver run-driver fuzz-driver fuzz-driver-short
bench-driver: ## driver benchmarks and its scale ratios (one run), memory under a 64 x 4 MB wrong-secret flood
	@out=$$($(GO) test -run '^$$' -bench . -benchtime $(DRIVER_BENCHTIME) ./driver/... 2>/dev/null | grep '^Benchmark'); \
	echo "$$out"; \
	echo "$$out" | awk '{ n[$$1] = $$3; for (i = 5; i < NF; i += 2) m[$$1 "|" $$(i+1)] = $$i } \
	  function get(pat,   k) { for (k in n) if (k ~ pat) return n[k]; return 0 } \
	  function metric(pat, unit,   k) { for (k in m) if (k ~ pat && k ~ ("\\|" unit "$$")) return m[k]; return 0 } \
	  END { m10 = get("Fence10k/memory"); f10 = get("Fence10k/nftables"); l = get("List100k"); \
	        e0 = get("FenceOne/memory/stored=0-"); e1 = get("FenceOne/memory/stored=100000"); \
	        n0 = get("FenceOne/nftables/stored=0-"); n1 = get("FenceOne/nftables/stored=100000"); \
	        cm = get("Concurrent50/memory"); cn = get("Concurrent50/nftables"); \
	        if (m10 && f10) printf "ratio fence-10k nftables/memory: %.2f\n", f10 / m10; \
	        if (m10 && l) printf "ratio list-100k / fence-10k (memory): %.2f (goal <= 2)\n", l / m10; \
	        if (e0 && e1) printf "ratio one-block fence, 100k stored / empty (memory): %.2f (goal <= 2)\n", e1 / e0; \
	        if (n0 && n1) printf "ratio one-block fence, 100k stored / empty (nftables): %.2f (goal <= 2)\n", n1 / n0; \
	        p = metric("Concurrent50Paired", "nft/mem-throughput"); \
	        if (p) printf "ratio 50-client throughput nftables/memory, interleaved: %.2f (goal >= 0.5)\n", p; \
	        if (cm && cn) printf "  (the same from two separate runs, skewed by load between them: %.2f)\n", cm / cn; \
	        r = metric("WrongSecretFlood", "peak-rss-MB"); h = metric("WrongSecretFlood", "peak-heap-MB"); b = metric("WrongSecretFlood", "base-rss-MB"); \
	        if (r) printf "memory under 64 concurrent 4 MB wrong-secret requests: peak RSS %.1f MB (%.1f MB before), peak Go heap %.1f MB\n", r, b, h }'

test-driver: ## only the driver's tests (verbose counts)
	$(GO) test -count=1 ./driver/...

run-driver: build ## run the reference driver (memory backend) on /tmp/fenceproof-driver.sock
	$(FENCEPROOF) driver --endpoint unix:///tmp/fenceproof-driver.sock --state /tmp/fenceproof-driver.db

fuzz-driver: ## fuzz every driver fuzz target (request validation, CIDR parsing, cidr.Set, state records and files) for FUZZTIME (30s) each
	@GO="$(GO)" mk/fuzz.sh $(FUZZTIME) $(DRIVER_FUZZ)

fuzz-driver-short: ## each driver fuzz target for DRIVER_SHORT_FUZZTIME (3s): a bounded run for make test
	@GO="$(GO)" mk/fuzz.sh $(DRIVER_SHORT_FUZZTIME) $(DRIVER_FUZZ)
