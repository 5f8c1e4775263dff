"""The diagnostic scan (workloads/diagnostic.py) splits a script line by line, only as far as it
reads, and finds a shell's `-c` in one pass; it must answer as the plain version it replaced,
kept here as the reference, on any words (shells, options, scripts of glue, diagnostics and
work, separators, line continuations)."""

from __future__ import annotations

import fnmatch
import posixpath
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kubegap_lint.workloads import diagnostic

_PROGRAMS = ["sleep", "nvidia-smi", "*_perf", "nbody"]
_SEPARATORS = re.compile(r"\n|;|&&|\|\||\||&")


def _plain_segment(words: list[str], programs: list[str]) -> bool:
    while words and (words[0] in diagnostic._PREFIX or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0])):
        words = words[1:]
    if not words:
        return True
    program = posixpath.basename(words[0].strip("\"'()"))
    if program in diagnostic._GLUE or (program == "service" and words[1:2] in (["ssh"], ["sshd"])):
        return True
    if program == "tail" and "/dev/null" in words:
        return True
    if program in diagnostic._SHELLS and "-c" not in words:
        return False
    if program in diagnostic._SHELLS:
        script = words[words.index("-c") + 1] if words.index("-c") + 1 < len(words) else ""
        return _plain_script(script, programs)
    if program in diagnostic._WRAPPERS:
        payload = [posixpath.basename(w.strip("\"'()")) for w in words[1:]]
        return (any(fnmatch.fnmatchcase(p, g) for p in payload for g in programs)
                and not any(fnmatch.fnmatchcase(p, g) for p in payload for g in diagnostic._WORK))
    return any(fnmatch.fnmatchcase(program, g) for g in programs)


def _plain_script(script: str, programs: list[str]) -> bool:
    script = re.sub(r"\\\r?\n", " ", script)
    script = "\n".join(line for line in script.split("\n") if not line.lstrip().startswith("#"))
    seen = False
    for segment in _SEPARATORS.split(script):
        words = segment.split()
        if words:
            if not _plain_segment(words, programs):
                return False
            seen = True
    return seen


def _plain_command(words: list[str], programs: list[str]) -> bool:
    if not words:
        return False
    program = posixpath.basename(words[0].strip("\"'()"))
    if program in diagnostic._SHELLS:
        flags = [w for w in words[1:] if w.startswith("-")]
        if any("c" in f.lstrip("-") for f in flags if not f.startswith("--")):
            position = next(i for i, w in enumerate(words) if w.startswith("-") and "c" in w.lstrip("-")
                            and not w.startswith("--"))
            if words[position + 1:position + 2] == ["--"]:
                position += 1
            script = words[position + 1] if position + 1 < len(words) else ""
            return _plain_script(script, programs)
        return False
    return _plain_segment(list(words), programs)


_PIECES = st.sampled_from([
    "sh", "/bin/bash", "-/usr/local/bin/bash", "'bash'", "-c", "-ec", "-lc", "--c", "--norc", "-e", "-", "c",
    "echo hi", "sleep 10", "nvidia-smi -L", "all_reduce_perf -b 8", "python train.py", "mpirun nbody",
    "mpirun python x.py", "timeout 5 sleep 1", "tail -f /dev/null", "service ssh restart", "service nginx start", "X=1", "export A=2", "while true; do",
    "done", " ", "\n", ";", "&&", "||", "|", "&", "\\\n", "\\\r\n", "'", '"', "(", ")", "",
    "--", "# python x.py", "  #", "trap 'exit 0' TERM",
])
_WORDS = st.lists(st.lists(_PIECES, max_size=6).map("".join), max_size=5)


@settings(max_examples=400, deadline=None)
@given(_WORDS)
def test_command_scan_answers_as_the_plain_scan(words: list[str]) -> None:
    assert diagnostic.command_is_diagnostic(words, _PROGRAMS) == _plain_command(words, _PROGRAMS)
    assert diagnostic.command_is_diagnostic(tuple(words), tuple(_PROGRAMS)) == _plain_command(words, _PROGRAMS)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_script_scan_answers_as_the_plain_scan(script: str) -> None:
    assert diagnostic.script_is_diagnostic(script, _PROGRAMS) == _plain_script(script, _PROGRAMS)


def test_samples() -> None:
    # The cases the one-pass option search must keep: the shell's own word counts only once an
    # option after it has a `c`; a long option never does.
    cases = [
        (["bash", "-c", "sleep 1"], True), (["bash", "-ec", "nvidia-smi; echo ok"], True),
        (["bash", "--c", "sleep 1"], False), (["bash", "-e", "sleep 1"], False),
        (["-/usr/local/bin/bash", "-c", "sleep 1"], False), (["sh", "-c", "sleep 1 \\\n && python x.py"], False),
        (["sh", "-c", "echo a\\\nb | sleep 2"], True), (["sh", "-c"], False),
        # Starting the SSH daemon is glue; starting anything else is work we cannot see.
        (["/bin/sh", "-c", "service ssh restart;\nsleep infinity;\n"], True),
        (["bash", "-c", "service nginx start; sleep infinity"], False),
        (["bash", "-c", "service ssh start && python train.py"], False),
        # `--` ends the shell's options; a comment line runs nothing; `trap` only sets a handler.
        (["/bin/bash", "-c", "--", "while true; do sleep infinity; done;"], True),
        (["sh", "-c", "echo start\n# simulate the work\nsleep 600"], True),
        (["bash", "-c", "nvidia-smi; trap 'exit 0' TERM; sleep infinity & wait"], True),
        (["bash", "-c", "--", "python train.py"], False),
    ]
    for words, expected in cases:
        assert diagnostic.command_is_diagnostic(words, _PROGRAMS) is expected, words
        assert _plain_command(words, _PROGRAMS) is expected, words
