"""Bounded reading (issue 19): time linear in the input and memory bounded per document, for any
line length, any number of values in a document and any template line; a file that changes
between its two readings is an input error.

The reproductions of the issue used hundreds of MB; here the limits are set small in the test
(the default values are in docs/robustness.md) and the inputs are sized so that main's
behaviour shows (a line held whole, a document composed whole) while the test stays light.
The real sizes are measured in bench/reading.py.
"""

from __future__ import annotations

import io
import os
import signal
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import EXAMPLES

GPU_JOB = (EXAMPLES / "KG201-training-checkpoint-volume" / "bad-job-no-volumes.yaml").read_text()
KG201_LINE = 9  # of GPU_JOB: its finding's line when it opens a file

KIB = 1024
MIB = 1024 * KIB


def rules_at(result) -> list[tuple[str, str, int]]:
    return sorted((os.path.basename(f.location.path), f.rule_id, f.location.line) for f in result.findings)


@contextmanager
def traced_peak() -> Iterator[list[int]]:
    """The peak of Python allocations inside the block (tracemalloc: deterministic, no timing)."""
    peak: list[int] = []
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


@contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """Fail instead of hanging. Not a speed test: the fixed code takes well under a second here
    and main's quadratic matching minutes; `re` checks for signals while it matches."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def small_limits(monkeypatch: pytest.MonkeyPatch, document_chars: int, block: int = 64 * KIB) -> None:
    from kubegap_lint.input import scan, stream

    monkeypatch.setattr(stream, "BLOCK_BYTES", block)
    monkeypatch.setattr(stream, "MAX_DOCUMENT_CHARS", document_chars, raising=False)  # the line bound
    monkeypatch.setattr(scan.split_documents, "__defaults__", (document_chars,))
    monkeypatch.setattr(scan.split_texts, "__defaults__", (document_chars,))  # as a lint reads


def read_lines(data: bytes) -> tuple[list[str], list[int]]:
    from kubegap_lint.input.stream import source_lines

    bad: list[int] = []
    return list(source_lines(io.BytesIO(data), bad)), bad


# --- one long line: cut while it is read, never held whole ------------------------------------

def test_a_long_line_is_cut_to_the_document_limit_while_it_is_read(monkeypatch) -> None:
    # Issue: one 200 MB line took 14.6 s and 433 MB (the carried line was copied at every block).
    small_limits(monkeypatch, 256 * KIB)
    data = b"a: 1\n" + b"x" * (8 * MIB) + b"\r\nb: 2\n\xffc\n"
    with traced_peak() as peak:
        lines, bad = read_lines(data)
        longest = max(map(len, lines))
    assert [lines[0], lines[2], lines[3]] == ["a: 1\n", "b: 2\n", "\ufffdc\n"]
    assert len(lines) == 4 and bad == [4]  # line numbers after the long line are right
    # Kept: more than the limit (so its document is too large) and at most one block more.
    assert 256 * KIB < longest <= 256 * KIB + 64 * KIB + 1
    assert peak[0] < 3 * MIB, peak  # main: the whole 8 MiB line, twice


def test_the_lines_after_a_long_line_are_read_whole(monkeypatch) -> None:
    # What follows the dropped end of a long line is read like any lines. Here the long line
    # ends at the start of a block, so that block holds a whole line of 62 Ki characters and
    # the start of one of 220 Ki, under the limit, which goes on for three more blocks.
    small_limits(monkeypatch, 250 * KIB)
    data = b"x" * (1 * MIB + 4) + b"\n" + b"m" * (62 * KIB) + b"\n" + b"z" * (220 * KIB) + b"\nend\n"
    lines, bad = read_lines(data)
    assert [len(line) for line in lines[1:]] == [62 * KIB + 1, 220 * KIB + 1, 4] and not bad
    assert lines[2].startswith("z") and lines[3] == "end\n"


def test_one_emoji_does_not_make_the_long_line_four_times_larger(monkeypatch) -> None:
    # Issue: one emoji in 300 MB made the line a 4-byte-per-character string: 1.56 GB.
    small_limits(monkeypatch, 256 * KIB)
    data = "k: 🙂".encode() + b"x" * (8 * MIB) + "é\n🙂: ok\n".encode()
    with traced_peak() as peak:
        lines, bad = read_lines(data)
    assert lines[1:] == ["🙂: ok\n"] and not bad
    assert 256 * KIB < len(lines[0]) <= 256 * KIB + 64 * KIB + 1
    assert peak[0] < 4 * MIB, peak  # main: 8 Mi characters at 4 bytes each


def test_a_line_end_split_across_blocks_stays_one_line_end(monkeypatch) -> None:
    small_limits(monkeypatch, 40, block=7)
    data = b"a: 1\r\n" + b"y" * 100 + b"\r\n" + b"b: 2\r" + b"z" * 60 + b"\rc\n"
    lines, _ = read_lines(data)
    assert [line[:1] for line in lines] == ["a", "y", "b", "z", "c"]
    assert lines[2] == "b: 2\r" and lines[4] == "c\n"


def test_utf16_is_read_block_by_block_with_the_same_lines(monkeypatch) -> None:
    small_limits(monkeypatch, 1000, block=5)
    text = "a: 1\r\nb: é\n🙂: 3\n"
    for encoding in ("utf-16-le", "utf-16-be", "utf-32-le"):
        lines, bad = read_lines(("\ufeff" + text).encode(encoding))
        assert (lines, bad) == (["a: 1\r\n", "b: é\n", "🙂: 3\n"], []), encoding
    # A sequence that does not decode marks its line, as invalid UTF-8 does.
    lines, bad = read_lines("\ufeffa\n".encode("utf-16-le") + b"\x00\xd8b\x00\n\x00c\x00")
    assert lines[0] == "a\n" and lines[2] == "c" and bad == [2]


def test_a_sparse_file_with_no_line_end_is_one_refused_document(monkeypatch, linter_factory, tmp_path: Path) -> None:
    # Issue: a 2 GB sparse file (NUL bytes, no line end) was still growing at 120 s.
    small_limits(monkeypatch, 1 * MIB, block=1 * MIB)
    sparse = tmp_path / "sparse.yaml"
    with open(sparse, "wb") as handle:
        handle.truncate(48 * MIB)  # takes no disk
    (tmp_path / "job.yaml").write_text(GPU_JOB)
    linter = linter_factory(("KG007", "KG001", "KG201"))
    with traced_peak() as peak:
        result = linter.lint_paths([str(sparse), str(tmp_path / "job.yaml")])
    assert rules_at(result) == [("job.yaml", "KG201", KG201_LINE), ("sparse.yaml", "KG007", 1)]
    assert not result.errors and result.exit_code(linter.settings.fail_on) == 1
    assert peak[0] < 8 * MIB, peak  # main: the 48 MiB line, then its text


# --- one document of millions of values: refused before it is composed ------------------------

def test_a_document_of_too_many_values_is_refused_before_it_is_composed(monkeypatch, linter_factory) -> None:
    # Issue: one document just under 16 MiB of `x: [{},{},...]` (5.6 million values) took 3.6 GB.
    from kubegap_lint.input import limits

    monkeypatch.setattr(limits, "MAX_NODES", 10_000, raising=False)
    items = 200_000
    crowded = "x: [" + ",".join(["{}"] * items) + "]\n"
    linter = linter_factory(("KG007", "KG201"))
    with traced_peak() as peak:
        result = linter.lint_texts([("crowded.yaml", crowded + "---\n" + GPU_JOB)])
    # Values are counted in document order: the mapping, `x`, the list, then the `{}`s; the
    # finding is at the first value past the bound.
    column = len("x: [") + 3 * (10_001 - 3 - 1) + 1
    kg007 = [f for f in result.findings if f.rule_id == "KG007"]
    assert [(f.location.line, f.location.column) for f in kg007] == [(1, column)]
    assert kg007[0].message.startswith("this document holds more than 10,000 values; it is not linted")
    assert ("crowded.yaml", "KG201", KG201_LINE + 2) in rules_at(result)  # the rest is linted
    assert peak[0] < 16 * MIB, peak  # main: 200,000 values composed and walked, ~150 MB


def test_a_text_that_only_looks_crowded_is_counted_exactly_and_linted(monkeypatch, linter_factory) -> None:
    # Colons and commas inside a string pass the quick estimate; the exact count clears it.
    from kubegap_lint.input import limits

    monkeypatch.setattr(limits, "MAX_NODES", 1_000, raising=False)
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  k: '" + "a:b,c-d?" * 2_000 + "'\n"
            + "---\n" + GPU_JOB)
    result = linter_factory(("KG007", "KG201")).lint_texts([("busy.yaml", text)])
    assert rules_at(result) == [("busy.yaml", "KG201", KG201_LINE + 6)]
    assert result.stats.resources == 2


def test_the_value_estimate_never_undercounts() -> None:
    # The C-speed estimate must be an over-estimate, or a crowded document would be composed.
    from kubegap_lint.input.limits import may_hold_too_many_nodes, nodes_exceed
    from kubegap_lint.input.parse import _parser_class

    texts = ["{a,b,c,d}", "- - - -\n", "a:\n" * 9, "[[[[a]]]]", "? - a\n: b\n", "[a: b, c: d]",
             "- a: b\n  c:\n" * 5, "x: [" + ",".join(["{}"] * 30) + "]", "k: |\n  a\n  b\n", "{? , ? }"]
    for text in texts:
        exact = 0
        while nodes_exceed(_parser_class()(text), exact):
            exact += 1
        for limit in range(1, exact):
            assert may_hold_too_many_nodes(text, limit), (text, limit, exact)


# --- a long template line: the Helm mapping in time linear in its length ----------------------

LONG_TEMPLATE_LINES = {
    # Each of these took main's regular expressions quadratic time: 5 to 17 s at 20 KB.
    "value with a long run of spaces": "  k: v" + " " * 200_000 + "x",
    "key with a long run of spaces": "  k" + " " * 200_000 + "x",
    "unclosed actions": "{{ }}" + "}}" * 100_000 + "{{" * 100_000,
    "action with a long run of spaces": "{{ x" + " " * 200_000 + "y }}",
}


@pytest.mark.parametrize("case", sorted(LONG_TEMPLATE_LINES))
def test_a_200_kb_template_line_is_mapped_in_linear_time(case: str) -> None:
    # Issue: a 200 KB template line made Helm mapping take 92 s.
    from kubegap_lint.helm.marked import mark_template
    from kubegap_lint.helm.template_lines import locate, scan_template

    line = LONG_TEMPLATE_LINES[case]
    template = "kind: Job\nspec:\n" + line + "\n  parallelism: 2\n"
    with hang_guard(30):
        entries = scan_template(template.splitlines(True))
        marked = mark_template(template, 3)
        match = locate(template, "Job", 0, 1, ("spec", "parallelism"))
    assert (match.line, match.column, match.approximate) == (4, 3, False)
    assert marked.splitlines()[3] == "  parallelism: 2 #@kg3:4@"
    keys = [(e.line, e.key) for e in entries if e.kind == "key"]
    if case == "value with a long run of spaces":
        assert keys == [(1, "kind"), (2, "spec"), (3, "k"), (4, "parallelism")]
        assert entries[2].value == "v" + " " * 200_000 + "x"
    else:
        assert keys == [(1, "kind"), (2, "spec"), (4, "parallelism")]
