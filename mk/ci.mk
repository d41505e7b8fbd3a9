# CI on a machine that has never built fenceproof (.ci/cold): `.ci/run` on a
# fresh clone with the Go module and build caches, the cluster cache and
# Docker's data root all empty; per-phase times in reports/ci-cold.md.
.PHONY: ci-cold
ci-cold: ## CI as a new machine runs it: .ci/run on a fresh clone, every cache empty (root; ~40 min; CI_COLD_DOCKERD=stop if a dockerd runs)
	@.ci/cold
