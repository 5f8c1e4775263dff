#!/usr/bin/env bash
# Bounded fuzzing, for CI (.ci/run): the manifest mutator (tests/fuzz/mutate.py), the chart
# mutator (tests/fuzz/mutate_charts.py) and the node-by-node pass over the examples' nodes put to
# values of other types (mutate.py --nodes), SECONDS each (default 60), seeded from
# ../shared/corpus, ../shared/charts and examples/. Fails when any finds a failure (an exception,
# an internal error, a run without a report, a planted secret in the output) or a process peaks
# over 1 GiB. Failing inputs are kept in $ARTIFACTS (default: a new folder in the temp folder).
#   bash scripts/fuzz.sh 60
set -u
here="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
seed="${SEED:-$(date +%Y%m%d)}"  # a new seed a day: CI covers new inputs, a day's failure reproduces
python="${PYTHON:-python}"
artifacts="${ARTIFACTS:-$(mktemp -d "${TMPDIR:-/tmp}/kubegap-fuzz-XXXXXX")}"
mkdir -p "$artifacts" || exit 2  # a folder ARTIFACTS names need not exist yet
status=0
for harness in mutate mutate_charts nodes; do
  log="$artifacts/$harness.log"
  script="$harness" extra=""
  if [ "$harness" = nodes ]; then script=mutate extra=--nodes; fi
  "$python" "$here/tests/fuzz/$script.py" $extra --seconds "$seconds" --seed "$seed" \
    --artifacts "$artifacts/$harness" > "$log" 2>&1
  rc=$?
  summary="$(tail -1 "$log")"
  echo "$harness (seed $seed): exit $rc: $summary"
  if ! "$python" - "$summary" <<'PY'
import json, sys
try:
    summary = json.loads(sys.argv[1])
except ValueError:
    sys.exit("no summary: the harness did not finish")
peaks = {k: v for k, v in summary.items() if k.startswith("peak_mib")}
over = {k: v for k, v in peaks.items() if v >= 1024}
if summary.get("failures") or over or not summary.get("inputs"):
    sys.exit(f"failures: {summary.get('failures')}, inputs: {summary.get('inputs')}, over 1 GiB: {over}")
PY
  then
    status=1
    grep -E "FAILED" "$log" | head -5
  fi
  [ "$rc" -eq 0 ] || status=1
done
[ "$status" -eq 0 ] || echo "fuzz: failing inputs in $artifacts"
exit "$status"
