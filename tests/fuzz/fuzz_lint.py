"""Coverage-guided fuzzing of the whole reading and reporting pipeline with atheris.

    pip install atheris
    python tests/fuzz/fuzz_lint.py -max_total_time=1800 -timeout=10 -rss_limit_mb=4096 \\
        /tmp/kubegap-fuzz-corpus tests/fuzz/seeds

Each input is written as a .yaml file and linted with every policy; see harness.check for
the promises checked. The first folder collects interesting inputs (keep it outside the
repository); the second holds the seeds (run `python tests/fuzz/make_seeds.py` first).
Not part of the test suite.
"""

from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import atheris  # noqa: E402

with atheris.instrument_imports():
    import kubegap_lint.catalog.functions  # noqa: F401
    import kubegap_lint.engine.evaluate  # noqa: F401
    import kubegap_lint.engine.run  # noqa: F401
    import kubegap_lint.input.parse  # noqa: F401
    import kubegap_lint.input.read  # noqa: F401
    import kubegap_lint.input.scan  # noqa: F401
    import kubegap_lint.report.jsonfmt  # noqa: F401
    import kubegap_lint.report.text  # noqa: F401
    import kubegap_lint.workloads.views  # noqa: F401

from kubegap_lint.config.settings import Settings  # noqa: E402
from kubegap_lint.engine.run import Linter  # noqa: E402
from tests.fuzz.harness import check  # noqa: E402

_LINTER = Linter(Settings(select=[p.id for p in Linter().catalog.policies]))
_FOLDER = tempfile.mkdtemp(prefix="kubegap-fuzz-")


def test_one_input(data: bytes) -> None:
    check(_LINTER, data, _FOLDER)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
