#!/usr/bin/env bash
# Fuzz for SECONDS (default 1800) with atheris, restarting after each crash or timeout so one
# finding does not end the run. Crashing inputs go to $ARTIFACTS; the growing corpus to $CORPUS
# (both outside the repository by default). Sums the inputs tried from libFuzzer's last line.
#   bash tests/fuzz/run.sh 1800 > /tmp/kubegap-fuzz.log 2>&1
set -u
here="$(cd "$(dirname "$0")" && pwd)"
total="${1:-1800}"
corpus="${CORPUS:-/tmp/kubegap-fuzz-corpus}"
artifacts="${ARTIFACTS:-/tmp/kubegap-fuzz-artifacts}"
mkdir -p "$corpus" "$artifacts"
python "$here/make_seeds.py"
start=$(date +%s)
runs=0
execs=0
while :; do
  left=$(( total - ($(date +%s) - start) ))
  [ "$left" -le 5 ] && break
  runs=$((runs + 1))
  log="$artifacts/run-$runs.log"
  python "$here/fuzz_lint.py" -max_total_time="$left" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$artifacts/" "$corpus" "$here/seeds" > "$log" 2>&1
  rc=$?
  n=$(grep -aoE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  execs=$((execs + ${n:-0}))
  echo "run $runs: exit $rc, ${n:-0} inputs; $(grep -aE 'ERROR: libFuzzer|Uncaught|AssertionError' "$log" | head -2 | tr '\n' ' ')"
done
echo "fuzzed $(( $(date +%s) - start )) s in $runs runs: $execs inputs tried"
ls "$artifacts" | grep -vE '^run-' || true
