"""The fast word splitter must give exactly shlex.split's words, and its errors."""

from __future__ import annotations

import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.workloads.shellwords import split


def _outcome(function, text: str) -> tuple[str, object]:
    try:
        return "words", function(text)
    except ValueError as exc:
        return "error", str(exc)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="ab \t\r\n'\"\\$=;#\x0b\u00e9", max_size=24))
def test_agrees_with_shlex_on_shell_punctuation(text: str) -> None:
    assert _outcome(split, text) == _outcome(shlex.split, text)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=40))
def test_agrees_with_shlex_on_any_text(text: str) -> None:
    assert _outcome(split, text) == _outcome(shlex.split, text)


def test_real_launcher_line() -> None:
    text = ("torchrun --nnodes=${NNODES} --rdzv_endpoint=\"${MASTER_ADDR}:29500\" train.py "
            "--name 'run one' --note \"a \\\"b\\\" \\c\" \\\n  --bf16 ''")
    assert split(text) == shlex.split(text)
    assert split(text)[-1] == ""
