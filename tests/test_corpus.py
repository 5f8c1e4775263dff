"""Lint every manifest of the shared corpus: no crash, no traceback, sane findings."""

from __future__ import annotations

import json

from conftest import CORPUS, requires_shared, run_cli


@requires_shared
def test_corpus_lints_without_crashing() -> None:
    proc = run_cli("--format", "json", str(CORPUS))
    assert b"Traceback" not in proc.stderr
    assert b"internal error" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
    document = json.loads(proc.stdout)
    assert document["summary"]["files"] > 500
    assert document["summary"]["workloads"] > 300
    for finding in document["findings"]:
        assert finding["location"]["line"] >= 1
        assert finding["location"]["column"] >= 1
