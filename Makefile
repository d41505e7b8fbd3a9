# fenceproof: the two commands a newcomer runs are `make sanity` and `make test`.
# Each part of the project adds its own targets in mk/*.mk; this file holds
# what they share and the aggregate targets.

SHELL      := /bin/bash
GO         ?= go
BIN        := bin
FENCEPROOF := $(BIN)/fenceproof
REPORTS    ?= reports
VERSION    ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
IS_ROOT    := $(shell [ "$$(id -u)" = 0 ] && echo 1)

export GOFLAGS ?= -buildvcs=false

# Parts append to these: TEST_TARGETS run by `make test`, BENCH_TARGETS by
# `make bench` (mk/bench-report.sh, which also writes reports/bench.md), E2E_TARGETS by `make e2e` (one line per kind suite, e.g.
# `E2E_TARGETS += e2e-fencing`: make e2e runs each target on one shared
# cluster with E2E_KUBECONFIG set, see fixtures/cluster/run-suites.sh);
# DEB_PACKAGES are installed by `make deps` (every target), E2E_DEB_PACKAGES
# only by `make e2e-deps`.
TEST_TARGETS     :=
BENCH_TARGETS    :=
E2E_TARGETS      :=
DEB_PACKAGES     :=
E2E_DEB_PACKAGES :=

include $(sort $(wildcard mk/*.mk))

.DEFAULT_GOAL := help
.PHONY: help build deps e2e-deps test bench e2e clean FORCE

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sort | \
	  awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

build: $(FENCEPROOF) ## build bin/fenceproof

$(FENCEPROOF): FORCE
	@mkdir -p $(BIN)
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $@ ./cmd/fenceproof

# apt_install installs the Debian packages in $(1) that are missing, only
# when root; without root it says what is missing and goes on.
define apt_install
	@missing=""; for p in $(sort $(1)); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$(IS_ROOT)" = 1 ]; then \
	    echo "deps: apt-get install$$missing"; \
	    (DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $$missing >/dev/null 2>&1 || \
	     (apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $$missing)) ; \
	  else echo "deps: not root, cannot install:$$missing (what needs them will skip or fail and say so)"; fi; \
	fi
endef

deps: ## install missing Debian packages (root) and Go modules
	$(call apt_install,$(DEB_PACKAGES))
	$(GO) mod download

e2e-deps: deps ## also install what the kind suites need (Docker, debootstrap, ...)
	$(call apt_install,$(E2E_DEB_PACKAGES))

test: deps $(TEST_TARGETS) ## run all tests (unit, nftables-in-netns, suite vs reference driver, simulator goldens)

bench: deps ## run every bench target once: ratios measured in one run, also written to $(REPORTS)/bench.md with the date and machine
	@MAKE="$(MAKE)" REPORTS="$(REPORTS)" GO="$(GO)" mk/bench-report.sh $(BENCH_TARGETS)

e2e: e2e-deps ## every kind suite on one cluster, built/created once (KEEP_CLUSTER=1, KUBECONFIG=path); per-suite summary
	@MAKE="$(MAKE)" fixtures/cluster/run-suites.sh $(E2E_TARGETS)

clean: ## remove build output and generated reports
	rm -rf $(BIN) $(REPORTS)/*.xml $(REPORTS)/*.html $(REPORTS)/*.md $(REPORTS)/*.json $(REPORTS)/*.svg
