"""Same input, same bytes, on every supported Python (issue 27).

`scripts/other_pythons.sh` (run by `.ci/run`) installs the project into a virtual environment for
each other CPython >= 3.10 the machine has and names their interpreters in
`KUBEGAP_OTHER_PYTHONS` (separated by the path separator); this test lints examples/ and
../shared/corpus in JSON and SARIF with this interpreter and with each of those, and compares
the bytes. Without the variable it is skipped: no other Python was prepared.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import CORPUS, REPO, SHARED, requires_shared

pytestmark = pytest.mark.slow

OTHERS = [p for p in os.environ.get("KUBEGAP_OTHER_PYTHONS", "").split(os.pathsep) if p]

RUNS = [
    pytest.param("examples", ["--no-estimate", "examples/"], id="examples"),
    pytest.param("corpus", ["--sarif-root", str(SHARED), str(CORPUS)], id="corpus", marks=requires_shared),
]


def _lint(python: str, output: str, args: list[str]) -> tuple[int, bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PYTHONPATH")}
    done = subprocess.run([python, "-m", "kubegap_lint", "--format", output, *args], cwd=REPO, env=env,
                          capture_output=True, timeout=600)
    return done.returncode, done.stdout


@pytest.mark.skipif(not OTHERS, reason="KUBEGAP_OTHER_PYTHONS names no other Python (scripts/other_pythons.sh sets it)")
@pytest.mark.parametrize("output", ["json", "sarif"])
@pytest.mark.parametrize("name,args", RUNS)
def test_every_python_writes_the_same_bytes(name: str, args: list[str], output: str) -> None:
    code, expected = _lint(sys.executable, output, args)
    assert code == 1 and expected  # both inputs have findings
    for python in OTHERS:
        other_code, other = _lint(python, output, args)
        assert (other_code, other) == (code, expected), f"{python} differs on {name} ({output})"
