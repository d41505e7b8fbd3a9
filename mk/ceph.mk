# Fencing on a real Ceph (ceph/README.md): a single-node cluster from
# Debian's Pacific packages, started by the project (ceph/cluster) in a
# network namespace of its own. `make ceph-deps` installs its Debian packages
# as root (every target here that needs them runs it; `make sanity` does not).
CEPH_DIR ?= /run/fenceproof-ceph
CEPH_UP_FLAGS ?=

CEPH_DEB_PACKAGES := ceph-mon ceph-osd ceph-mgr ceph-common librados-dev

.PHONY: ceph-deps ceph-up ceph-status ceph-down
ceph-deps: deps ## install Ceph's Debian packages (Pacific: mon, osd, mgr, CLI, librados-dev) when root and missing
	$(call apt_install,$(CEPH_DEB_PACKAGES))

ceph-up: ceph-deps $(FENCEPROOF) ## start a single-node Ceph in CEPH_DIR and a private netns (CEPH_UP_FLAGS="--osds 3 --set key=value")
	$(FENCEPROOF) ceph up --dir $(CEPH_DIR) $(CEPH_UP_FLAGS)

ceph-status: $(FENCEPROOF) ## health of the Ceph in CEPH_DIR
	$(FENCEPROOF) ceph status --dir $(CEPH_DIR)

ceph-down: $(FENCEPROOF) ## stop the Ceph in CEPH_DIR: daemons, namespaces, directory
	$(FENCEPROOF) ceph down --dir $(CEPH_DIR)

# The Ceph backend and writer use go-ceph (cgo, librados-dev): they are
# built only with -tags ceph, into bin/fenceproof-ceph; the default binary,
# go build ./... and make sanity need no Ceph library.
FENCEPROOF_CEPH := $(BIN)/fenceproof-ceph
CEPH_TEST_FLAGS ?= -count=1 -timeout 20m

TEST_TARGETS += test-ceph
.PHONY: build-ceph test-ceph sanity-ceph

build-ceph: $(FENCEPROOF_CEPH) ## build bin/fenceproof-ceph: fenceproof with the Ceph backend and writer (cgo, librados-dev)

$(FENCEPROOF_CEPH): FORCE
	@mkdir -p $(BIN)
	$(GO) build -tags ceph -ldflags "-X main.version=$(VERSION)" -o $@ ./cmd/fenceproof

# ceph_ready is a shell expression: why the Ceph tests cannot run here, or
# nothing. It is evaluated when the recipe runs, after ceph-deps installed
# what it could (a make-time $(wildcard) could see the machine before).
ceph_ready = $$(if [ "$(IS_ROOT)" != 1 ]; then echo "they need root (network namespaces)"; \
  elif [ ! -e /usr/include/rados/librados.h ]; then echo "librados-dev is missing (make ceph-deps as root)"; fi)

test-ceph: ceph-deps ## the Ceph backend on a real single-node Ceph: sanity, enforcement with writers and the oracle, ranges and per-address, restart, bad input, faults (root)
	@why="$(ceph_ready)"; if [ -n "$$why" ]; then echo "SKIP test-ceph: $$why"; else \
	  $(MAKE) --no-print-directory $(FENCEPROOF_CEPH) && \
	  mkdir -p $(REPORTS) && log=$(REPORTS)/test-ceph.log && \
	  FP_CEPH_BIN=$(abspath $(FENCEPROOF_CEPH)) FP_CEPH_REPORTS=$(abspath $(REPORTS)) \
	    $(GO) test -tags ceph $(CEPH_TEST_FLAGS) -v ./driver/backend/ceph/ > $$log 2>&1; rc=$$?; \
	  grep -E '^(--- |    [a-z_]+\.go:[0-9]+: FIGURES|ok|FAIL|ceph: cluster up)' $$log; \
	  if [ $$rc -ne 0 ]; then echo "test-ceph failed; the end of $$log:"; grep -v '^time=' $$log | tail -60; fi; exit $$rc; fi

sanity-ceph: ceph-deps ## fenceproof sanity against fenceproof driver --backend ceph on a real single-node Ceph; reports in $(REPORTS)/sanity-ceph/ (root)
	@why="$(ceph_ready)"; if [ -n "$$why" ]; then echo "SKIP sanity-ceph: $$why"; else \
	  $(MAKE) --no-print-directory $(FENCEPROOF_CEPH) && \
	  FP_CEPH_BIN=$(abspath $(FENCEPROOF_CEPH)) FP_CEPH_REPORTS=$(abspath $(REPORTS)) \
	    $(GO) test -tags ceph $(CEPH_TEST_FLAGS) -v -run 'TestSanityOnCeph$$' ./driver/backend/ceph/ ; fi
