"""`kubegap-lint` as pip's console script runs it (`kubegap_lint.cli.entry:main`): the command
every benchmark times, as users, the pre-commit hook and the Action run it.

`python -m kubegap_lint` is not the same process: its `__main__` pauses the collector before any
import. Until 7c2a7ba the console script's exit walked every object a run had made, 35-40 ms of
a small chart's `kubegap-lint helm`, and no benchmark saw it because they all timed `-m`
(bench/RESULTS.md).
"""

from __future__ import annotations

import sys

ENTRY = "import sys; from kubegap_lint.cli.entry import main; sys.exit(main())"


def kubegap_lint(*args: str) -> list[str]:
    """The command line of `kubegap-lint ARGS` in this interpreter (PYTHONPATH picks the checkout)."""
    return [sys.executable, "-c", ENTRY, *args]
