"""One check the property tests and the fuzzer share: lint some bytes, render every report,
and fail loudly if any promise of docs/robustness.md is broken.

Promises checked: no exception escapes; every finding and input error is on a line that exists
in the file; the JSON report parses; the text report holds no control character but new lines.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from typing import Any

_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def file_lines(data: bytes) -> int:
    """Lines as an editor counts them: \\n, \\r\\n and a lone \\r end a line."""
    from kubegap_lint.input.text import decode

    text, _ = decode(data)
    return len(re.split("\r\n|\r|\n", text)) if text else 1


def lint_bytes(linter: Any, data: bytes, folder: str) -> Any:
    """Lint data as a file named manifest.yaml in folder (the full path the CLI takes)."""
    path = os.path.join(folder, "manifest.yaml")
    with open(path, "wb") as handle:
        handle.write(data)
    return linter.lint_paths([path])


def check(linter: Any, data: bytes, folder: str | None = None) -> Any:
    """Lint and render; raise AssertionError when a promise is broken. Returns the result."""
    from kubegap_lint.report.jsonfmt import render_json
    from kubegap_lint.report.text import render_text

    if folder is None:
        with tempfile.TemporaryDirectory() as tmp:
            return check(linter, data, tmp)
    result = lint_bytes(linter, data, folder)
    lines = file_lines(data)
    for finding in result.findings:
        line = finding.location.line
        assert 1 <= line <= lines, f"{finding.rule_id} at line {line} of a {lines}-line file"
        assert finding.location.column >= 1
    for error in result.errors:
        assert error.line is None or 1 <= error.line <= lines, f"error at line {error.line}: {error.message}"
    text = render_text(result, params=linter.params)
    assert not _CONTROL.search(text), f"control character in text output: {text!r}"[:500]
    report = json.loads(render_json(result, linter.params))
    assert len(report["findings"]) == len(result.findings)
    assert result.exit_code(linter.settings.fail_on) in (0, 1, 2)
    return result
