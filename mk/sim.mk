# Simulator (sim/): a fixed DR rehearsal and the simulator benchmark.
#
# make rehearse runs, in order: every scenario in fixtures/scenarios with
# every policy (each must give the verdict its file expects), 500 random
# fault schedules against the safe policy (must find nothing), 100 against
# the seed design (its findings, minimized, go to reports/sim-explore-seed.txt),
# and the comparison of all policies over the scenarios plus 200 random
# schedules (reports/sim-compare.{md,txt,svg,html}). Seed: SIM_SEED (1).

SIM_SCENARIOS ?= fixtures/scenarios
SIM_SEED      ?= 1
SIM_POLICIES  := seed rook mhc-only rook-oos never safe

BENCH_TARGETS += bench-sim
# The rehearsal takes seconds and checks the CLI end to end against every
# scenario's expected verdicts, so `make test` runs it too.
TEST_TARGETS += rehearse

.PHONY: rehearse bench-sim
rehearse: $(FENCEPROOF) ## DR rehearsal: scenarios x policies, explore, compare (reports/sim-*)
	@mkdir -p $(REPORTS); fail=0; \
	for s in $(sort $(wildcard $(SIM_SCENARIOS)/*.yaml)); do \
	  for p in $(SIM_POLICIES); do \
	    out=$$($(FENCEPROOF) sim run $$s --policy $$p --seed $(SIM_SEED) --quiet --reports $(REPORTS)); rc=$$?; \
	    printf '%-28s %-9s %s\n' "$$(basename $$s .yaml)" "$$p" "$$(echo "$$out" | grep -m1 '^# verdict' | sed 's/^# //')"; \
	    if [ $$rc -ne 0 ]; then echo "$$out" | grep -E '^# (UNEXPECTED|violation)'; fail=1; fi; \
	  done; \
	done; \
	$(FENCEPROOF) sim explore --policy safe --runs 500 --seed $(SIM_SEED) --reports $(REPORTS) > $(REPORTS)/sim-explore-safe.txt || { tail -40 $(REPORTS)/sim-explore-safe.txt; fail=1; }; \
	tail -1 $(REPORTS)/sim-explore-safe.txt; \
	$(FENCEPROOF) sim explore --policy seed --runs 100 --seed $(SIM_SEED) --reports $(REPORTS) > $(REPORTS)/sim-explore-seed.txt; \
	tail -1 $(REPORTS)/sim-explore-seed.txt; \
	$(FENCEPROOF) sim compare --random 200 --seed $(SIM_SEED) --scenarios $(SIM_SCENARIOS) --reports $(REPORTS) || fail=1; \
	exit $$fail

bench-sim: ## simulator events/s and wall time of a 1,000-node x 10-OSD, 30-simulated-day run
	@$(GO) test -run '^$$' -bench 'BenchmarkSim1000Nodes30Days' -benchtime 1x ./sim/ | \
	  awk '/^BenchmarkSim1000Nodes30Days/ { for (i = 2; i <= NF; i++) { if ($$i == "events/s") ev = $$(i-1); if ($$i == "wall-s/run") w = $$(i-1); if ($$i == "events/run") n = $$(i-1); if ($$i == "allocs/event") a = $$(i-1) } } \
	       END { if (ev == "") { print "bench-sim: benchmark did not run"; exit 1 } \
	             printf "bench-sim: 1,000 nodes x 10 OSDs, 30 simulated days with random failures: %d events in %.2f s wall = %.2fM events/s, %s allocs/event (goal >= 1M/s, < 10 s)\n", n, w, ev / 1e6, a }'
