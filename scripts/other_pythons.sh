#!/usr/bin/env bash
# Every other CPython >= 3.10 on this machine (pyenv's, and python3.X on PATH): install the
# project as the README says, lint the shipped examples, run a representative subset of the
# tests (parsing, views, every rule's examples, every output format, Helm in-process), then
# compare the JSON and SARIF of examples/ and ../shared/corpus with the default Python's,
# byte for byte (tests/test_cross_python.py). A version that is present and fails, fails.
# Run by .ci/run after scripts/test.sh, which made .venv with the default Python.
set -euo pipefail
cd "$(dirname "$0")/.."

default_python=".venv/bin/python"
if [ ! -x "$default_python" ]; then
  echo "scripts/other_pythons.sh: run scripts/test.sh first (it makes .venv)" >&2
  exit 2
fi
default_version=$("$default_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

# Candidates: pyenv's versions, then python3.X on PATH; the first of each X.Y is kept.
candidates=()
if command -v pyenv >/dev/null 2>&1; then
  root=$(pyenv root)
  while read -r version; do
    [ -x "$root/versions/$version/bin/python" ] && candidates+=("$root/versions/$version/bin/python")
  done < <(pyenv versions --bare --skip-aliases 2>/dev/null || true)
fi
for minor in 10 11 12 13 14 15 16; do
  found=$(command -v "python3.$minor" 2>/dev/null || true)
  [ -n "$found" ] && candidates+=("$found")
done

declare -A chosen=()
order=()
for python in "${candidates[@]}"; do
  version=$("$python" -c 'import sys, platform
if platform.python_implementation() == "CPython" and sys.version_info >= (3, 10):
    print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
  if [ -n "$version" ] && [ "$version" != "$default_version" ] && [ -z "${chosen[$version]:-}" ]; then
    chosen[$version]=$python
    order+=("$version")
  fi
done

if [ ${#order[@]} -eq 0 ]; then
  echo "scripts/other_pythons.sh: no CPython >= 3.10 besides $default_version found; nothing more to test"
  exit 0
fi

subset=(tests/test_parse.py tests/test_portability.py tests/test_positions.py tests/test_views.py
        tests/test_examples.py tests/test_json_report.py tests/test_sarif_json.py
        tests/test_github_format.py tests/test_helm_engine.py)
interpreters=()
for version in "${order[@]}"; do
  python=${chosen[$version]}
  venv=".venv-$version"
  echo "== Python $version ($python)"
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  # The README's first command, on this Python (the test extra adds pytest, hypothesis, the engine).
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check '.[test]'
  set +e
  "$venv/bin/kubegap-lint" --no-estimate examples/ >/dev/null
  code=$?
  set -e
  if [ "$code" -ne 1 ]; then  # the examples are meant to produce findings
    echo "scripts/other_pythons.sh: Python $version: kubegap-lint examples/ exited $code, not 1" >&2
    exit 1
  fi
  # The tests import the checkout (the working folder comes first on sys.path).
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "${subset[@]}"
  interpreters+=("$PWD/$venv/bin/python")
done

KUBEGAP_OTHER_PYTHONS=$(IFS=:; echo "${interpreters[*]}") \
  "$default_python" -m pytest -q -p no:cacheprovider tests/test_cross_python.py
echo "scripts/other_pythons.sh: tested Python $default_version (the suite) and ${order[*]} (the subset, byte-identical output)"
