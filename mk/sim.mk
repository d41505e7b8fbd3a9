# Simulator (sim/): a fixed DR rehearsal and the simulator benchmark.
#
# make rehearse runs, in order: every scenario in fixtures/scenarios with
# every policy (each must give the verdict its file expects), 500 random
# fault schedules against the safe policy (must break no safety invariant;
# liveness it cannot always keep), 100 against
# the seed design (its findings, minimized, go to reports/sim-explore-seed.txt),
# and the comparison of all policies over the scenarios plus 200 random
# schedules (reports/sim-compare.{md,txt,svg,html}). Seed: SIM_SEED (1).

SIM_SCENARIOS ?= fixtures/scenarios
SIM_SEED      ?= 1
SIM_POLICIES  := seed rook mhc-only rook-oos csi-oos never safe

BENCH_TARGETS += bench-sim
# The rehearsal takes seconds and checks the CLI end to end against every
# scenario's expected verdicts, so `make test` runs it too.
TEST_TARGETS += rehearse

.PHONY: rehearse bench-sim calibrate
rehearse: $(FENCEPROOF) ## DR rehearsal: scenarios x policies, explore, compare (reports/sim-*)
	@mkdir -p $(REPORTS); fail=0; \
	for s in $(sort $(wildcard $(SIM_SCENARIOS)/*.yaml)); do \
	  for p in $(SIM_POLICIES); do \
	    out=$$($(FENCEPROOF) sim run $$s --policy $$p --seed $(SIM_SEED) --quiet --reports $(REPORTS)); rc=$$?; \
	    printf '%-28s %-9s %s\n' "$$(basename $$s .yaml)" "$$p" "$$(echo "$$out" | grep -m1 '^# verdict' | sed 's/^# //')"; \
	    if [ $$rc -ne 0 ]; then echo "$$out" | grep -E '^# (UNEXPECTED|violation)'; fail=1; fi; \
	  done; \
	done; \
	$(FENCEPROOF) sim explore --policy safe --safety --runs 500 --seed $(SIM_SEED) --reports $(REPORTS) > $(REPORTS)/sim-explore-safe.txt || { tail -40 $(REPORTS)/sim-explore-safe.txt; fail=1; }; \
	tail -1 $(REPORTS)/sim-explore-safe.txt; \
	$(FENCEPROOF) sim explore --policy seed --runs 100 --seed $(SIM_SEED) --reports $(REPORTS) > $(REPORTS)/sim-explore-seed.txt; \
	tail -1 $(REPORTS)/sim-explore-seed.txt; \
	$(FENCEPROOF) sim compare --random 200 --seed $(SIM_SEED) --scenarios $(SIM_SCENARIOS) --reports $(REPORTS) --quiet || fail=1; \
	$(FENCEPROOF) report-index --reports $(REPORTS); \
	exit $$fail

# bench-sim runs the 1,000-node benchmark of this checkout and of
# SIM_BENCH_BASE (main before PG-log recovery, lock breaks, eviction and
# the liveness bounds, afd0a6c) alternately
# in the same run, compares them with benchstat, and fails unless this
# checkout keeps >= 0.5x the base's events/s with < 0.05 allocs/event, and
# prints the events per simulated month of both. It then
# prints the simulated recovery time for 1 vs 10 TiB and 6 vs 12 OSDs, and
# the time the PGs take to map back onto the host when it returns three
# days later (the objects written meanwhile backfill onto it).
SIM_BENCH_BASE  ?= afd0a6c9d20d9a305cc9f45264127b95a774d606
SIM_BENCH_COUNT ?= 3
BENCHSTAT       := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

bench-sim: ## simulator speed vs SIM_BENCH_BASE (benchstat), allocs/event, recovery scaling
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	git archive $(SIM_BENCH_BASE) go.mod go.sum sim | tar -x -C $$tmp; \
	bench='-run ^$$ -bench ^BenchmarkSim1000Nodes30Days$$ -benchtime 1x -count 1'; \
	for i in $$(seq $(SIM_BENCH_COUNT)); do \
	  (cd $$tmp && $(GO) test $$bench ./sim/) | grep '^Benchmark' >> $$tmp/base.txt; \
	  $(GO) test $$bench ./sim/ | grep '^Benchmark' >> $$tmp/head.txt; \
	done; \
	echo "bench-sim: base $(SIM_BENCH_BASE) vs this checkout, $(SIM_BENCH_COUNT) alternating runs each"; \
	$(GO) run $(BENCHSTAT) base=$$tmp/base.txt head=$$tmp/head.txt; \
	awk 'function get(unit,   i) { for (i = 2; i < NF; i++) if ($$(i+1) == unit) return $$i } \
	     FNR == 1 { f++ } { ev[f] += get("events/s"); al[f] += get("allocs/event"); er[f] += get("events/run"); ws[f] += get("wall-s/run"); n[f]++ } \
	     END { if (n[1] == 0 || n[2] == 0) { print "bench-sim: benchmark did not run"; exit 1 } \
	           b = ev[1] / n[1]; h = ev[2] / n[2]; a = al[2] / n[2]; \
	           printf "bench-sim: 1,000 nodes x 10 OSDs, 2,000 clients, 30 simulated days: %.2fM events/s vs %.2fM at base = %.2fx; %.4f allocs/event (goal >= 0.5x, < 0.05)\n", h / 1e6, b / 1e6, h / b, a; \
	           printf "bench-sim: events per simulated month: %.1fM vs %.1fM at base (%.1fx: deltas recovered instead of whole replicas, blocked I/O, reservations, laggy grace, workloads), %.1f s vs %.1f s wall per run\n", er[2] / n[2] / 1e6, er[1] / n[1] / 1e6, er[2] / er[1], ws[2] / n[2], ws[1] / n[1]; \
	           if (h / b < 0.5 || a >= 0.05) exit 1 }' $$tmp/base.txt $$tmp/head.txt; \
	$(GO) test -run '^$$' -bench '^BenchmarkRecoveryScaling$$' -benchtime 1x ./sim/ | \
	  awk '/sim-recovery-min/ { split($$1, a, "/"); sub(/-[0-9]+$$/, "", a[2]); \
	    for (i = 2; i < NF; i++) { if ($$(i+1) == "sim-recovery-min") r = $$i; if ($$(i+1) == "sim-mapback-min") b = $$i } \
	    printf "bench-sim: one of 6 hosts lost (osd_max_backfills 1, 100 MB/s per OSD), %-13s recovery %6.1f min; back 3 days later, the changed objects backfill onto it: %6.1f min\n", a[2], r, b }'

# e2e-sim-shards proves the sharded exploration on the kind cluster: an
# Indexed Job (fixtures/sim-explore/job.yaml) runs 3 shards of
# `sim explore` in pods and `sim merge` of their output must equal one local
# process. It reuses (or creates) the cluster $(CLUSTER) and loads our
# images; SIM_IMAGE picks the image (default fenceproof:dev).
E2E_TARGETS += e2e-sim-shards
.PHONY: e2e-sim-shards
e2e-sim-shards: $(FENCEPROOF) ## sharded sim explore as an Indexed Job on kind, merged = one process (E2E_KUBECONFIG=path)
ifeq ($(E2E_KUBECONFIG),)
	@$(MAKE) --no-print-directory cluster
	@PATH="$$($(CLUSTER_SH) tools-dir):$$PATH" KUBECONFIG=$$($(CLUSTER_SH) kubeconfig) FENCEPROOF=$(FENCEPROOF) SHARDS=3 fixtures/sim-explore/run.sh
else
	@PATH="$$($(CLUSTER_SH) tools-dir):$$PATH" KUBECONFIG=$(E2E_KUBECONFIG) FENCEPROOF=$(FENCEPROOF) SHARDS=3 fixtures/sim-explore/run.sh
endif

.PHONY: report-index
report-index: $(FENCEPROOF) ## write reports/index.html: the verdicts first (failures leading), then every report file by producer
	@mkdir -p $(REPORTS); $(FENCEPROOF) report-index --reports $(REPORTS)

# calibrate runs the calibration experiments (sim/calibrate: host hang,
# hosts out and backfill, a second failure during backfill, mon quorum
# loss, a client blocklisted, a lock break, host-loss-2osd on four hosts of
# two OSDs, host-kill-5hosts-backfills2 and second-failure-5hosts-backfills2
# on five hosts, the held-out second-failure-4hosts-2osd) on a real Ceph
# (ceph/cluster: Debian's Pacific daemons, OSDs as CRUSH hosts on this
# machine; root), then judges the simulator on the new runs together with
# every checked-in one, runs the perturbed models and the replay of a kind
# fencing run, and writes reports/calibration.md with a plot per
# experiment (reports/calibration/*.svg) and the new timelines
# (CALIBRATE_SAVE/<experiment>/<started>.json;
# CALIBRATE_SAVE=fixtures/sim-calibration adds them to the checked-in ones).
# Exit 1 when the shipped model fails an experiment or a perturbed model
# passes them all. About 45 minutes; not part of make test (go test
# ./sim/calibrate/ runs the perturbations on the scripts played on the
# shipped model and holds the verdicts on the checked-in timelines). Run
# it through fp-heavy.
CALIBRATE_SAVE ?= $(REPORTS)/calibration
calibrate: ceph-deps ## the calibration experiments on a real Ceph (root), compared with the simulator: reports/calibration.md
	@why="$(ceph_ready)"; if [ -n "$$why" ]; then echo "calibrate: $$why"; exit 2; fi; \
	$(MAKE) --no-print-directory $(FENCEPROOF_CEPH) && mkdir -p $(REPORTS) && \
	  $(FENCEPROOF_CEPH) sim calibrate --run --save $(CALIBRATE_SAVE) --reports $(REPORTS)
