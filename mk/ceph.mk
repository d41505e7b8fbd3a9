# Fencing on a real Ceph (ceph/README.md): a single-node cluster from
# Debian's Pacific packages, started by the project (ceph/cluster) in a
# network namespace of its own. `make deps` installs the packages as root.
CEPH_DIR ?= /run/fenceproof-ceph
CEPH_UP_FLAGS ?=

DEB_PACKAGES += ceph-mon ceph-osd ceph-mgr ceph-common librados-dev

.PHONY: ceph-up ceph-status ceph-down
ceph-up: deps $(FENCEPROOF) ## start a single-node Ceph in CEPH_DIR and a private netns (CEPH_UP_FLAGS="--osds 3 --set key=value")
	$(FENCEPROOF) ceph up --dir $(CEPH_DIR) $(CEPH_UP_FLAGS)

ceph-status: $(FENCEPROOF) ## health of the Ceph in CEPH_DIR
	$(FENCEPROOF) ceph status --dir $(CEPH_DIR)

ceph-down: $(FENCEPROOF) ## stop the Ceph in CEPH_DIR: daemons, namespaces, directory
	$(FENCEPROOF) ceph down --dir $(CEPH_DIR)
