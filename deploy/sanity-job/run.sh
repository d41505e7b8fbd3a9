#!/usr/bin/env bash
# run.sh OVERLAY [REPORTS]: the fence conformance suite as a Kubernetes Job, for CI.
#
#   IMAGE=registry.example.com/qa/fenceproof:v1.2.3 deploy/sanity-job/run.sh my-overlay reports/
#
# 1. Renders OVERLAY (a kustomization whose base is deploy/sanity-job/base) with
#    `kubectl kustomize`; IMAGE sets the image and NAMESPACE the namespace (created if
#    missing) without editing it.
# 2. Deletes an earlier Job of the same name, applies, and waits until the Job completes
#    or fails (TIMEOUT seconds, default 1800). A pod that cannot start (the image is not
#    on the node, a Secret or ConfigMap is missing, the plugin directory does not exist)
#    fails the run at once, with the reason, instead of waiting for the deadline.
# 3. Saves the Job's log to REPORTS/job.log (default reports/) and extracts from it the
#    reports the Job printed there (fenceproof log-reports): sanity-junit.xml,
#    sanity.{html,json,md}.
# 4. Gates on the JUnit: exits with the suite's status (0 CONFORMS, 1 DOES NOT CONFORM,
#    2 bad flags or config, 3 INCOMPLETE, 4 UNREACHABLE), or 1 when the suite exited 0
#    but its JUnit holds a failure or an error, or has no test case; 125 when the Job
#    did not run to an exit status (a pod that cannot start, the deadline, a timeout)
#    or its reports could not be fetched.
#
# Needs kubectl (its kustomize), awk, base64, tar with gzip, GNU realpath. KUBECTL
# names another kubectl; KUBECONFIG and the current context pick the cluster.
set -euo pipefail

KUBECTL="${KUBECTL:-kubectl}"
TIMEOUT="${TIMEOUT:-1800}"
# A pod's mount failing this long is not the kubelet catching up: give up.
MOUNT_GRACE="${MOUNT_GRACE:-60}"

log() { printf 'run.sh: %s\n' "$*" >&2; }
# kc is kubectl against the cluster; no call waits on an API server for long.
kc() { "$KUBECTL" --request-timeout=30s "$@"; }
die() { log "$*"; exit 125; }

# extract_reports DIR: reads a Job's log on stdin and unpacks into DIR the last
# archive fenceproof log-reports printed in it; fails when there is none.
extract_reports() {
  local b64
  b64=$(awk '/^===== fenceproof reports: / { buf = ""; on = 1; next }
             /^===== end of fenceproof reports =====$/ { if (on) last = buf; on = 0; next }
             on { buf = buf $0 "\n" }
             END { printf "%s", last }')
  [[ -n "$b64" ]] || return 1
  mkdir -p "$1"
  base64 -d <<< "$b64" | tar -xzf - -C "$1"
}

# job_of FILE: "NAME NAMESPACE" of the first Job in kustomize's output (whose
# layout is fixed: top-level keys at column 0, metadata's fields at 2).
job_of() {
  awk '/^---$/ { if (kind == "Job") exit; kind = name = ns = ""; meta = 0; next }
       /^kind: / { kind = $2 }
       /^metadata:$/ { meta = 1; next }
       /^[^ ]/ { meta = 0 }
       meta && /^  name: / { name = $2 }
       meta && /^  namespace: / { ns = $2 }
       END { if (kind == "Job") print name, ns }' "$1"
}

# junit_gate FILE CODE: prints the JUnit's counts and failed rules; returns the
# status run.sh exits with.
junit_gate() {
  local junit=$1 code=$2 root tests failures errors failed
  if [[ ! -s "$junit" ]]; then
    log "no JUnit report ($junit): the suite did not run to its end (exit $code)"
    (( code != 0 )) && return "$code" || return 1
  fi
  root=$(grep -o '<testsuites[^>]*>' "$junit" | head -n1 || true)
  tests=$(sed -n 's/.* tests="\([0-9]*\)".*/\1/p' <<< "$root")
  failures=$(sed -n 's/.* failures="\([0-9]*\)".*/\1/p' <<< "$root")
  errors=$(sed -n 's/.* errors="\([0-9]*\)".*/\1/p' <<< "$root")
  # Each failed case by its rule ID ([ERR-003]); Ginkgo marks it with status.
  failed=$(grep -o '<testcase [^>]*>' "$junit" | grep -vE 'status="(passed|skipped|pending)"' |
    grep -oE '\[[A-Z][A-Z0-9]*-[0-9]{3}\]' | tr -d '[]' | sort -u | tr '\n' ' ' || true)
  log "JUnit $junit: ${tests:-?} tests, ${failures:-?} failures, ${errors:-?} errors${failed:+; failed: $failed}"
  if [[ "${GITHUB_ACTIONS:-}" == true ]]; then
    for id in $failed; do echo "::error title=fenceproof sanity $id::rule $id failed (reports: $junit)"; done
  fi
  if (( code != 0 )); then return "$code"; fi
  if [[ -z "$tests" || "$tests" == 0 || "${failures:-1}" != 0 || "${errors:-1}" != 0 ]]; then
    log "the suite exited 0 but its JUnit does not show a clean run: failing the gate"
    return 1
  fi
  return 0
}

# describe_failure NS POD: what to look at when a pod does not run.
describe_failure() {
  kc -n "$1" describe pod "$2" 2> /dev/null | tail -n 25 >&2 || true
}

main() {
  local overlay=${1:?usage: run.sh OVERLAY [REPORTS]} reports=${2:-reports}
  [[ -f "$overlay/kustomization.yaml" || -f "$overlay/kustomization.yml" || -f "$overlay/Kustomization" ]] ||
    die "$overlay: no kustomization.yaml"
  local rendered ns job
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT   # global: the trap runs after main returns
  if [[ -n "${IMAGE:-}" || -n "${NAMESPACE:-}" ]]; then
    # kustomize takes no absolute paths: a wrapper overlay names OVERLAY relatively.
    mkdir "$work/run"
    {
      echo "resources: [$(realpath --relative-to="$work/run" "$overlay")]"
      [[ -z "${NAMESPACE:-}" ]] || echo "namespace: $NAMESPACE"
      if [[ -n "${IMAGE:-}" ]]; then
        local name=${IMAGE%@*} tag="" digest=""
        [[ "$IMAGE" != *@* ]] || digest=${IMAGE#*@}
        if [[ -z "$digest" && "${name##*/}" == *:* ]]; then tag=${name##*:}; name=${name%:*}; fi
        echo "images: [{name: fenceproof, newName: \"$name\"${tag:+, newTag: \"$tag\"}${digest:+, digest: \"$digest\"}}]"
      fi
    } > "$work/run/kustomization.yaml"
    overlay="$work/run"
  fi
  rendered="$work/rendered.yaml"
  "$KUBECTL" kustomize "$overlay" > "$rendered" || die "kubectl kustomize $1 failed"
  read -r job ns < <(job_of "$rendered") || true
  [[ -n "${job:-}" ]] || die "$1 renders no Job"
  ns=${ns:-$(kc config view --minify -o jsonpath='{..namespace}')}
  ns=${ns:-default}
  local image
  image=$(grep -m1 -E '^ +image: ' "$rendered" | awk '{print $2}')
  [[ "$image" == *[:@]* ]] || die "the Job's image is \"$image\" without a tag: set IMAGE=REGISTRY/fenceproof:VERSION (make image prints it) or images: in $1"

  kc get namespace "$ns" > /dev/null 2>&1 || kc create namespace "$ns" > /dev/null
  kc -n "$ns" delete job "$job" --ignore-not-found --wait=true > /dev/null
  kc apply -f "$rendered" > /dev/null
  log "Job $ns/$job (image $image) applied; waiting up to ${TIMEOUT}s"

  local t0 state="" pod="" waiting mount_since="" conds
  t0=$(date +%s)
  while :; do
    conds=$(kc -n "$ns" get job "$job" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
    case " $conds " in
      *" Complete "*) state=complete; break ;;
      *" Failed "*) state=failed; break ;;
    esac
    pod=$(kc -n "$ns" get pods -l "job-name=$job" --sort-by=.metadata.creationTimestamp \
      -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | tail -n1)
    if [[ -n "$pod" ]]; then
      waiting=$(kc -n "$ns" get pod "$pod" -o jsonpath='{range .status.containerStatuses[*]}{.state.waiting.reason}{" "}{.state.waiting.message}{end}')
      case "$waiting" in
        ErrImageNeverPull* | ErrImagePull* | ImagePullBackOff* | InvalidImageName* | CreateContainerConfigError* | CreateContainerError*)
          describe_failure "$ns" "$pod"
          die "pod $pod cannot start: $waiting" ;;
      esac
      if kc -n "$ns" get events --field-selector "involvedObject.name=$pod,reason=FailedMount" -o name 2> /dev/null | grep -q .; then
        mount_since=${mount_since:-$(date +%s)}
        if (( $(date +%s) - mount_since > MOUNT_GRACE )); then
          describe_failure "$ns" "$pod"
          die "pod $pod cannot mount its volumes (the plugin directory on node $(kc -n "$ns" get pod "$pod" -o jsonpath='{.spec.nodeName}'), the Secret, the ConfigMap)"
        fi
      fi
    fi
    (( $(date +%s) - t0 < TIMEOUT )) || die "the Job did not finish within ${TIMEOUT}s (TIMEOUT)"
    sleep 3
  done
  pod=$(kc -n "$ns" get pods -l "job-name=$job" --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | tail -n1)
  [[ -n "$pod" ]] || die "Job $job $state, but it has no pod (${conds})"

  mkdir -p "$reports"
  kc -n "$ns" logs "$pod" > "$reports/job.log" || die "kubectl logs $pod failed"
  local code
  code=$(kc -n "$ns" get pod "$pod" -o jsonpath='{.status.containerStatuses[?(@.name=="sanity")].state.terminated.exitCode}')
  [[ -n "$code" ]] || { describe_failure "$ns" "$pod"; die "Job $job $state (${conds}) without an exit status of the suite"; }
  extract_reports "$reports" < "$reports/job.log" || die "the Job's log ($reports/job.log) holds no reports archive"
  log "Job $ns/$job $state on node $(kc -n "$ns" get pod "$pod" -o jsonpath='{.spec.nodeName}'): exit $code, $(grep -m1 '^verdict: ' "$reports/job.log" || echo 'no verdict line'); reports in $reports: $(cd "$reports" && ls | tr '\n' ' ')"
  junit_gate "$reports/sanity-junit.xml" "$code"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; fi
